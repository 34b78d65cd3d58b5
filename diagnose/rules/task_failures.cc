// task-failures: failed task attempts, failed (retried) stage attempts and failed jobs, grouped
// by reason, with one sample message per reason.
//
// Fires when at least min_failed_tasks task attempts failed (killed ones — speculative copies,
// cancelled jobs — do not count), or any stage attempt or job failed. No impact gate: a failure
// is worth knowing about even when retries absorbed it; severity says how much it mattered
// (critical: a job failed; warning: a stage attempt failed or ≥ warning_failed_share of tasks
// failed; info otherwise).
// Impact: the failed attempts' task time spread over their stage's average parallelism (the
// retries redo it), plus the duration of each failed stage attempt (it is run again), bounded by
// the wall time.
#include <algorithm>
#include <map>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {

void TaskFailuresRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const TaskFailuresThresholds& t = scope.thresholds->task_failures;
  if (!t.enabled) return;
  struct Group {
    std::int64_t count = 0;
    bool killed = false;
    bool out_of_memory = false;
    std::string sample;
  };
  std::map<std::string, Group> groups;
  std::int64_t failed = 0, killed = 0, ended = 0, resubmitted = 0, failed_stages = 0, retried_stages = 0;
  double impact = 0;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::TaskStatistics& tasks = stage->tasks;
    failed += tasks.failed_tasks;
    killed += tasks.killed_tasks;
    ended += tasks.tasks_ended;
    resubmitted += tasks.resubmitted_tasks;
    if (stage->key.attempt_id > 0) ++retried_stages;
    const double parallelism = AverageParallelism(*stage);
    for (const listener::correlate::TaskFailureGroup& group : tasks.failure_groups) {
      Group& merged = groups[group.reason];
      merged.count += group.count;
      merged.killed = group.killed;
      merged.out_of_memory = merged.out_of_memory || group.out_of_memory;
      if (merged.sample.empty()) merged.sample = group.sample_message.substr(0, 200);
      if (!group.killed) impact += static_cast<double>(group.task_time_ms) / 1000.0 / parallelism;
    }
    if (stage->failure_reason) {
      ++failed_stages;
      impact += static_cast<double>(StageDurationMs(*stage).value_or(0)) / 1000.0;
    }
  }
  std::int64_t failed_jobs = 0;
  std::string job_failure;
  for (const listener::correlate::JobRecord* job : scope.jobs) {
    if (job->status != listener::correlate::JobStatus::kFailed) continue;
    ++failed_jobs;
    if (job_failure.empty())
      job_failure = "job " + std::to_string(job->job_id) + ": " + job->failure_message.substr(0, 200);
  }
  if (failed < std::max<std::int64_t>(t.min_failed_tasks, 1) && failed_stages == 0 && failed_jobs == 0)
    return;
  const std::int64_t wall_ms = scope.WallMs();
  if (wall_ms > 0) impact = std::min(impact, static_cast<double>(wall_ms) / 1000.0);
  const double failed_share = ended > 0 ? static_cast<double>(failed) / static_cast<double>(ended) : 0;

  const Severity severity = failed_jobs > 0 ? Severity::kCritical
                            : failed_stages > 0 || failed_share >= t.warning_failed_share ? Severity::kWarning
                                                                                          : Severity::kInfo;
  Finding finding = NewFinding(kTaskFailures, scope.base, impact, severity);
  std::string reasons;
  for (const auto& [reason, group] : groups) {
    if (group.killed) continue;
    reasons += (reasons.empty() ? "" : ", ") + std::to_string(group.count) + " " + reason;
  }
  finding.title = std::to_string(failed) + " task attempts failed" +
                  (reasons.empty() ? "" : " (" + reasons + ")") +
                  (failed_stages > 0 ? ", " + std::to_string(failed_stages) + " stage attempts failed" : "") +
                  (failed_jobs > 0 ? ", " + std::to_string(failed_jobs) + " jobs failed" : "");
  finding.evidence = {
      Crossed("failed_tasks", static_cast<double>(failed), "count", static_cast<double>(t.min_failed_tasks),
              Comparison::kAtLeast),
      Figure("failed_task_share", failed_share, "share"),
      Figure("killed_tasks", static_cast<double>(killed), "count"),
      Figure("resubmitted_tasks", static_cast<double>(resubmitted), "count"),
      Figure("failed_stage_attempts", static_cast<double>(failed_stages), "count"),
      Figure("retried_stage_attempts", static_cast<double>(retried_stages), "count"),
      Figure("failed_jobs", static_cast<double>(failed_jobs), "count"),
  };
  std::int64_t out_of_memory = 0;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages)
    out_of_memory += stage->tasks.out_of_memory_tasks;
  finding.evidence.push_back(Figure("out_of_memory_tasks", static_cast<double>(out_of_memory), "count"));
  bool any_oom = false, any_fetch = false, any_lost = false;
  for (const auto& [reason, group] : groups) {
    Evidence by_reason = Figure("tasks:" + reason, static_cast<double>(group.count), "count");
    finding.evidence.push_back(std::move(by_reason));
    if (!group.sample.empty()) finding.evidence.push_back(Setting("sample:" + reason, group.sample));
    any_oom = any_oom || group.out_of_memory;
    any_fetch = any_fetch || reason.starts_with("FetchFailed");
    any_lost = any_lost || reason.starts_with("ExecutorLostFailure");
  }
  if (!job_failure.empty()) finding.evidence.push_back(Setting("job_failure", job_failure));
  if (any_oom)
    finding.fix.push_back(
        "out-of-memory failures: see oom-and-spill (more memory per task, more partitions)");
  if (any_fetch || any_lost) {
    finding.fix.push_back(
        "lost executors and fetch failures: keep shuffle files when executors go "
        "(spark.shuffle.service.enabled=true or spark.decommission.enabled=true with "
        "spark.storage.decommission.shuffleBlocks.enabled=true), check node health and preemption");
  }
  finding.fix.push_back(
      "read the sample messages: the first failure of each reason is in the evidence; the full "
      "stack traces are in the executor logs (Spark UI > Stages > failed tasks)");
  finding.fix.push_back(
      "flaky infrastructure vs. bad data: failures that retry and succeed are tolerated up to "
      "spark.task.maxFailures (now " +
      PropertyOr(scope, "spark.task.maxFailures", "4") +
      "); deterministic ones (bad rows, schema errors) fail the job and must be fixed in the code");
  findings.push_back(std::move(finding));
}

}  // namespace sparktrace::diagnose::rules
