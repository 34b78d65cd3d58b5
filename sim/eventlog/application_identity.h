#pragma once
// ApplicationIdentity: who the simulated Spark application is (the fields of its
// SparkListenerApplicationStart and LogStart) and when it starts.

#include <string>

#include "sim/eventlog/operation_plan.h"

namespace sparktrace::sim::eventlog {

struct ApplicationIdentity {
  std::string app_id = "spark-application-1735689600000";
  std::string app_name = "Spark Connect server";
  std::string user = "spark";
  // "3.5.0" and "3.5.1" write job tags with user and session swapped, as those releases did;
  // "4.x" adds the 4.0 fields (ExitCode, Peak On/Off Heap Execution Memory, jobGroupId).
  std::string spark_version = "4.0.0";
  EpochMillis start_ms = 1735689600000;  // 2025-01-01T00:00:00Z
};

// True for Spark 4 and later (fields only 4.0 writes).
bool IsSpark4OrLater(const std::string& spark_version);

}  // namespace sparktrace::sim::eventlog
