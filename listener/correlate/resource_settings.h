#pragma once
// ResourceSettings: what one executor and the driver are given, as Spark sizes them from the
// application's configuration (the EnvironmentUpdate's kept properties), for the cost model:
//
//   heap      spark.{executor,driver}.memory, read as Spark does (no suffix: MiB); Spark's default 1g
//   overhead  spark.{executor,driver}.memoryOverhead when set, else max(384 MiB, factor × heap) with
//             factor spark.{executor,driver}.memoryOverheadFactor (Spark 3.3+), else
//             spark.kubernetes.memoryOverheadFactor, else 0.10 (YARN and Kubernetes alike)
//   cores     spark.driver.cores, default 1 (executors report their own cores in ExecutorAdded)
//
// Off-heap memory (spark.memory.offHeap.size) and spark.executor.pyspark.memory, which a cluster
// manager adds to the container, are not counted.
//
// Pure functions of the model; thread-safe for concurrent readers of one model.

#include <cstdint>
#include <optional>

#include "listener/correlate/application_model.h"

namespace sparktrace::listener::correlate {

struct ResourceSettings {
  std::int64_t executor_memory_bytes = 0;
  std::int64_t executor_memory_overhead_bytes = 0;
  std::int64_t driver_cores = 1;
  std::int64_t driver_memory_bytes = 0;
  std::int64_t driver_memory_overhead_bytes = 0;
};

// nullopt when the log holds no configuration (no EnvironmentUpdate yet, or the REST feed): the
// defaults would then be a guess. A malformed value counts as not set (Spark would not have started).
std::optional<ResourceSettings> ResourceSettingsOf(const ApplicationModel& model);

// Whether the driver runs the tasks itself (local mode: its executor is listed as "driver"), so
// that its cores and memory are the executor's and must not be counted twice.
bool DriverIsExecutor(const ApplicationModel& model);

}  // namespace sparktrace::listener::correlate
