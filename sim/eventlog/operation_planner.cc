#include "sim/eventlog/operation_planner.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "sim/eventlog/random_source.h"
#include "sim/eventlog/sql_plan_drafter.h"
#include "sim/eventlog/stage_draft.h"
#include "sim/eventlog/stage_scheduler.h"

namespace sparktrace::sim::eventlog {
namespace {

// A replacement executor for a killed one registers this long after the kill.
constexpr EpochMillis kReplacementDelayMs = 8000;

void Push(OperationPlan& plan, EpochMillis time_ms, PlannedEventKind kind, int ref = -1) {
  plan.events.push_back(PlannedEvent{time_ms, kind, ref});
}

// Pushes the TaskStart/TaskEnd events of the stage's attempts.
void PushTaskEvents(OperationPlan& plan, std::size_t first_task) {
  for (std::size_t t = first_task; t < plan.tasks.size(); ++t) {
    Push(plan, plan.tasks[t].launch_ms, PlannedEventKind::kTaskStart, static_cast<int>(t));
    Push(plan, plan.tasks[t].finish_ms, PlannedEventKind::kTaskEnd, static_cast<int>(t));
  }
}

std::string MadeUpStatement(const OperationSpec& spec, int ordinal) {
  const std::string table = "sales.orders_" + std::to_string(ordinal % 7);
  const std::string relation = "aggregate { input { read { named_table { unparsed_identifier: \"" + table +
                               "\" } } } group_type: GROUP_TYPE_GROUPBY grouping_expressions { "
                               "unresolved_attribute { unparsed_identifier: \"customer_id\" } } }";
  if (spec.write) {
    return "command { write_operation { input { common { plan_id: " + std::to_string(ordinal * 3 + 2) +
           " } " + relation + " } source: \"parquet\" path: \"s3a://warehouse/daily/out_" +
           std::to_string(ordinal) + "\" mode: SAVE_MODE_OVERWRITE } }";
  }
  return "root { common { plan_id: " + std::to_string(ordinal * 3 + 1) + " } " + relation + " }";
}

}  // namespace

std::string OperationJobTag(std::string_view spark_version, std::string_view user_id,
                            std::string_view session_id, std::string_view operation_id) {
  const bool swapped = spark_version.starts_with("3.5.0") || spark_version.starts_with("3.5.1");
  const std::string_view first = swapped ? session_id : user_id;
  const std::string_view second = swapped ? user_id : session_id;
  return "SparkConnect_OperationTag_User_" + std::string(first) + "_Session_" + std::string(second) +
         "_Operation_" + std::string(operation_id);
}

std::string Abbreviate(std::string_view text, std::size_t max) {
  if (text.size() <= max || max < 4) return std::string(text);
  return std::string(text.substr(0, max - 3)) + "...";
}

OperationPlan PlanOperation(const OperationSpec& spec, const PlanInputs& inputs, ExecutorPool& pool) {
  const ScenarioKnobs& knobs = *inputs.knobs;
  RandomSource random =
      RandomSource(inputs.scenario->seed).Fork(static_cast<std::uint64_t>(inputs.ordinal) + 1);
  OperationPlan plan;
  plan.spec = spec;
  plan.ordinal = inputs.ordinal;
  plan.job_tag = OperationJobTag(inputs.spark_version, spec.user_id, spec.session_id, spec.operation_id);
  plan.job_tags.push_back(plan.job_tag);
  for (const std::string& tag : spec.user_tags) {
    plan.job_tags.push_back("SparkConnect_SessionTag_User_" + spec.user_id + "_Session_" + spec.session_id +
                            "_Tag_" + tag);
  }
  plan.statement_text =
      spec.statement_text.empty() ? MadeUpStatement(spec, inputs.ordinal) : spec.statement_text;
  plan.description = "Spark Connect - " + Abbreviate(plan.statement_text, 128);
  const SizeShape shape = ShapeOf(spec.size);

  EpochMillis t = inputs.start_ms;
  if (inputs.new_session) Push(plan, t, PlannedEventKind::kSessionStarted);
  // slow-executor-allocation: dynamic allocation let every idle executor go before the second
  // operation; its first stage then waits for new ones with its tasks pending.
  const bool reacquire = inputs.ordinal == 1 && knobs.reacquire_wait_ms > 0;
  int reacquired_count = 0;
  if (reacquire) {
    for (int executor : pool.NotRemovedAt(t)) {
      if (pool.at(executor).added_ms >= t) continue;
      pool.Remove(executor, t, "Executor killed by driver.");
      Push(plan, t, PlannedEventKind::kExecutorRemoved, executor);
      ++reacquired_count;
    }
  }
  Push(plan, t, PlannedEventKind::kOperationStarted);
  t += random.UniformInt(30, 120);
  Push(plan, t, PlannedEventKind::kOperationAnalyzed);
  t += random.UniformInt(15, 80);
  Push(plan, t, PlannedEventKind::kOperationReady);
  t += random.UniformInt(2, 10);
  Push(plan, t, PlannedEventKind::kSqlExecutionStart);
  t += random.UniformInt(5, 20);
  // broadcast-near-limit: the map stage's join waits for its broadcast table (0 when clean).
  t += knobs.broadcast_extra_ms;

  // Job 0: the shuffle-map stage (scan + partial aggregation + shuffle write).
  plan.stages.push_back(StagePlan{});
  plan.stages[0].num_tasks = shape.map_tasks;
  plan.jobs.push_back(JobPlan{});
  plan.jobs[0].stages = {0};
  plan.jobs[0].submitted_ms = t;
  plan.stages[0].submitted_ms = t;
  Push(plan, t, PlannedEventKind::kJobStart, 0);
  Push(plan, t, PlannedEventKind::kStageSubmitted, 0);
  if (reacquire && reacquired_count > 0) {
    for (int i = 0; i < knobs.executors; ++i) {
      const EpochMillis added = t + knobs.reacquire_wait_ms + i * knobs.executor_stagger_ms;
      const int executor = pool.Add(knobs.cores_per_executor, t, added);
      Push(plan, added, PlannedEventKind::kExecutorAdded, executor);
    }
  }
  const StageDraft map_draft = DraftMapStage(random, knobs, shape);
  // failing-tasks: an executor killed by its container runtime partway through the stage.
  const double kill_draw = random.Uniform(0.3, 0.5);
  if (knobs.executor_killed) {
    double work_ms = 0;
    for (const auto& attempts : map_draft.attempts) work_ms += attempts.back().duration_ms;
    int slots = 0;
    std::optional<int> victim;
    for (int executor : pool.NotRemovedAt(t)) {
      slots += pool.at(executor).cores;
      if (!victim && pool.at(executor).added_ms <= t) victim = executor;
    }
    if (victim && slots > 0) {
      const EpochMillis kill_ms = t + std::max<EpochMillis>(500, Round(kill_draw * work_ms / slots));
      const ExecutorRecord& record = pool.at(*victim);
      pool.Remove(*victim, kill_ms,
                  "Container from a bad node: container_1700000000000_0001_01_0000" + record.id +
                      " on host: " + record.host + ". Exit status: 137. Diagnostics: [" +
                      "Container killed on request. Exit code is 137]" +
                      " Container exited with a non-zero exit code 137. Killed by external signal.");
      Push(plan, kill_ms, PlannedEventKind::kExecutorRemoved, *victim);
      const int replacement =
          pool.Add(knobs.cores_per_executor, kill_ms + 1000, kill_ms + kReplacementDelayMs);
      Push(plan, kill_ms + kReplacementDelayMs, PlannedEventKind::kExecutorAdded, replacement);
    }
  }
  std::size_t first_task = plan.tasks.size();
  EpochMillis end = ScheduleStage(plan, 0, map_draft, t, pool, random);
  PushTaskEvents(plan, first_task);
  t = end + random.UniformInt(5, 25);
  plan.stages[0].completed_ms = t;
  Push(plan, t, PlannedEventKind::kStageCompleted, 0);
  t += random.UniformInt(1, 5);
  plan.jobs[0].completed_ms = t;
  Push(plan, t, PlannedEventKind::kJobEnd, 0);

  // Job 1: reuses the map stage (listed, skipped) and runs the result stage.
  t += random.UniformInt(30, 150) + knobs.extra_gap_between_jobs_ms;
  double shuffle_total = 0;
  for (const TaskPlan& task : plan.tasks) {
    if (task.outcome == TaskOutcome::kSuccess)
      shuffle_total += static_cast<double>(task.metrics.shuffle_bytes_written);
  }
  plan.stages.push_back(StagePlan{});
  StagePlan& result = plan.stages[1];
  result.num_tasks = shape.result_tasks;
  result.result_stage = true;
  result.writes_output = spec.write;
  result.parents = {0};
  result.submitted_ms = t;
  plan.jobs.push_back(JobPlan{});
  plan.jobs[1].stages = {0, 1};
  plan.jobs[1].submitted_ms = t;
  Push(plan, t, PlannedEventKind::kJobStart, 1);
  Push(plan, t, PlannedEventKind::kStageSubmitted, 1);
  StageDraft result_draft =
      DraftResultStage(random, knobs, shape, shuffle_total, spec.write, std::max(1, knobs.executors));
  if (knobs.permanent_failure && inputs.ordinal == 1) {
    // One task runs out of memory on every attempt.
    auto& attempts = result_draft.attempts[0];
    const AttemptDraft success = attempts.back();
    attempts.clear();
    for (int i = 0; i < kMaxTaskFailures; ++i) attempts.push_back(FailedAttempt(success, 0.7, true));
  }
  first_task = plan.tasks.size();
  end = ScheduleStage(plan, 1, result_draft, t, pool, random);
  PushTaskEvents(plan, first_task);
  plan.failed = plan.stages[1].aborting_task.has_value();
  t = plan.failed ? end : end + random.UniformInt(5, 25);
  plan.stages[1].completed_ms = t;
  Push(plan, t, PlannedEventKind::kStageCompleted, 1);
  t += random.UniformInt(1, 5);
  plan.jobs[1].completed_ms = t;
  plan.jobs[1].failed = plan.failed;
  Push(plan, t, PlannedEventKind::kJobEnd, 1);

  // A write commits on the driver (job commit) before the SQL execution ends.
  const double commit_jitter = random.LogNormalFactor(0.2);
  if (spec.write && !plan.failed) t += Round(static_cast<double>(knobs.commit_ms) * commit_jitter);
  t += random.UniformInt(5, 30);
  DraftSqlPlan(plan, knobs);
  Push(plan, t, PlannedEventKind::kSqlDriverUpdates);
  Push(plan, t, PlannedEventKind::kSqlExecutionEnd);
  t += random.UniformInt(1, 5);
  std::int64_t rows = 0;
  for (const TaskPlan& task : plan.tasks) {
    if (task.stage == 1 && task.outcome == TaskOutcome::kSuccess) rows += task.metrics.shuffle_records_read;
  }
  plan.produced_rows = std::max<std::int64_t>(1, rows / 1000);
  Push(plan, t, plan.failed ? PlannedEventKind::kOperationFailed : PlannedEventKind::kOperationFinished);
  t += random.UniformInt(10, 80);
  Push(plan, t, PlannedEventKind::kOperationClosed);

  std::stable_sort(plan.events.begin(), plan.events.end(),
                   [](const PlannedEvent& a, const PlannedEvent& b) { return a.time_ms < b.time_ms; });
  return plan;
}

}  // namespace sparktrace::sim::eventlog
