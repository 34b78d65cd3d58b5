#include "sim/eventlog/stage_draft.h"

#include <algorithm>
#include <set>
#include <utility>

namespace sparktrace::sim::eventlog {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// Executor-side rates of a healthy job (per task, i.e. per core).
constexpr double kScanBytesPerMs = 60.0 * kMiB / 1000.0;
constexpr double kShuffleReadBytesPerMs = 80.0 * kMiB / 1000.0;
constexpr double kShuffleWriteBytesPerNs = 200.0 * kMiB / 1e9;

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

// Adds the failure attempts the scenario asks for in front of a task's successful attempt.
void AddFailures(RandomSource& random, const ScenarioKnobs& knobs, std::vector<AttemptDraft>& attempts) {
  const double fail_draw = random.Uniform();
  const double kind_draw = random.Uniform();
  const double fraction = random.Uniform(0.3, 0.9);
  if (fail_draw < knobs.failing_task_share) {
    attempts.insert(attempts.begin(), FailedAttempt(attempts.front(), fraction, kind_draw < 0.5));
  }
}

}  // namespace

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
    const double compute = (input / kScanBytesPerMs) * random.LogNormalFactor(0.18) * effects.spill_slowdown *
                               knobs.map_compute_factor +
                           40;
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

}  // namespace sparktrace::sim::eventlog
