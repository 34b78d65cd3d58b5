#include "feed/application_event_totals.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <variant>

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::DurationSample;
using listener::correlate::LooksLikeOutOfMemory;
using listener::correlate::OutcomeOf;
using listener::correlate::StageAttemptKey;
using listener::correlate::TaskEndOutcome;
using listener::events::EpochMillis;
using listener::events::ExecutorRemoved;
using listener::events::JobEnd;
using listener::events::JobResult;
using listener::events::SparkEvent;
using listener::events::StageCompleted;
using listener::events::TaskEnd;
using listener::events::TaskEndReason;
using listener::events::TaskMetrics;

namespace {

// Removal reasons Spark writes when the driver let the executor go (ExecutorLossReason.scala,
// YARN's ContainerExitStatus.KILLED_BY_APPMASTER, ExecutorAllocationManager's decommissioning),
// lower-cased; "dynamic allocation" is what some cluster managers and rewritten logs say.
constexpr std::array<std::string_view, 4> kDriverRemovalMarkers = {
    "killed by driver", "explicit termination request", "spark scale down", "dynamic allocation"};

// DataSkewThresholds' defaults (diagnose/rule_thresholds.h): stages with fewer successful tasks,
// or whose largest task read less, have no skew worth a figure.
constexpr std::int64_t kMinSkewTasks = 8;
constexpr std::int64_t kMinSkewMaxTaskBytes = std::int64_t{16} << 20;

bool Successful(const TaskEnd& task) {
  return task.reason == TaskEndReason::kSuccess && !task.failed && !task.killed && task.launch_time_ms > 0 &&
         task.finish_time_ms > 0;
}

}  // namespace

bool RemovedByDriver(std::string_view reason) {
  std::string lower(reason);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(kDriverRemovalMarkers.begin(), kDriverRemovalMarkers.end(),
                     [&lower](std::string_view marker) { return lower.find(marker) != std::string::npos; });
}

void ApplicationEventTotals::Add(const SparkEvent& event, const ApplicationModel& model) {
  if (const auto* task = std::get_if<TaskEnd>(&event)) {
    On(*task);
  } else if (const auto* job = std::get_if<JobEnd>(&event)) {
    On(*job);
  } else if (const auto* stage = std::get_if<StageCompleted>(&event)) {
    On(*stage, model);
  } else if (const auto* removed = std::get_if<ExecutorRemoved>(&event)) {
    On(*removed, model);
  }
}

void ApplicationEventTotals::On(const TaskEnd& task) {
  if (task.executor_peak_jvm_heap_bytes && *task.executor_peak_jvm_heap_bytes > 0) {
    peak_jvm_heap_bytes_ = std::max(peak_jvm_heap_bytes_.value_or(0), *task.executor_peak_jvm_heap_bytes);
  }
  if (OutcomeOf(task) == TaskEndOutcome::kFailed) {
    ++(LooksLikeOutOfMemory(task.reason_detail) ? counts_.tasks_failed_out_of_memory
                                                : counts_.tasks_failed_other);
  }
  const TaskMetrics& metrics = task.metrics;
  if (Successful(task)) {
    const std::int64_t duration_ms = std::max<std::int64_t>(0, task.finish_time_ms - task.launch_time_ms);
    for (std::size_t bucket = 0; bucket < kTaskDurationBucketsMs.size(); ++bucket) {
      if (duration_ms <= kTaskDurationBucketsMs[bucket]) ++histogram_.cumulative_counts[bucket];
    }
    ++histogram_.count;
    histogram_.sum_ms += duration_ms;
    const bool wrote =
        task.has_metrics && (metrics.output_bytes_written > 0 || metrics.output_records_written > 0);
    (wrote ? write_durations_ : compute_durations_).Add(duration_ms);
  }
  if (!task.has_metrics) return;
  sums_.run_ms += metrics.executor_run_time_ms;
  if (metrics.executor_cpu_time_ns) {
    sums_.cpu_ns += *metrics.executor_cpu_time_ns;
    sums_.run_ms_with_cpu += metrics.executor_run_time_ms;
  }
  sums_.gc_ms += metrics.jvm_gc_time_ms;
  sums_.deserialize_ms += metrics.executor_deserialize_time_ms;
  sums_.result_serialization_ms += metrics.result_serialization_time_ms;
  sums_.output_bytes += metrics.output_bytes_written;
  sums_.memory_spilled_bytes += metrics.memory_bytes_spilled;
  sums_.disk_spilled_bytes += metrics.disk_bytes_spilled;
}

void ApplicationEventTotals::On(const JobEnd& job) {
  // A result this model does not know (JobResult::kOther) is neither.
  if (job.result == JobResult::kSucceeded) ++counts_.jobs_succeeded;
  if (job.result == JobResult::kFailed) ++counts_.jobs_failed;
}

void ApplicationEventTotals::On(const StageCompleted& completed, const ApplicationModel& model) {
  ++(completed.stage.failure_reason ? counts_.stages_failed : counts_.stages_completed);
  const auto stage =
      model.stages().find(StageAttemptKey{completed.stage.stage_id, completed.stage.attempt_id});
  if (stage == model.stages().end()) return;
  // The data-skew rule's measure (diagnose/rules/data_skew.cc): max / median of the bytes each
  // successful task read, the median floored at 1 byte; and its default gates, so that a stage of
  // three tasks, or one whose tasks read next to nothing, does not put a ratio of millions on the
  // dashboard.
  const DurationSample& bytes = stage->second.tasks.successful_task_bytes;
  if (bytes.count() < kMinSkewTasks || bytes.max_ms() < kMinSkewMaxTaskBytes) return;
  const double median = static_cast<double>(bytes.Quantile(0.5).value_or(0));
  const double ratio = static_cast<double>(bytes.max_ms()) / std::max(median, 1.0);
  max_read_skew_ratio_ = std::max(max_read_skew_ratio_.value_or(0.0), ratio);
}

void ApplicationEventTotals::On(const ExecutorRemoved& removed, const ApplicationModel& model) {
  // Spark posts ApplicationEnd before it stops the scheduler backend: executors removed from then
  // on go because the application ends.
  const std::optional<EpochMillis> end = model.application().end_ms;
  if (end && removed.time_ms >= *end) return;
  if (RemovedByDriver(removed.reason)) return;
  ++(LooksLikeOutOfMemory(removed.reason) ? counts_.executors_lost_out_of_memory
                                          : counts_.executors_lost_other);
}

}  // namespace sparktrace::feed
