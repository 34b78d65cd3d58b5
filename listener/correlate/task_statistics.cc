#include "listener/correlate/task_statistics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>

namespace sparktrace::listener::correlate {

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

std::vector<std::int64_t> DurationSample::Profile(std::size_t points) const {
  std::vector<std::int64_t> profile;
  if (kept_.empty() || points < 2) return profile;
  std::vector<std::int64_t> sorted = kept_;
  std::sort(sorted.begin(), sorted.end());
  profile.reserve(points);
  for (std::size_t i = 0; i < points; ++i) {
    // The same nearest rank as Quantile.
    const double q = static_cast<double>(i) / static_cast<double>(points - 1);
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    if (rank == 0) rank = 1;
    profile.push_back(sorted[rank - 1]);
  }
  return profile;
}

bool LooksLikeOutOfMemory(std::string_view message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view marker : {"outofmemory", "out of memory", "container killed", "oomkilled"}) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  // Exception classes such as GpuSplitAndRetryOOM / GpuRetryOOM: "OOM" ending the class name.
  if (const auto space = message.find_first_of(" :"); message.substr(0, space).ends_with("OOM")) return true;
  // "exit code 137", "Exit code is 143", "exit status: 137", "exitCode=137": the number closely
  // follows "exit".
  for (std::size_t at = lower.find("exit"); at != std::string::npos; at = lower.find("exit", at + 4)) {
    const std::string_view after = std::string_view(lower).substr(at, 24);
    if (after.find("137") != std::string_view::npos || after.find("143") != std::string_view::npos)
      return true;
  }
  return false;
}

namespace {

// "ExceptionFailure java.lang.OutOfMemoryError": the reason name, and for an exception its class
// (the detail up to ": "), so that one group is one kind of failure.
std::string FailureGroupName(const events::TaskEnd& task) {
  std::string name(events::TaskEndReasonName(task.reason));
  if (task.reason == events::TaskEndReason::kExceptionFailure && !task.reason_detail.empty()) {
    name += ' ';
    name += task.reason_detail.substr(0, task.reason_detail.find(": "));
  }
  return name;
}

}  // namespace

TaskEndOutcome OutcomeOf(const events::TaskEnd& task) {
  switch (task.reason) {
    case events::TaskEndReason::kSuccess:
      return TaskEndOutcome::kSucceeded;
    case events::TaskEndReason::kResubmitted:
      return TaskEndOutcome::kResubmitted;
    case events::TaskEndReason::kTaskKilled:
    case events::TaskEndReason::kTaskCommitDenied:
      return TaskEndOutcome::kKilled;
    default:
      return task.killed ? TaskEndOutcome::kKilled : TaskEndOutcome::kFailed;
  }
}

std::int64_t TaskStatistics::FailedOrKilledTimeMs() const {
  std::int64_t total = 0;
  for (const TaskFailureGroup& group : failure_groups) total += group.task_time_ms;
  return total;
}

void TaskStatistics::Add(const events::TaskEnd& task) {
  ++tasks_ended;
  const bool timed = task.launch_time_ms > 0 && task.finish_time_ms >= task.launch_time_ms;
  const std::int64_t duration_ms = timed ? task.finish_time_ms - task.launch_time_ms : 0;
  task_time_ms += duration_ms;
  switch (OutcomeOf(task)) {
    case TaskEndOutcome::kSucceeded:
      break;
    case TaskEndOutcome::kResubmitted:
      ++resubmitted_tasks;
      break;
    case TaskEndOutcome::kKilled:
      ++killed_tasks;
      AddFailure(task, /*killed=*/true, duration_ms);
      break;
    case TaskEndOutcome::kFailed:
      ++failed_tasks;
      AddFailure(task, /*killed=*/false, duration_ms);
      break;
  }
  if (task.launch_time_ms > 0) {
    first_launch_ms = first_launch_ms ? std::min(*first_launch_ms, task.launch_time_ms) : task.launch_time_ms;
  }
  if (task.finish_time_ms > 0) {
    last_finish_ms = last_finish_ms ? std::max(*last_finish_ms, task.finish_time_ms) : task.finish_time_ms;
    if (task.reason == events::TaskEndReason::kSuccess && !task.failed && !task.killed &&
        task.launch_time_ms > 0) {
      successful_durations.Add(std::max<std::int64_t>(0, task.finish_time_ms - task.launch_time_ms));
    }
  }
  if (!task.has_metrics) return;
  const events::TaskMetrics& metrics = task.metrics;
  executor_run_time_ms += metrics.executor_run_time_ms;
  if (metrics.executor_cpu_time_ns) {
    executor_cpu_time_ns += *metrics.executor_cpu_time_ns;
    cpu_time_known = true;
  }
  jvm_gc_time_ms += metrics.jvm_gc_time_ms;
  memory_bytes_spilled += metrics.memory_bytes_spilled;
  disk_bytes_spilled += metrics.disk_bytes_spilled;
  max_task_disk_bytes_spilled = std::max(max_task_disk_bytes_spilled, metrics.disk_bytes_spilled);
  shuffle_read_bytes += metrics.shuffle_remote_bytes_read + metrics.shuffle_local_bytes_read;
  shuffle_fetch_wait_ms += metrics.shuffle_fetch_wait_time_ms;
  shuffle_write_bytes += metrics.shuffle_bytes_written;
  shuffle_write_time_ns += metrics.shuffle_write_time_ns;
  if (task.reason == events::TaskEndReason::kSuccess && !task.failed && !task.killed) {
    successful_task_bytes.Add(metrics.input_bytes_read + metrics.shuffle_remote_bytes_read +
                              metrics.shuffle_local_bytes_read);
  }
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

}  // namespace sparktrace::listener::correlate

namespace sparktrace::listener::correlate {

void TaskStatistics::AddFailure(const events::TaskEnd& task, bool killed, std::int64_t duration_ms) {
  const bool out_of_memory = !killed && LooksLikeOutOfMemory(task.reason_detail);
  if (out_of_memory) ++out_of_memory_tasks;
  std::string name = FailureGroupName(task);
  auto group = std::find_if(failure_groups.begin(), failure_groups.end(),
                            [&name](const TaskFailureGroup& existing) { return existing.reason == name; });
  if (group == failure_groups.end()) {
    if (failure_groups.size() < kMaxFailureGroups) {
      failure_groups.push_back(TaskFailureGroup{.reason = std::move(name),
                                                .count = 0,
                                                .killed = killed,
                                                .out_of_memory = false,
                                                .task_time_ms = 0,
                                                .sample_message = task.reason_detail});
      group = std::prev(failure_groups.end());
    } else {
      group = std::prev(failure_groups.end());  // the bounded list's overflow
    }
  }
  ++group->count;
  group->task_time_ms += duration_ms;
  group->out_of_memory = group->out_of_memory || out_of_memory;
}

}  // namespace sparktrace::listener::correlate
