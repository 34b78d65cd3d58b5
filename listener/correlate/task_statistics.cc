#include "listener/correlate/task_statistics.h"

#include <algorithm>
#include <cmath>

namespace sparktrace::listener {

std::uint64_t DurationSample::NextRandom() {
  // splitmix64: tiny, good enough for reservoir indices, and needs no <random> engine state.
  std::uint64_t z = (random_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void DurationSample::Add(std::int64_t duration_ms) {
  ++count_;
  max_ms_ = count_ == 1 ? duration_ms : std::max(max_ms_, duration_ms);
  if (kept_.size() < kExactDurationLimit) {
    kept_.push_back(duration_ms);
    return;
  }
  // Algorithm R: the n-th duration replaces a kept one with probability limit / n, which keeps
  // every duration seen so far in the reservoir with equal probability.
  const std::uint64_t slot = NextRandom() % static_cast<std::uint64_t>(count_);
  if (slot < kExactDurationLimit) kept_[slot] = duration_ms;
}

std::optional<std::int64_t> DurationSample::Quantile(double q) const {
  if (kept_.empty()) return std::nullopt;
  std::vector<std::int64_t> sorted = kept_;
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: the smallest value with at least q of the values at or below it.
  const double clamped = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<std::size_t>(std::ceil(clamped * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

void TaskStatistics::Add(const TaskEnd& task) {
  ++tasks_ended;
  // As Spark's own status store counts them (AppStatusListener.onTaskEnd): a Resubmitted end
  // re-runs a task that had succeeded and is no failure; a denied commit is a kill.
  switch (task.reason) {
    case TaskEndReason::kSuccess:
    case TaskEndReason::kResubmitted:
      break;
    case TaskEndReason::kTaskKilled:
    case TaskEndReason::kTaskCommitDenied:
      ++killed_tasks;
      break;
    default:
      if (task.killed) {
        ++killed_tasks;
      } else {
        ++failed_tasks;
      }
      break;
  }
  if (task.launch_time_ms > 0) {
    first_launch_ms = first_launch_ms ? std::min(*first_launch_ms, task.launch_time_ms) : task.launch_time_ms;
  }
  if (task.finish_time_ms > 0) {
    last_finish_ms = last_finish_ms ? std::max(*last_finish_ms, task.finish_time_ms) : task.finish_time_ms;
    if (task.reason == TaskEndReason::kSuccess && !task.failed && !task.killed && task.launch_time_ms > 0) {
      successful_durations.Add(std::max<std::int64_t>(0, task.finish_time_ms - task.launch_time_ms));
    }
  }
  if (!task.has_metrics) return;
  const TaskMetrics& metrics = task.metrics;
  executor_run_time_ms += metrics.executor_run_time_ms;
  if (metrics.executor_cpu_time_ns) {
    executor_cpu_time_ns += *metrics.executor_cpu_time_ns;
    cpu_time_known = true;
  }
  jvm_gc_time_ms += metrics.jvm_gc_time_ms;
  memory_bytes_spilled += metrics.memory_bytes_spilled;
  disk_bytes_spilled += metrics.disk_bytes_spilled;
  shuffle_read_bytes += metrics.shuffle_remote_bytes_read + metrics.shuffle_local_bytes_read;
  shuffle_fetch_wait_ms += metrics.shuffle_fetch_wait_time_ms;
  shuffle_write_bytes += metrics.shuffle_bytes_written;
  input_bytes += metrics.input_bytes_read;
  input_records += metrics.input_records_read;
  output_bytes += metrics.output_bytes_written;
  output_records += metrics.output_records_written;
  if (metrics.peak_execution_memory_bytes) {
    max_peak_execution_memory_bytes =
        max_peak_execution_memory_bytes
            ? std::max(*max_peak_execution_memory_bytes, *metrics.peak_execution_memory_bytes)
            : *metrics.peak_execution_memory_bytes;
  }
}

}  // namespace sparktrace::listener
