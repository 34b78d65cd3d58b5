#pragma once
// The span vocabulary of what a Spark application had allocated, written by the span builder
// (listener/correlate/span_builder.cc) on spark.connect.operation.lifecycle and spark.application
// spans, and read by the trace view's cost model (traceview/attempt_cost.h). One place for the keys
// so that the producer and its readers cannot drift apart.

#include <cstddef>
#include <string_view>

namespace sparktrace::tracing {

// Executors. The count facts (the executor lane's) are older than the cost model and keep their keys.
inline constexpr std::string_view kExecutorsActiveAtStart = "spark.executors.active_at_start";  // int
inline constexpr std::string_view kExecutorCoresAtStart = "spark.executors.cores_at_start";     // int
inline constexpr std::string_view kExecutorAddedEvent = "spark.executor.added";
inline constexpr std::string_view kExecutorRemovedEvent = "spark.executor.removed";
// On those events: executors and their cores alive right after the change, and the one changed.
inline constexpr std::string_view kExecutorsActive = "spark.executors.active";            // int
inline constexpr std::string_view kExecutorCoresActive = "spark.executors.cores_active";  // int
inline constexpr std::string_view kExecutorCores = "spark.executor.cores";                // int

// Memory per executor and the driver's share, in bytes as Spark sizes the container: the heap
// (spark.*.memory) and the overhead (spark.*.memoryOverhead, else max(384 MiB, factor × heap)).
inline constexpr std::string_view kExecutorMemoryBytes = "spark.executor.memory_bytes";
inline constexpr std::string_view kExecutorMemoryOverheadBytes = "spark.executor.memory_overhead_bytes";
inline constexpr std::string_view kDriverCores = "spark.driver.cores";
inline constexpr std::string_view kDriverMemoryBytes = "spark.driver.memory_bytes";
inline constexpr std::string_view kDriverMemoryOverheadBytes = "spark.driver.memory_overhead_bytes";

// On a lifecycle span: the executor run time of the application's other tasks during the span (each
// stage's run time prorated to its overlap with the span), and how many other operations ran them.
inline constexpr std::string_view kOthersRunTimeMs = "spark.app.others_executor_run_time_ms";
inline constexpr std::string_view kOtherOperations = "spark.app.other_operations";

// On a stage span: Σ executor run time of its tasks.
inline constexpr std::string_view kStageExecutorRunTimeMs = "spark.stage.executor_run_time_ms";
// On a stage span: its successful tasks' durations as kStageDurationProfilePoints nearest-rank
// quantiles (q = 0, 0.05, … 1: the minimum first, the maximum last), as a string array of integers
// in ms; the what-if simulator (traceview/what_if_of_spans.h) rebuilds the stage's tasks from it.
inline constexpr std::string_view kStageTaskDurationProfile = "spark.stage.task_duration_ms.profile";
inline constexpr std::size_t kStageDurationProfilePoints = 21;

}  // namespace sparktrace::tracing
