#include "diagnose/what_if_of_model.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

namespace sparktrace::diagnose {
namespace {

using listener::correlate::ApplicationModel;
using listener::correlate::StageAttemptRecord;
using listener::events::EpochMillis;

std::int64_t TaskCpus(const ApplicationModel& model) {
  std::int64_t cpus = 1;
  if (const std::optional<std::string_view> text = model.Property("spark.task.cpus")) {
    std::from_chars(text->data(), text->data() + text->size(), cpus);
  }
  return std::max<std::int64_t>(cpus, 1);
}

// Cores and executors alive over time, from every executor's lifetime.
void AddSlots(const ApplicationModel& model, listener::correlate::TimeWindow window,
              what_if::AttemptInput& input) {
  struct Change {
    EpochMillis at = 0;
    std::int64_t cores = 0;
    std::int64_t executors = 0;
  };
  std::vector<Change> changes;
  std::map<std::int32_t, std::int64_t> sizes;  // cores → executors of that size
  for (const listener::correlate::ExecutorRecord& executor : model.executors()) {
    changes.push_back({executor.added_ms, executor.total_cores, 1});
    if (executor.removed_ms) changes.push_back({*executor.removed_ms, -executor.total_cores, -1});
    ++sizes[executor.total_cores];
  }
  // Removals before additions at a tie: a replaced executor does not count twice.
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.at != b.at ? a.at < b.at : a.executors < b.executors;
  });
  const std::int64_t task_cpus = TaskCpus(model);
  std::int64_t cores = 0;
  std::int64_t executors = 0;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    cores += changes[i].cores;
    executors += changes[i].executors;
    if (i + 1 < changes.size() && changes[i + 1].at == changes[i].at) continue;  // one step per instant
    const auto at = static_cast<double>(changes[i].at);
    const std::int64_t slots = std::max<std::int64_t>(0, cores / task_cpus);
    if (!input.slots.empty() && input.slots.back().slots == slots) continue;
    input.slots.push_back({at, slots});
    if (changes[i].at <= window.end_ms) input.peak_executors = std::max(input.peak_executors, executors);
  }
  std::int32_t common_cores = 0;
  std::int64_t most = 0;
  for (const auto& [size, count] : sizes) {
    if (count > most) std::tie(common_cores, most) = std::pair{size, count};
  }
  input.slots_per_executor = common_cores / task_cpus;
}

// A stage's attempts that ran for one job, merged into one simulated stage.
what_if::StageInput MergeAttempts(const std::vector<const StageAttemptRecord*>& attempts, double job_end) {
  what_if::StageInput stage;
  stage.stage_id = attempts.front()->key.stage_id;
  stage.submission_ms = job_end;
  stage.completion_ms = 0;
  double task_time = 0;
  for (const StageAttemptRecord* attempt : attempts) {
    if (stage.parent_ids.empty() && attempt->parent_ids) stage.parent_ids = *attempt->parent_ids;
    const listener::correlate::TaskStatistics& tasks = attempt->tasks;
    const listener::correlate::DurationSample& durations = tasks.successful_durations;
    stage.task_count += durations.count();
    stage.task_ms.insert(stage.task_ms.end(), durations.kept().begin(), durations.kept().end());
    double kept_sum = 0;
    for (const std::int64_t ms : durations.kept()) kept_sum += static_cast<double>(ms);
    if (!durations.kept().empty()) {
      task_time +=
          kept_sum * static_cast<double>(durations.count()) / static_cast<double>(durations.kept().size());
    }
    if (const std::optional<EpochMillis> start = attempt->StartMs()) {
      stage.submission_ms = std::min(stage.submission_ms, static_cast<double>(*start));
    }
    const std::optional<EpochMillis> end =
        attempt->completion_ms ? attempt->completion_ms : tasks.last_finish_ms;
    stage.completion_ms = std::max(stage.completion_ms, end ? static_cast<double>(*end) : job_end);
    stage.writes_output = stage.writes_output || tasks.WritesOutput();
    stage.read_bytes += tasks.input_bytes + tasks.shuffle_read_bytes;
  }
  stage.completion_ms = std::max(stage.completion_ms, stage.submission_ms);
  stage.task_time_ms = static_cast<std::int64_t>(task_time);
  return stage;
}

}  // namespace

what_if::AttemptInput WhatIfInputOf(const ApplicationModel& model, listener::correlate::TimeWindow window,
                                    const std::vector<std::int32_t>& job_ids) {
  what_if::AttemptInput input;
  input.start_ms = static_cast<double>(window.start_ms);
  input.end_ms = static_cast<double>(window.end_ms);
  for (const std::int32_t job_id : job_ids) {
    const auto found = model.jobs().find(job_id);
    if (found == model.jobs().end() || !found->second.submission_ms) continue;
    const listener::correlate::JobRecord& record = found->second;
    what_if::JobInput job;
    job.job_id = job_id;
    job.submission_ms = static_cast<double>(*record.submission_ms);
    job.completion_ms = static_cast<double>(record.completion_ms.value_or(window.end_ms));
    std::map<std::int32_t, std::vector<const StageAttemptRecord*>> by_stage;
    for (const StageAttemptRecord* attempt : model.StagesOfJob(job_id))
      by_stage[attempt->key.stage_id].push_back(attempt);
    for (const auto& [stage_id, attempts] : by_stage)
      job.stages.push_back(MergeAttempts(attempts, job.completion_ms));
    input.jobs.push_back(std::move(job));
  }
  AddSlots(model, window, input);
  return input;
}

what_if::AttemptInput WhatIfInputOfApplication(const ApplicationModel& model) {
  const std::optional<listener::correlate::TimeWindow> window = listener::correlate::ApplicationWindow(model);
  if (!window) return {};
  std::vector<std::int32_t> job_ids;
  for (const auto& [job_id, job] : model.jobs()) job_ids.push_back(job_id);
  return WhatIfInputOf(model, *window, job_ids);
}

what_if::AttemptInput WhatIfInputOfOperation(const ApplicationModel& model,
                                             const listener::correlate::ConnectOperationRecord& operation) {
  const std::optional<listener::correlate::TimeWindow> window =
      listener::correlate::OperationWindow(model, operation);
  if (!window) return {};
  return WhatIfInputOf(model, *window, model.JobsOfOperation(operation.operation_id));
}

}  // namespace sparktrace::diagnose
