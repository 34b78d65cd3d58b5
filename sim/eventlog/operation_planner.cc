#include "sim/eventlog/operation_planner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <utility>

#include "sim/eventlog/random_source.h"

namespace sparktrace::sim::eventlog {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// Executor-side rates of a healthy job (per task, i.e. per core).
constexpr double kScanBytesPerMs = 60.0 * kMiB / 1000.0;
constexpr double kShuffleReadBytesPerMs = 80.0 * kMiB / 1000.0;
constexpr double kShuffleWriteBytesPerNs = 200.0 * kMiB / 1e9;
// Spark's spark.task.maxFailures: the fourth failure of one task aborts its stage.
constexpr int kMaxTaskFailures = 4;
// A replacement executor for a killed one registers this long after the kill.
constexpr EpochMillis kReplacementDelayMs = 8000;

std::int64_t Round(double value) { return static_cast<std::int64_t>(std::llround(value)); }

struct SizeShape {
  int map_tasks;
  int result_tasks;
  double input_bytes_per_map_task;
};

SizeShape ShapeOf(OperationSize size) {
  switch (size) {
    case OperationSize::kSmall:
      return {8, 4, 32 * kMiB};
    case OperationSize::kMedium:
      return {48, 16, 96 * kMiB};
    case OperationSize::kLarge:
      return {160, 48, 128 * kMiB};
  }
  return {48, 16, 96 * kMiB};
}

// One attempt as drafted before scheduling: what it would do if its executor survives.
struct AttemptDraft {
  TaskOutcome outcome = TaskOutcome::kSuccess;
  double duration_ms = 0;  // launch → finish
  TaskMetricsPlan metrics;
  std::string exception_class;
  std::string exception_message;
};

struct StageDraft {
  std::vector<std::vector<AttemptDraft>> attempts;  // per task index, in attempt order
};

// Scenario effects shared by both stages' tasks, drawn identically whatever the strength.
struct TaskEffects {
  double gc_share = 0;
  double spill_ratio = 0;
  bool spills = false;
  double spill_slowdown = 1;
};

TaskEffects DrawEffects(RandomSource& random, const ScenarioKnobs& knobs, bool spill_candidate) {
  TaskEffects effects;
  effects.gc_share = std::clamp(knobs.gc_share * random.Uniform(0.6, 1.4), 0.0, 0.9);
  const double spill_draw = random.Uniform();
  effects.spill_ratio = knobs.spill_ratio * random.Uniform(0.7, 1.3);
  effects.spills = knobs.spill_ratio > 0 && (spill_candidate || spill_draw < 0.5);
  effects.spill_slowdown = effects.spills ? 1.0 + 0.8 * knobs.spill_ratio / 3.0 : 1.0;
  return effects;
}

// Fills the run/GC/CPU/deserialize figures from the time the task computes (GC excluded) and
// returns the attempt's duration from launch to finish.
double FinishTiming(RandomSource& random, const TaskEffects& effects, double compute_ms, double extra_ms,
                    TaskMetricsPlan& metrics) {
  const double gc_ms = compute_ms * effects.gc_share / (1.0 - effects.gc_share);
  metrics.gc_ms = Round(gc_ms);
  metrics.run_ms = Round(compute_ms + gc_ms + extra_ms);
  metrics.cpu_ns = Round(compute_ms * random.Uniform(0.78, 0.92) * 1e6);
  metrics.deserialize_ms = random.UniformInt(3, 35);
  metrics.deserialize_cpu_ns =
      Round(static_cast<double>(metrics.deserialize_ms) * random.Uniform(0.4, 0.8) * 1e6);
  metrics.result_serialization_ms = random.UniformInt(0, 2);
  metrics.result_size = random.UniformInt(1800, 4200);
  return static_cast<double>(metrics.deserialize_ms + metrics.run_ms + metrics.result_serialization_ms) +
         static_cast<double>(random.UniformInt(2, 15));
}

void ApplySpill(RandomSource& random, const TaskEffects& effects, double data_bytes,
                TaskMetricsPlan& metrics) {
  const double peak = data_bytes * random.Uniform(0.25, 0.6);
  if (!effects.spills) {
    metrics.peak_execution_memory = Round(peak);
    return;
  }
  metrics.memory_spilled = Round(data_bytes * effects.spill_ratio);
  metrics.disk_spilled = metrics.memory_spilled / 3;
  // A spilling task filled the execution memory it could get.
  metrics.peak_execution_memory = Round(std::max(peak, 900 * kMiB * random.Uniform(0.85, 1.0)));
}

// The failing first attempt of a task (or all attempts of a task failing for good).
AttemptDraft FailedAttempt(const AttemptDraft& success, double fraction, bool out_of_memory) {
  AttemptDraft failed = success;
  failed.outcome = TaskOutcome::kExceptionFailure;
  failed.duration_ms = std::max(50.0, success.duration_ms * fraction);
  const double scale = failed.duration_ms / std::max(1.0, success.duration_ms);
  TaskMetricsPlan& metrics = failed.metrics;
  metrics.run_ms = Round(static_cast<double>(metrics.run_ms) * scale);
  metrics.cpu_ns = Round(static_cast<double>(metrics.cpu_ns) * scale);
  metrics.gc_ms = Round(static_cast<double>(metrics.gc_ms) * scale * (out_of_memory ? 2.0 : 1.0));
  metrics.gc_ms = std::min(metrics.gc_ms, metrics.run_ms);
  // A failed attempt's input, output and shuffle writes are not committed; Spark reports the
  // shuffle read it did.
  metrics.input_bytes = Round(static_cast<double>(metrics.input_bytes) * scale);
  metrics.input_records = Round(static_cast<double>(metrics.input_records) * scale);
  metrics.output_bytes = 0;
  metrics.output_records = 0;
  metrics.shuffle_bytes_written = 0;
  metrics.shuffle_records_written = 0;
  metrics.shuffle_write_ns = 0;
  if (out_of_memory) {
    failed.exception_class = "java.lang.OutOfMemoryError";
    failed.exception_message = "Java heap space";
  } else {
    failed.exception_class = "java.io.IOException";
    failed.exception_message = "Connection reset by peer";
  }
  return failed;
}

// Adds the failure attempts the scenario asks for in front of a task's successful attempt.
void AddFailures(RandomSource& random, const ScenarioKnobs& knobs, std::vector<AttemptDraft>& attempts) {
  const double fail_draw = random.Uniform();
  const double kind_draw = random.Uniform();
  const double fraction = random.Uniform(0.3, 0.9);
  if (fail_draw < knobs.failing_task_share) {
    attempts.insert(attempts.begin(), FailedAttempt(attempts.front(), fraction, kind_draw < 0.5));
  }
}

StageDraft DraftMapStage(RandomSource& random, const ScenarioKnobs& knobs, const SizeShape& shape) {
  StageDraft draft;
  draft.attempts.resize(static_cast<std::size_t>(shape.map_tasks));
  for (auto& attempts : draft.attempts) {
    AttemptDraft success;
    TaskMetricsPlan& metrics = success.metrics;
    const TaskEffects effects = DrawEffects(random, knobs, false);
    const double input = shape.input_bytes_per_map_task * random.LogNormalFactor(0.12);
    metrics.input_bytes = Round(input);
    metrics.input_records = Round(input / 118.0);
    const double shuffle_bytes = input * 0.32 * random.LogNormalFactor(0.05);
    metrics.shuffle_bytes_written = Round(shuffle_bytes);
    metrics.shuffle_records_written = Round(shuffle_bytes / 41.0);
    metrics.shuffle_write_ns = Round(shuffle_bytes / kShuffleWriteBytesPerNs * random.LogNormalFactor(0.2));
    ApplySpill(random, effects, input, metrics);
    const double compute =
        (input / kScanBytesPerMs) * random.LogNormalFactor(0.18) * effects.spill_slowdown + 40;
    success.duration_ms =
        FinishTiming(random, effects, compute, static_cast<double>(metrics.shuffle_write_ns) / 1e6, metrics);
    attempts.push_back(std::move(success));
    AddFailures(random, knobs, attempts);
  }
  return draft;
}

StageDraft DraftResultStage(RandomSource& random, const ScenarioKnobs& knobs, const SizeShape& shape,
                            double shuffle_bytes_total, bool writes, int executors) {
  StageDraft draft;
  const int tasks = shape.result_tasks;
  draft.attempts.resize(static_cast<std::size_t>(tasks));
  // Which tasks are skewed: drawn always, used only when skew is injected.
  const int skewed_count = std::max(1, tasks / 25);
  std::set<int> skewed;
  for (int pick = 0; pick < skewed_count; ++pick) {
    skewed.insert(static_cast<int>(random.UniformInt(0, tasks - 1)));
  }
  const double per_task = shuffle_bytes_total / tasks;
  const double remote_share = executors > 1 ? 1.0 - 1.0 / executors : 0.0;
  for (int index = 0; index < tasks; ++index) {
    AttemptDraft success;
    TaskMetricsPlan& metrics = success.metrics;
    const TaskEffects effects = DrawEffects(random, knobs, true);
    const double skew = skewed.contains(index) ? knobs.skew_factor : 1.0;
    const double read = per_task * random.LogNormalFactor(0.1) * skew;
    metrics.remote_bytes_read = Round(read * remote_share);
    metrics.local_bytes_read = Round(read) - metrics.remote_bytes_read;
    metrics.remote_blocks = Round(shape.map_tasks * remote_share);
    metrics.local_blocks = shape.map_tasks - metrics.remote_blocks;
    metrics.shuffle_records_read = Round(read / 41.0);
    ApplySpill(random, effects, read, metrics);
    double compute =
        (read / kShuffleReadBytesPerMs) * random.LogNormalFactor(0.18) * effects.spill_slowdown + 30;
    double write_ms = 0;
    const double write_jitter = random.LogNormalFactor(0.15);
    if (writes) {
      const double output = read * 0.55;
      metrics.output_bytes = Round(output);
      metrics.output_records = metrics.shuffle_records_read;
      write_ms = output / (knobs.write_bytes_per_second / 1000.0) * write_jitter;
    }
    // Fetch wait is part of the run time: the task waited for shuffle blocks instead of computing.
    const double fetch_share = std::clamp(knobs.fetch_wait_share * random.Uniform(0.5, 1.5), 0.0, 0.9);
    const double busy = compute / (1.0 - effects.gc_share) + write_ms;
    const double fetch_wait = busy * fetch_share / (1.0 - fetch_share);
    metrics.fetch_wait_ms = Round(fetch_wait);
    metrics.remote_requests_ms = Round(fetch_wait + compute * 0.05);
    success.duration_ms = FinishTiming(random, effects, compute, write_ms + fetch_wait, metrics);
    if (!writes) metrics.result_size = Round(std::min(read * 0.002, 8 * kMiB)) + metrics.result_size;
    draft.attempts[static_cast<std::size_t>(index)].push_back(std::move(success));
    AddFailures(random, knobs, draft.attempts[static_cast<std::size_t>(index)]);
  }
  return draft;
}

struct Slot {
  int executor = 0;
  EpochMillis free_ms = 0;
  EpochMillis dies_ms = kNever;
  bool dead = false;
};

// Runs a stage's drafted attempts on the executor slots, list-scheduling style: each pending task
// goes to the slot free first; failed attempts go to the back of the queue, as Spark re-queues
// them. Returns the time the last attempt ended.
EpochMillis ScheduleStage(OperationPlan& plan, int stage_index, const StageDraft& draft, EpochMillis start_ms,
                          const ExecutorPool& pool, RandomSource& random) {
  std::vector<Slot> slots;
  for (int executor : pool.NotRemovedAt(start_ms)) {
    const ExecutorRecord& record = pool.at(executor);
    for (int core = 0; core < record.cores; ++core) {
      Slot slot;
      slot.executor = executor;
      slot.free_ms = std::max(start_ms, record.added_ms) + random.UniformInt(2, 25);
      slot.dies_ms = record.removed_ms.value_or(kNever);
      slots.push_back(slot);
    }
  }
  const int tasks = static_cast<int>(draft.attempts.size());
  std::deque<int> pending;
  for (int index = 0; index < tasks; ++index) pending.push_back(index);
  std::vector<std::size_t> next_draft(static_cast<std::size_t>(tasks), 0);
  std::vector<int> attempts_made(static_cast<std::size_t>(tasks), 0);
  std::vector<int> failures(static_cast<std::size_t>(tasks), 0);
  EpochMillis last_end = start_ms;
  const std::size_t first_task = plan.tasks.size();
  StagePlan& stage = plan.stages[static_cast<std::size_t>(stage_index)];

  while (!pending.empty()) {
    Slot* slot = nullptr;
    for (Slot& candidate : slots) {
      if (candidate.dead) continue;
      if (candidate.free_ms >= candidate.dies_ms) {
        candidate.dead = true;
        continue;
      }
      if (!slot || candidate.free_ms < slot->free_ms) slot = &candidate;
    }
    if (!slot) break;  // no executor left: what remains never runs (the stage is left running)
    const int index = pending.front();
    pending.pop_front();
    const auto idx = static_cast<std::size_t>(index);
    const AttemptDraft& attempt =
        draft.attempts[idx][std::min(next_draft[idx], draft.attempts[idx].size() - 1)];
    TaskPlan task;
    task.stage = stage_index;
    task.index = index;
    task.attempt = attempts_made[idx]++;
    task.executor = slot->executor;
    task.launch_ms = slot->free_ms + random.UniformInt(0, 6);
    const EpochMillis would_finish = task.launch_ms + std::max<EpochMillis>(1, Round(attempt.duration_ms));
    if (would_finish > slot->dies_ms) {
      // The executor died under the task: Spark reports the loss, without metrics, and retries.
      task.outcome = TaskOutcome::kExecutorLost;
      task.finish_ms = std::max(task.launch_ms, slot->dies_ms);
      task.has_metrics = false;
      task.loss_reason = pool.at(slot->executor).removed_reason;
      slot->dead = true;
      pending.push_back(index);
    } else {
      task.outcome = attempt.outcome;
      task.finish_ms = would_finish;
      task.metrics = attempt.metrics;
      task.exception_class = attempt.exception_class;
      task.exception_message = attempt.exception_message;
      ++next_draft[idx];
      slot->free_ms = would_finish + random.UniformInt(1, 8);
      if (task.outcome == TaskOutcome::kExceptionFailure) {
        ++failures[idx];
        if (failures[idx] < kMaxTaskFailures) pending.push_back(index);
      }
    }
    last_end = std::max(last_end, task.finish_ms);
    const bool aborts = task.outcome == TaskOutcome::kExceptionFailure && failures[idx] >= kMaxTaskFailures;
    plan.tasks.push_back(std::move(task));
    if (aborts) {
      // The stage is aborted: its running attempts are killed, pending ones never start.
      const EpochMillis abort_ms = plan.tasks.back().finish_ms;
      stage.aborting_task = static_cast<int>(plan.tasks.size() - 1);
      for (std::size_t t = first_task; t + 1 < plan.tasks.size(); ++t) {
        TaskPlan& running = plan.tasks[t];
        if (running.finish_ms > abort_ms && running.outcome == TaskOutcome::kSuccess) {
          running.outcome = TaskOutcome::kKilled;
          running.finish_ms = abort_ms + random.UniformInt(5, 60);
          running.metrics.output_bytes = 0;
          running.metrics.output_records = 0;
          last_end = std::max(last_end, running.finish_ms);
        }
      }
      pending.clear();
      return abort_ms;
    }
  }
  return last_end;
}

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
