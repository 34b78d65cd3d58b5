#include "listener/correlate/phases.h"

#include <algorithm>

namespace sparktrace::listener::correlate {
namespace {

// One change of the state the phase depends on, at one instant.
struct Change {
  events::EpochMillis time_ms = 0;
  int running_stages = 0;  // +1 / -1
  int writing_stages = 0;  // +1 / -1
  int live_executors = 0;  // +1 / -1
};

Phase PhaseOf(bool before_first_executor, bool executors_known, int running, int writing, int live) {
  if (before_first_executor) return Phase::kResourceWait;
  if (executors_known && running > 0 && live <= 0) return Phase::kResourceWait;
  if (writing > 0) return Phase::kIoWrite;
  if (running > 0) return Phase::kCompute;
  return Phase::kIdle;
}

void Append(PhaseBreakdown& breakdown, Phase phase, events::EpochMillis start_ms,
            events::EpochMillis end_ms) {
  if (end_ms <= start_ms) return;
  breakdown.total_ms[static_cast<std::size_t>(phase)] += end_ms - start_ms;
  if (!breakdown.intervals.empty() && breakdown.intervals.back().phase == phase &&
      breakdown.intervals.back().end_ms == start_ms) {
    breakdown.intervals.back().end_ms = end_ms;
    return;
  }
  breakdown.intervals.push_back(PhaseInterval{phase, start_ms, end_ms});
}

}  // namespace

std::optional<TimeWindow> ApplicationWindow(const ApplicationModel& model) {
  const ApplicationRecord& app = model.application();
  if (!app.start_ms) return std::nullopt;
  events::EpochMillis end = app.end_ms ? *app.end_ms : app.last_event_ms.value_or(*app.start_ms);
  return TimeWindow{*app.start_ms, std::max(end, *app.start_ms)};
}

std::optional<TimeWindow> OperationWindow(const ApplicationModel& model,
                                          const ConnectOperationRecord& operation) {
  std::optional<events::EpochMillis> first_job_ms;
  std::optional<events::EpochMillis> last_job_ms;
  for (std::int32_t job_id : model.JobsOfOperation(operation.operation_id)) {
    const JobRecord& job = model.jobs().at(job_id);
    for (std::optional<events::EpochMillis> time : {job.submission_ms, job.completion_ms}) {
      if (!time) continue;
      first_job_ms = first_job_ms ? std::min(*first_job_ms, *time) : *time;
      last_job_ms = last_job_ms ? std::max(*last_job_ms, *time) : *time;
    }
  }
  std::optional<events::EpochMillis> start = operation.started_ms ? operation.started_ms : first_job_ms;
  if (!start) return std::nullopt;
  std::optional<events::EpochMillis> end;
  for (std::optional<events::EpochMillis> terminal :
       {operation.finished_ms, operation.failed_ms, operation.canceled_ms}) {
    if (terminal) end = end ? std::min(*end, *terminal) : *terminal;
  }
  if (!end) end = operation.closed_ms;
  if (!end) end = last_job_ms;
  if (!end) end = start;
  // A job that ended after the operation said it finished (a cancelled job winding down) still
  // belongs to it.
  if (last_job_ms) end = std::max(*end, *last_job_ms);
  return TimeWindow{*start, std::max(*end, *start)};
}

PhaseBreakdown ComputePhases(const ApplicationModel& model, TimeWindow window,
                             const std::vector<const StageAttemptRecord*>& stages,
                             const std::set<StageAttemptKey>& also_writing) {
  PhaseBreakdown breakdown;
  breakdown.window = window;
  if (window.end_ms <= window.start_ms) return breakdown;
  const auto clip = [&window](events::EpochMillis time) {
    return std::clamp(time, window.start_ms, window.end_ms);
  };

  std::vector<Change> changes;
  for (const StageAttemptRecord* stage : stages) {
    const std::optional<events::EpochMillis> start = stage->StartMs();
    if (!start) continue;
    const events::EpochMillis end = stage->completion_ms.value_or(window.end_ms);
    if (end < *start || end < window.start_ms || *start > window.end_ms) continue;
    const int writes = stage->tasks.WritesOutput() || also_writing.contains(stage->key) ? 1 : 0;
    changes.push_back(Change{clip(*start), +1, +writes, 0});
    changes.push_back(Change{clip(end), -1, -writes, 0});
  }
  const bool executors_known = !model.executors().empty();
  std::optional<events::EpochMillis> first_executor_ms;
  for (const ExecutorRecord& executor : model.executors()) {
    first_executor_ms =
        first_executor_ms ? std::min(*first_executor_ms, executor.added_ms) : executor.added_ms;
    if (executor.added_ms > window.end_ms) continue;
    changes.push_back(Change{clip(executor.added_ms), 0, 0, +1});
    if (executor.removed_ms && *executor.removed_ms <= window.end_ms) {
      changes.push_back(Change{clip(*executor.removed_ms), 0, 0, -1});
    }
  }
  // "Application start → first executor added" is resource_wait: the application could not run a
  // task before it. Only the application's own start counts (an operation starts later).
  const std::optional<events::EpochMillis> app_start = model.application().start_ms;
  // A plain value plus a flag rather than an optional: GCC 12 at -O2 warns (wrongly) that the
  // optional's value may be read uninitialised in the loop below.
  const bool waits_for_executor = executors_known && app_start.has_value() && first_executor_ms.has_value() &&
                                  *first_executor_ms > *app_start;
  const events::EpochMillis wait_until = waits_for_executor ? *first_executor_ms : window.start_ms;
  if (waits_for_executor) changes.push_back(Change{clip(wait_until), 0, 0, 0});  // a boundary only

  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.time_ms < b.time_ms; });
  int running = 0;
  int writing = 0;
  int live = 0;
  events::EpochMillis cursor = window.start_ms;
  std::size_t next = 0;
  while (cursor < window.end_ms) {
    // Apply everything that happens at `cursor` (all changes at one instant at once, so a stage
    // that ends when the next starts leaves no idle gap).
    while (next < changes.size() && changes[next].time_ms <= cursor) {
      running += changes[next].running_stages;
      writing += changes[next].writing_stages;
      live += changes[next].live_executors;
      ++next;
    }
    const events::EpochMillis until =
        next < changes.size() ? std::min(changes[next].time_ms, window.end_ms) : window.end_ms;
    const bool before_first_executor = waits_for_executor && cursor < wait_until;
    Append(breakdown, PhaseOf(before_first_executor, executors_known, running, writing, live), cursor, until);
    cursor = until;
  }
  return breakdown;
}

std::optional<PhaseBreakdown> ApplicationPhases(const ApplicationModel& model) {
  std::optional<TimeWindow> window = ApplicationWindow(model);
  if (!window) return std::nullopt;
  std::vector<const StageAttemptRecord*> stages;
  stages.reserve(model.stages().size());
  for (const auto& [key, stage] : model.stages()) stages.push_back(&stage);
  return ComputePhases(model, *window, stages);
}

std::optional<PhaseBreakdown> OperationPhases(const ApplicationModel& model,
                                              const ConnectOperationRecord& operation, bool write_command) {
  std::optional<TimeWindow> window = OperationWindow(model, operation);
  if (!window) return std::nullopt;
  std::vector<const StageAttemptRecord*> stages;
  std::set<StageAttemptKey> result_stages;
  for (std::int32_t job_id : model.JobsOfOperation(operation.operation_id)) {
    const JobRecord& job = model.jobs().at(job_id);
    const auto result_stage = std::max_element(job.stage_ids.begin(), job.stage_ids.end());
    for (const StageAttemptRecord* stage : model.StagesOfJob(job_id)) {
      stages.push_back(stage);
      if (write_command && result_stage != job.stage_ids.end() && stage->key.stage_id == *result_stage) {
        result_stages.insert(stage->key);
      }
    }
  }
  return ComputePhases(model, *window, stages, result_stages);
}

}  // namespace sparktrace::listener::correlate
