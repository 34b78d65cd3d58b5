#include "listener/rest/rest_event_differ.h"

#include <algorithm>

namespace sparktrace::listener::rest {
namespace {

bool IsJobFinished(RestJobStatus status) {
  return status == RestJobStatus::kSucceeded || status == RestJobStatus::kFailed;
}

bool WasSubmitted(RestStageStatus status) {
  return status == RestStageStatus::kActive || status == RestStageStatus::kComplete ||
         status == RestStageStatus::kFailed;
}

bool IsStageFinished(RestStageStatus status) {
  return status == RestStageStatus::kComplete || status == RestStageStatus::kFailed;
}

// A cluster-mode driver is listed by REST but never announced by ExecutorAdded; a local-mode one
// (which runs the tasks) is, and has cores.
bool IsAnnouncedExecutor(const RestExecutor& executor) {
  return executor.executor_id != "driver" || executor.total_cores > 0;
}

events::StageInfo ToStageInfo(const RestStage& stage) {
  events::StageInfo info;
  info.stage_id = stage.stage_id;
  info.attempt_id = stage.attempt_id;
  info.num_tasks = stage.num_tasks;
  info.submission_time_ms = stage.submission_time_ms;
  if (IsStageFinished(stage.status)) {
    info.completion_time_ms = stage.completion_time_ms;
    if (stage.status == RestStageStatus::kFailed) info.failure_reason = stage.failure_reason.value_or("");
  }
  return info;
}

}  // namespace

void RestEventDiffer::Observe(const RestApplicationSnapshot& snapshot, std::vector<RestEvent>& out) {
  const RestApplication& app = snapshot.application;
  auto emit = [&](events::SparkEvent event) {
    out.push_back(RestEvent{app.id, app.attempt_id, std::move(event), std::nullopt});
  };

  if (!started_) {
    started_ = true;
    emit(events::ApplicationStart{app.name, app.id, app.attempt_id, app.start_time_ms.value_or(0),
                                  app.spark_user});
  }
  if (ended_) return;

  if (snapshot.executors) {
    for (const RestExecutor& executor : *snapshot.executors) {
      if (!IsAnnouncedExecutor(executor) || executors_.contains(executor.executor_id)) continue;
      executors_.emplace(executor.executor_id, false);
      emit(events::ExecutorAdded{executor.add_time_ms.value_or(0), executor.executor_id, executor.host,
                                 executor.total_cores, std::nullopt});
    }
  }

  std::vector<events::SparkEvent> job_events;
  if (snapshot.jobs) {
    ObserveJobStarts(*snapshot.jobs, job_events);
    for (events::SparkEvent& event : job_events) emit(std::move(event));
    job_events.clear();
  }
  if (snapshot.stages) ObserveStages(*snapshot.stages, snapshot, out);
  if (snapshot.jobs && snapshot.stages) {
    ObserveJobEnds(*snapshot.jobs, *snapshot.stages, job_events);
    for (events::SparkEvent& event : job_events) emit(std::move(event));
  }
  if (snapshot.jobs) ForgetJobsNotIn(*snapshot.jobs);

  if (snapshot.executors) {
    std::set<std::string> listed;
    for (const RestExecutor& executor : *snapshot.executors) {
      listed.insert(executor.executor_id);
      auto seen = executors_.find(executor.executor_id);
      if (seen == executors_.end() || seen->second || executor.active) continue;
      seen->second = true;
      // Spark sets removeTime on every inactive executor; 0 only if a server omits it.
      emit(events::ExecutorRemoved{executor.remove_time_ms.value_or(0), executor.executor_id,
                                   executor.remove_reason});
    }
    // Spark keeps spark.ui.retainedDeadExecutors (100) removed executors; older ones drop out.
    std::erase_if(executors_, [&](const auto& entry) { return !listed.contains(entry.first); });
  }

  if (app.completed && snapshot.jobs && snapshot.stages && snapshot.executors) {
    ended_ = true;
    emit(events::ApplicationEnd{app.end_time_ms.value_or(0), std::nullopt});
    // Nothing of a finished application changes any more; keep only the flags.
    jobs_.clear();
    stages_.clear();
    executors_.clear();
  }
}

void RestEventDiffer::ObserveJobStarts(const std::vector<RestJob>& jobs,
                                       std::vector<events::SparkEvent>& events) {
  // The REST list is newest first; JobStarts go out oldest first, as the listener bus posted them.
  std::vector<const RestJob*> fresh;
  for (const RestJob& job : jobs) {
    if (!jobs_.contains(job.job_id)) fresh.push_back(&job);
  }
  std::sort(fresh.begin(), fresh.end(),
            [](const RestJob* a, const RestJob* b) { return a->job_id < b->job_id; });
  for (const RestJob* job : fresh) {
    jobs_.emplace(job->job_id, JobSeen{false, job->stage_ids});
    events::JobStart start;
    start.job_id = job->job_id;
    start.submission_time_ms = job->submission_time_ms;
    start.stage_ids = job->stage_ids;
    start.properties.job_tags = job->job_tags;
    start.properties.job_group_id = job->job_group_id;
    events.push_back(std::move(start));
  }
}

void RestEventDiffer::ObserveStages(const std::vector<RestStage>& stages,
                                    const RestApplicationSnapshot& snapshot, std::vector<RestEvent>& out) {
  const RestApplication& app = snapshot.application;
  std::set<std::int32_t> stages_of_known_jobs;
  for (const auto& [job_id, job] : jobs_)
    stages_of_known_jobs.insert(job.stage_ids.begin(), job.stage_ids.end());

  // Oldest first, as for jobs; submissions before completions, as a poll can see both of a stage.
  std::vector<const RestStage*> ordered;
  ordered.reserve(stages.size());
  for (const RestStage& stage : stages) ordered.push_back(&stage);
  std::sort(ordered.begin(), ordered.end(), [](const RestStage* a, const RestStage* b) {
    return StageKey(a->stage_id, a->attempt_id) < StageKey(b->stage_id, b->attempt_id);
  });
  std::vector<const RestStage*> completed_now;
  std::set<StageKey> listed;
  for (const RestStage* stage : ordered) {
    const StageKey key(stage->stage_id, stage->attempt_id);
    listed.insert(key);
    if (!WasSubmitted(stage->status)) continue;
    // Its job started after the job list was fetched: wait, so JobStart comes first.
    if (!stages_of_known_jobs.contains(stage->stage_id)) continue;
    auto [seen, is_new] = stages_.emplace(key, false);
    if (is_new)
      out.push_back(
          RestEvent{app.id, app.attempt_id, events::StageSubmitted{ToStageInfo(*stage)}, std::nullopt});
    if (IsStageFinished(stage->status) && !seen->second) {
      seen->second = true;
      completed_now.push_back(stage);
    }
  }
  for (const RestStage* stage : completed_now) {
    out.push_back(RestEvent{app.id, app.attempt_id, events::StageCompleted{ToStageInfo(*stage)},
                            stage->task_metrics_sum});
  }
  std::erase_if(stages_, [&](const auto& entry) { return !listed.contains(entry.first); });
}

void RestEventDiffer::ObserveJobEnds(const std::vector<RestJob>& jobs, const std::vector<RestStage>& stages,
                                     std::vector<events::SparkEvent>& events) {
  std::vector<const RestJob*> ended_now;
  for (const RestJob& job : jobs) {
    auto seen = jobs_.find(job.job_id);
    if (seen == jobs_.end() || seen->second.ended || !IsJobFinished(job.status)) continue;
    seen->second.ended = true;
    ended_now.push_back(&job);
  }
  std::sort(ended_now.begin(), ended_now.end(),
            [](const RestJob* a, const RestJob* b) { return a->job_id < b->job_id; });
  for (const RestJob* job : ended_now) {
    events::JobEnd end;
    end.job_id = job->job_id;
    end.completion_time_ms = job->completion_time_ms;
    end.result =
        job->status == RestJobStatus::kSucceeded ? events::JobResult::kSucceeded : events::JobResult::kFailed;
    if (end.result == events::JobResult::kFailed) {
      // JobData has no error message. A job fails because a stage did, and Spark's job failure
      // message is that stage's failure reason ("Job aborted due to stage failure: ...").
      for (const RestStage& stage : stages) {
        const bool of_this_job =
            std::find(job->stage_ids.begin(), job->stage_ids.end(), stage.stage_id) != job->stage_ids.end();
        if (of_this_job && stage.status == RestStageStatus::kFailed && stage.failure_reason) {
          end.failure_message = *stage.failure_reason;
          break;
        }
      }
    }
    events.push_back(std::move(end));
  }
}

void RestEventDiffer::ForgetJobsNotIn(const std::vector<RestJob>& jobs) {
  std::set<std::int32_t> listed;
  for (const RestJob& job : jobs) listed.insert(job.job_id);
  std::erase_if(jobs_, [&](const auto& entry) {
    if (listed.contains(entry.first)) return false;
    if (!entry.second.ended) ++jobs_lost_;
    return true;
  });
}

}  // namespace sparktrace::listener::rest
