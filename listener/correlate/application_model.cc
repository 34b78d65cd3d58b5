#include "listener/correlate/application_model.h"

#include <algorithm>
#include <limits>
#include <variant>

namespace sparktrace::listener::correlate {

std::string_view JobStatusName(JobStatus status) {
  switch (status) {
    case JobStatus::kRunning:
      return "running";
    case JobStatus::kSucceeded:
      return "succeeded";
    case JobStatus::kFailed:
      return "failed";
    case JobStatus::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<events::EpochMillis> StageAttemptRecord::StartMs() const {
  if (submission_ms) return submission_ms;
  return tasks.first_launch_ms;
}

void ApplicationModel::Apply(const events::SparkEvent& event) {
  std::visit([this](const auto& alternative) { On(alternative); }, event);
}

void ApplicationModel::Apply(events::SparkEvent&& event) {
  std::visit([this](auto&& alternative) { On(std::forward<decltype(alternative)>(alternative)); },
             std::move(event));
}

void ApplicationModel::SeeTime(std::optional<events::EpochMillis> time_ms) {
  if (!time_ms || *time_ms <= 0) return;
  application_.last_event_ms =
      application_.last_event_ms ? std::max(*application_.last_event_ms, *time_ms) : *time_ms;
}

void ApplicationModel::On(const events::LogStart& event) {
  application_.spark_version = event.spark_version;
  tag_order_ = events::ConnectJobTagOrderForSparkVersion(event.spark_version);
}

void ApplicationModel::On(const events::ApplicationStart& event) {
  application_.app_id = event.app_id;
  application_.attempt_id = event.attempt_id;
  application_.app_name = event.app_name;
  application_.spark_user = event.spark_user;
  application_.start_ms = event.time_ms;
  SeeTime(event.time_ms);
}

void ApplicationModel::On(const events::ApplicationEnd& event) {
  application_.end_ms = event.time_ms;
  SeeTime(event.time_ms);
}

void ApplicationModel::On(const events::ExecutorAdded& event) {
  executors_.push_back(ExecutorRecord{.executor_id = event.executor_id,
                                      .host = event.host,
                                      .total_cores = event.total_cores,
                                      .added_ms = event.time_ms,
                                      .request_ms = event.request_time_ms,
                                      .removed_ms = std::nullopt,
                                      .removed_reason = {}});
  SeeTime(event.time_ms);
}

void ApplicationModel::On(const events::ExecutorRemoved& event) {
  SeeTime(event.time_ms);
  // The latest live executor of that id (ids are not reused within an application, but a removal
  // of an executor whose addition was never logged must not close an older one twice).
  for (auto it = executors_.rbegin(); it != executors_.rend(); ++it) {
    if (it->executor_id == event.executor_id && !it->removed_ms) {
      it->removed_ms = event.time_ms;
      it->removed_reason = event.reason;
      return;
    }
  }
  ++ignored_events_;
}

template <typename Tags>
std::optional<std::string> ApplicationModel::OperationFromTags(const Tags& tags) {
  for (const auto& tag : tags) {
    std::optional<events::ConnectJobTag> parsed = events::ParseConnectJobTag(tag, tag_order_);
    if (!parsed) continue;
    auto [it, inserted] = operations_.try_emplace(parsed->operation_id);
    if (inserted) {
      it->second.operation_id = parsed->operation_id;
      it->second.job_tag = std::string(tag);
      it->second.session_id = parsed->session_id;
      it->second.user_id = parsed->user_id;
    }
    return parsed->operation_id;
  }
  return std::nullopt;
}

void ApplicationModel::On(const events::JobStart& event) {
  JobRecord& job = jobs_[event.job_id];
  job.job_id = event.job_id;
  job.started = true;
  job.submission_ms = event.submission_time_ms;
  job.stage_ids = event.stage_ids;
  job.connect_operation_id = OperationFromTags(event.properties.job_tags);
  job.sql_execution_id = event.properties.sql_execution_id;
  job.sql_root_execution_id = event.properties.sql_root_execution_id;
  for (std::int32_t stage_id : job.stage_ids) jobs_by_stage_[stage_id].insert(job.job_id);
  if (job.connect_operation_id) tagged_jobs_by_operation_[*job.connect_operation_id].insert(job.job_id);
  if (job.sql_execution_id) jobs_by_execution_[*job.sql_execution_id].insert(job.job_id);
  if (job.sql_root_execution_id) jobs_by_execution_[*job.sql_root_execution_id].insert(job.job_id);
  sql_.OnJobStart(event);
  SeeTime(event.submission_time_ms);
}

void ApplicationModel::On(const events::JobEnd& event) {
  JobRecord& job = jobs_[event.job_id];
  job.job_id = event.job_id;
  job.completion_ms = event.completion_time_ms;
  switch (event.result) {
    case events::JobResult::kSucceeded:
      job.status = JobStatus::kSucceeded;
      break;
    case events::JobResult::kFailed:
      job.status = JobStatus::kFailed;
      break;
    case events::JobResult::kOther:
      job.status = JobStatus::kUnknown;
      break;
  }
  job.failure_message = event.failure_message;
  SeeTime(event.completion_time_ms);
}

StageAttemptRecord& ApplicationModel::StageRecord(std::int32_t stage_id, std::int32_t attempt_id) {
  const StageAttemptKey key{stage_id, attempt_id};
  StageAttemptRecord& stage = stages_[key];
  stage.key = key;
  return stage;
}

void ApplicationModel::MergeStageInfo(const events::StageInfo& info, bool completed) {
  StageAttemptRecord& stage = StageRecord(info.stage_id, info.attempt_id);
  stage.num_tasks = info.num_tasks;
  if (!info.name.empty()) stage.name = info.name;
  if (info.parent_ids) stage.parent_ids = info.parent_ids;
  if (info.submission_time_ms) stage.submission_ms = info.submission_time_ms;
  if (completed) {
    stage.completed = true;
    // A stage whose tasks never ran (all skipped or cancelled early) may lack a completion time;
    // its last task's end, else its submission, is the best bound the log gives.
    stage.completion_ms = info.completion_time_ms      ? info.completion_time_ms
                          : stage.tasks.last_finish_ms ? stage.tasks.last_finish_ms
                                                       : stage.submission_ms;
    stage.failure_reason = info.failure_reason;
  }
  SeeTime(info.submission_time_ms);
  SeeTime(info.completion_time_ms);
}

void ApplicationModel::On(const events::StageSubmitted& event) {
  MergeStageInfo(event.stage, /*completed=*/false);
  sql_.OnStageSubmitted(event.stage.stage_id, event.stage.attempt_id);
}

void ApplicationModel::On(const events::StageCompleted& event) {
  MergeStageInfo(event.stage, /*completed=*/true);
}

void ApplicationModel::On(const events::TaskEnd& event) {
  StageRecord(event.stage_id, event.stage_attempt_id).tasks.Add(event);
  sql_.OnTaskEnd(event);
  if (event.launch_time_ms > 0 && event.finish_time_ms >= event.launch_time_ms &&
      !event.executor_id.empty()) {
    ExecutorUsage& usage = executor_usage_[event.executor_id];
    usage.busy_ms += event.finish_time_ms - event.launch_time_ms;
    ++usage.tasks;
  }
  SeeTime(event.finish_time_ms);
}

void ApplicationModel::On(events::SqlExecutionStart event) {
  SqlExecutionRecord& execution = sql_executions_[event.execution_id];
  execution.execution_id = event.execution_id;
  execution.root_execution_id = event.root_execution_id;
  execution.start_ms = event.time_ms;
  if (event.job_tags) execution.connect_operation_id = OperationFromTags(*event.job_tags);
  if (execution.connect_operation_id) {
    executions_by_operation_[*execution.connect_operation_id].insert(event.execution_id);
  }
  if (event.root_execution_id && *event.root_execution_id != event.execution_id) {
    executions_by_root_[*event.root_execution_id].insert(event.execution_id);
  }
  const std::optional<events::EpochMillis> time_ms = event.time_ms;
  sql_.OnExecutionStart(std::move(event));
  SeeTime(time_ms);
}

void ApplicationModel::On(const events::SqlExecutionEnd& event) {
  SqlExecutionRecord& execution = sql_executions_[event.execution_id];
  execution.execution_id = event.execution_id;
  execution.end_ms = event.time_ms;
  execution.error_message = event.error_message;
  sql_.OnExecutionEnd(event);
  SeeTime(event.time_ms);
}

void ApplicationModel::On(const events::ConnectSessionEvent& event) {
  // Sessions carry no job; their times only move the log's clock.
  SeeTime(event.event_time_ms);
}

void ApplicationModel::On(const events::ConnectOperationEvent& event) {
  SeeTime(event.event_time_ms);
  if (event.operation_id.empty()) {
    ++ignored_events_;
    return;
  }
  ConnectOperationRecord& operation = operations_[event.operation_id];
  operation.operation_id = event.operation_id;
  if (!event.job_tag.empty()) operation.job_tag = event.job_tag;
  // Session and user come from the Started event; the tag gives them (in the version's order)
  // for operations whose Started event is missing.
  if (operation.session_id.empty() || operation.user_id.empty()) {
    if (std::optional<events::ConnectJobTag> tag = events::ParseConnectJobTag(event.job_tag, tag_order_)) {
      if (operation.session_id.empty()) operation.session_id = tag->session_id;
      if (operation.user_id.empty()) operation.user_id = tag->user_id;
    }
  }
  const events::EpochMillis time = event.event_time_ms;
  switch (event.phase) {
    case events::ConnectOperationPhase::kStarted:
      operation.started_ms = time;
      if (!event.session_id.empty()) operation.session_id = event.session_id;
      if (!event.user_id.empty()) operation.user_id = event.user_id;
      break;
    case events::ConnectOperationPhase::kAnalyzed:
      operation.analyzed_ms = time;
      break;
    case events::ConnectOperationPhase::kReadyForExecution:
      operation.ready_ms = time;
      break;
    case events::ConnectOperationPhase::kFinished:
      operation.finished_ms = time;
      operation.produced_row_count = event.produced_row_count;
      break;
    case events::ConnectOperationPhase::kFailed:
      operation.failed_ms = time;
      operation.error_message = event.error_message;
      break;
    case events::ConnectOperationPhase::kCanceled:
      operation.canceled_ms = time;
      break;
    case events::ConnectOperationPhase::kClosed:
      operation.closed_ms = time;
      break;
  }
}

void ApplicationModel::On(const events::EnvironmentUpdate& event) {
  for (const events::ConfigProperty& property : event.properties) properties_[property.key] = property.value;
}

std::optional<std::string_view> ApplicationModel::Property(std::string_view key) const {
  if (auto found = properties_.find(key); found != properties_.end()) return found->second;
  if (key.starts_with("fs.") || key.starts_with("mapreduce.")) {
    const std::string spark_key = "spark.hadoop." + std::string(key);
    if (auto found = properties_.find(spark_key); found != properties_.end()) return found->second;
  }
  return std::nullopt;
}

const ConnectOperationRecord* ApplicationModel::FindOperation(std::string_view operation_id) const {
  auto it = operations_.find(operation_id);
  return it == operations_.end() ? nullptr : &it->second;
}

std::optional<std::string> ApplicationModel::OperationOfJob(const JobRecord& job) const {
  if (job.connect_operation_id) return job.connect_operation_id;
  for (const std::optional<std::int64_t>& execution_id : {job.sql_execution_id, job.sql_root_execution_id}) {
    if (!execution_id) continue;
    auto it = sql_executions_.find(*execution_id);
    if (it == sql_executions_.end()) continue;
    if (it->second.connect_operation_id) return it->second.connect_operation_id;
    // A nested execution (3.4+) whose own start carried no operation tag joins through its root.
    if (it->second.root_execution_id && *it->second.root_execution_id != *execution_id) {
      auto root = sql_executions_.find(*it->second.root_execution_id);
      if (root != sql_executions_.end() && root->second.connect_operation_id) {
        return root->second.connect_operation_id;
      }
    }
  }
  return std::nullopt;
}

std::vector<std::int32_t> ApplicationModel::JobsOfOperation(std::string_view operation_id) const {
  std::set<std::int32_t> candidates;
  const auto add_jobs_of_execution = [&](std::int64_t execution_id) {
    if (auto jobs = jobs_by_execution_.find(execution_id); jobs != jobs_by_execution_.end()) {
      candidates.insert(jobs->second.begin(), jobs->second.end());
    }
  };
  if (auto tagged = tagged_jobs_by_operation_.find(operation_id); tagged != tagged_jobs_by_operation_.end()) {
    candidates = tagged->second;
  }
  if (auto executions = executions_by_operation_.find(operation_id);
      executions != executions_by_operation_.end()) {
    for (std::int64_t execution_id : executions->second) {
      add_jobs_of_execution(execution_id);
      if (auto nested = executions_by_root_.find(execution_id); nested != executions_by_root_.end()) {
        for (std::int64_t nested_id : nested->second) add_jobs_of_execution(nested_id);
      }
    }
  }
  std::vector<std::int32_t> job_ids;
  for (std::int32_t job_id : candidates) {
    std::optional<std::string> owner = OperationOfJob(jobs_.at(job_id));
    if (owner && *owner == operation_id) job_ids.push_back(job_id);
  }
  return job_ids;
}

std::vector<std::int32_t> ApplicationModel::JobsOfSqlExecution(std::int64_t execution_id) const {
  std::vector<std::int32_t> job_ids;
  auto candidates = jobs_by_execution_.find(execution_id);
  if (candidates == jobs_by_execution_.end()) return job_ids;
  for (std::int32_t job_id : candidates->second) {
    if (jobs_.at(job_id).sql_execution_id == execution_id) job_ids.push_back(job_id);
  }
  return job_ids;
}

std::optional<std::string> ApplicationModel::OperationOfSqlExecution(std::int64_t execution_id) const {
  if (auto execution = sql_executions_.find(execution_id); execution != sql_executions_.end()) {
    if (execution->second.connect_operation_id) return execution->second.connect_operation_id;
    const std::optional<std::int64_t> root = execution->second.root_execution_id;
    if (root && *root != execution_id) {
      auto root_execution = sql_executions_.find(*root);
      if (root_execution != sql_executions_.end() && root_execution->second.connect_operation_id)
        return root_execution->second.connect_operation_id;
    }
  }
  for (std::int32_t job_id : JobsOfSqlExecution(execution_id)) {
    if (std::optional<std::string> operation = OperationOfJob(jobs_.at(job_id))) return operation;
  }
  return std::nullopt;
}

std::optional<std::int32_t> ApplicationModel::JobOfStageAttempt(const StageAttemptRecord& stage) const {
  auto listing = jobs_by_stage_.find(stage.key.stage_id);
  if (listing == jobs_by_stage_.end() || listing->second.empty()) return std::nullopt;
  std::optional<std::int32_t> latest_before;
  std::optional<events::EpochMillis> latest_before_ms;
  const std::optional<events::EpochMillis> stage_start = stage.StartMs();
  for (std::int32_t job_id : listing->second) {
    const JobRecord& job = jobs_.at(job_id);
    if (stage_start && job.submission_ms && *job.submission_ms <= *stage_start &&
        (!latest_before_ms || *job.submission_ms >= *latest_before_ms)) {
      latest_before = job_id;
      latest_before_ms = job.submission_ms;
    }
  }
  return latest_before ? latest_before : *listing->second.begin();
}

std::vector<const StageAttemptRecord*> ApplicationModel::StagesOfJob(std::int32_t job_id) const {
  std::vector<const StageAttemptRecord*> result;
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return result;
  std::set<std::int32_t> stage_ids(job->second.stage_ids.begin(), job->second.stage_ids.end());
  for (std::int32_t stage_id : stage_ids) {
    // Every attempt of the stage, (stage_id, 0) upwards.
    for (auto it = stages_.lower_bound(StageAttemptKey{stage_id, std::numeric_limits<std::int32_t>::min()});
         it != stages_.end() && it->first.stage_id == stage_id; ++it) {
      std::optional<std::int32_t> owner = JobOfStageAttempt(it->second);
      if (owner && *owner == job_id) result.push_back(&it->second);
    }
  }
  return result;
}

void ApplicationModel::ForgetJob(std::int32_t job_id, ForgetStats& stats) {
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return;
  // Stage ownership is computed from the job records, so find the job's attempts before erasing it.
  std::vector<StageAttemptKey> owned;
  for (const StageAttemptRecord* stage : StagesOfJob(job_id)) owned.push_back(stage->key);
  for (const StageAttemptKey& key : owned)
    stats.stage_attempts += static_cast<std::int64_t>(stages_.erase(key));
  const auto erase_from = [job_id](auto& index, const auto& key) {
    auto entry = index.find(key);
    if (entry == index.end()) return;
    entry->second.erase(job_id);
    if (entry->second.empty()) index.erase(entry);
  };
  for (std::int32_t stage_id : job->second.stage_ids) erase_from(jobs_by_stage_, stage_id);
  if (job->second.connect_operation_id)
    erase_from(tagged_jobs_by_operation_, *job->second.connect_operation_id);
  if (job->second.sql_execution_id) erase_from(jobs_by_execution_, *job->second.sql_execution_id);
  if (job->second.sql_root_execution_id) erase_from(jobs_by_execution_, *job->second.sql_root_execution_id);
  jobs_.erase(job);
  ++stats.jobs;
}

ApplicationModel::ForgetStats ApplicationModel::ForgetFinishedBefore(events::EpochMillis cutoff_ms) {
  ForgetStats stats;
  const auto ended_before_cutoff = [cutoff_ms](const JobRecord& job) {
    return job.completion_ms && *job.completion_ms < cutoff_ms;
  };
  std::set<std::int64_t> candidate_executions;
  const auto note_execution = [&candidate_executions](const JobRecord& job) {
    if (job.sql_execution_id) candidate_executions.insert(*job.sql_execution_id);
  };

  std::vector<std::string> dropped_operations;
  for (const auto& [operation_id, operation] : operations_) {
    std::optional<events::EpochMillis> ended = operation.closed_ms;
    for (std::optional<events::EpochMillis> terminal :
         {operation.finished_ms, operation.failed_ms, operation.canceled_ms}) {
      if (!ended) ended = terminal;
    }
    if (!ended || *ended >= cutoff_ms) continue;
    const std::vector<std::int32_t> job_ids = JobsOfOperation(operation_id);
    if (!std::all_of(job_ids.begin(), job_ids.end(),
                     [&](std::int32_t job_id) { return ended_before_cutoff(jobs_.at(job_id)); })) {
      continue;  // a job still running (a cancelled one winding down) keeps the operation
    }
    for (std::int32_t job_id : job_ids) {
      note_execution(jobs_.at(job_id));
      ForgetJob(job_id, stats);
    }
    dropped_operations.push_back(operation_id);
  }
  for (const std::string& operation_id : dropped_operations) {
    if (auto executions = executions_by_operation_.find(operation_id);
        executions != executions_by_operation_.end()) {
      candidate_executions.insert(executions->second.begin(), executions->second.end());
      executions_by_operation_.erase(executions);
    }
    tagged_jobs_by_operation_.erase(operation_id);
    operations_.erase(operation_id);
    ++stats.operations;
  }

  std::vector<std::int32_t> plain_jobs;
  for (const auto& [job_id, job] : jobs_) {
    if (ended_before_cutoff(job) && !OperationOfJob(job)) plain_jobs.push_back(job_id);
  }
  for (std::int32_t job_id : plain_jobs) {
    note_execution(jobs_.at(job_id));
    ForgetJob(job_id, stats);
  }

  // An execution goes when no held job refers to it and it is not the root of a held one. Nested
  // executions have larger ids than their root (the root starts first), so going from the largest
  // id down drops the nested ones before their root is looked at.
  for (auto it = candidate_executions.rbegin(); it != candidate_executions.rend(); ++it) {
    const std::int64_t execution_id = *it;
    if (jobs_by_execution_.contains(execution_id) || executions_by_root_.contains(execution_id)) continue;
    auto execution = sql_executions_.find(execution_id);
    if (execution == sql_executions_.end()) continue;
    if (execution->second.root_execution_id) {
      if (auto siblings = executions_by_root_.find(*execution->second.root_execution_id);
          siblings != executions_by_root_.end()) {
        siblings->second.erase(execution_id);
        if (siblings->second.empty()) executions_by_root_.erase(siblings);
      }
    }
    sql_executions_.erase(execution);
    sql_.Forget(execution_id);
    ++stats.sql_executions;
  }
  return stats;
}

}  // namespace sparktrace::listener::correlate
