#pragma once
// ApplicationEventTotals: what an application's events add up to for the per-application metrics
// (feed_metrics.h), counted one event at a time as the feed applies them. A Spark Connect server
// runs for weeks and its model forgets finished jobs with their stage attempts
// (ApplicationModel::ForgetFinishedBefore), so task sums, counters, the task-duration histogram and
// peaks cannot be recomputed from the model's stage map: like ApplicationPhaseTotals, these keep
// counting whatever the model forgets.
//
// Which tasks count where (as TaskStatistics, task_statistics.h, does per stage attempt):
//   * successful tasks (Success, neither failed nor killed, with launch and finish times): the
//     duration histogram, and the p95 samples: "write" when the task reported output bytes or
//     records (Output Metrics), else "compute";
//   * every task that carried metrics: the time sums (run, CPU, GC, (de)serialization), output
//     bytes and spills;
//   * failed tasks (OutcomeOf == kFailed: not killed, not resubmitted): by whether their message
//     LooksLikeOutOfMemory.
// Stages: each StageCompleted counts, "failed" when it carries a failure reason; its read skew
// (largest / median bytes read by one successful task, input + shuffle read, as the data-skew rule
// measures it, for stages of at least 8 successful tasks whose largest task read 16 MiB, the
// rule's default gates) is taken then, once its tasks are in.
// Executors lost: ExecutorRemoved for any reason other than the driver's own removal (dynamic
// allocation or an explicit kill: "Executor killed by driver.", YARN's "explicit termination
// request", decommissioning for "spark scale down") and other than the application's shutdown
// (a removal at or after its ApplicationEnd); "out of memory" when the reason LooksLikeOutOfMemory
// (exit code 137/143, OOMKilled, OutOfMemoryError, container killed for memory).
//
// Memory is bounded per application: sums, counts, a fixed-bucket histogram and two
// DurationSamples for the p95, each exact up to kExactDurationLimit (100,000) successful tasks of
// its kind and a uniform reservoir of that many after (about 0.3% rank error): at most 2 × 800 KB.
//
// Not synchronised: the feed thread owns it with its model.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "listener/correlate/application_model.h"
#include "listener/correlate/task_statistics.h"
#include "listener/events/spark_event.h"

namespace sparktrace::feed {

// Upper bounds of spark_task_duration_seconds's buckets, in ms (0.1 s ... 1800 s; +Inf implied).
inline constexpr std::array<std::int64_t, 13> kTaskDurationBucketsMs = {
    100, 250, 500, 1'000, 2'500, 5'000, 10'000, 30'000, 60'000, 120'000, 300'000, 600'000, 1'800'000};

struct TaskDurationHistogram {
  // Tasks whose duration is at most the bound (cumulative, as Prometheus buckets are).
  std::array<std::uint64_t, kTaskDurationBucketsMs.size()> cumulative_counts{};
  std::uint64_t count = 0;  // every successful task: the +Inf bucket
  std::int64_t sum_ms = 0;
};

struct ApplicationEventCounts {
  std::uint64_t jobs_succeeded = 0;
  std::uint64_t jobs_failed = 0;
  std::uint64_t stages_completed = 0;
  std::uint64_t stages_failed = 0;
  std::uint64_t tasks_failed_out_of_memory = 0;
  std::uint64_t tasks_failed_other = 0;
  std::uint64_t executors_lost_out_of_memory = 0;
  std::uint64_t executors_lost_other = 0;
};

// Over the tasks that carried metrics.
struct TaskTimeSums {
  std::int64_t run_ms = 0;
  std::int64_t cpu_ns = 0;
  std::int64_t run_ms_with_cpu = 0;  // run time of the tasks that reported a CPU time (2.1+)
  std::int64_t gc_ms = 0;
  std::int64_t deserialize_ms = 0;
  std::int64_t result_serialization_ms = 0;
  std::int64_t output_bytes = 0;
  std::int64_t memory_spilled_bytes = 0;
  std::int64_t disk_spilled_bytes = 0;
};

class ApplicationEventTotals {
 public:
  // `event` has just been applied to `model`, which is read for what the event refers to (the
  // completed stage attempt's task statistics, the application's end).
  void Add(const listener::events::SparkEvent& event, const listener::correlate::ApplicationModel& model);

  const ApplicationEventCounts& counts() const { return counts_; }
  const TaskTimeSums& task_sums() const { return sums_; }
  const TaskDurationHistogram& task_durations() const { return histogram_; }
  // Durations (ms) of the successful tasks that wrote no output / wrote output.
  const listener::correlate::DurationSample& compute_task_durations() const { return compute_durations_; }
  const listener::correlate::DurationSample& write_task_durations() const { return write_durations_; }
  // The largest "Task Executor Metrics" JVMHeapMemory of any task; nullopt while none was above 0
  // (Spark writes zeros when the executor polled nothing during the task).
  std::optional<std::int64_t> peak_jvm_heap_bytes() const { return peak_jvm_heap_bytes_; }
  // The largest read skew of a completed stage attempt; nullopt before one read any bytes.
  std::optional<double> max_read_skew_ratio() const { return max_read_skew_ratio_; }

 private:
  void On(const listener::events::TaskEnd& task);
  void On(const listener::events::JobEnd& job);
  void On(const listener::events::StageCompleted& stage, const listener::correlate::ApplicationModel& model);
  void On(const listener::events::ExecutorRemoved& removed,
          const listener::correlate::ApplicationModel& model);

  ApplicationEventCounts counts_;
  TaskTimeSums sums_;
  TaskDurationHistogram histogram_;
  listener::correlate::DurationSample compute_durations_;
  listener::correlate::DurationSample write_durations_;
  std::optional<std::int64_t> peak_jvm_heap_bytes_;
  std::optional<double> max_read_skew_ratio_;
};

// The driver removed the executor itself (idle under dynamic allocation, an explicit kill, a
// scale-down decommission): no loss. Exposed for tests.
bool RemovedByDriver(std::string_view reason);

}  // namespace sparktrace::feed
