// idle-executors: executors were alive, and paid for, but ran no task. Judged for the application
// only: executors are shared by every operation, so an operation cannot own their idle time.
//
// Slot time = Σ over executors of (lifetime within the window) × task slots (cores / spark.task.cpus);
// busy = Σ task durations (ExecutorUsage); idle = slot time − busy. The idle time is split into
// driver-side gaps (no stage running: the idle phase, while executors were alive) and waiting on a
// tail (stages running but slots empty: the last tasks of a stage, too few partitions).
// Slots idle while a straggler finished (stages whose durations data-skew's thresholds call skewed:
// (max − median task duration) × the other slots) are that rule's finding and are left out here.
// Fires when the rest of the idle time is ≥ min_idle_share of slot time, or its driver-side gaps
// alone are ≥ min_driver_gap_share of it (tails and waves leave healthy applications 10-40 % idle;
// nothing but the driver makes executors wait with no stage at all), or the slots left empty while
// narrow stages ran (fewer tasks than a quarter of the slots alive, e.g. a single-partition stage:
// (slots − tasks) × its duration, at most the tail idle time) are ≥ min_narrow_stage_share of it;
// in each case ≥ min_idle_slot_seconds, and the impact passes the gate. Executors of logs without
// ExecutorAdded events (local mode) are unknown: never fires. Impact: idle slot time ÷ the average number of
// slots alive: the idle time as wall time of the whole allocation. It is cost more than lost wall time:
// driver gaps are wall time nothing ran in, but the tail is partly the stragglers' time (see data-skew), so
// this is an upper bound.
#include <algorithm>
#include <charconv>
#include <map>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {

using listener::events::EpochMillis;

void IdleExecutorsRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const IdleExecutorsThresholds& t = scope.thresholds->idle_executors;
  if (!t.enabled || scope.is_operation() || !scope.phases || scope.model->executors().empty()) return;
  const listener::correlate::TimeWindow window = scope.phases->window;
  const std::string task_cpus_text = PropertyOr(scope, "spark.task.cpus", "1");
  int task_cpus = 1;
  std::from_chars(task_cpus_text.data(), task_cpus_text.data() + task_cpus_text.size(), task_cpus);
  task_cpus = std::max(task_cpus, 1);

  double slot_ms = 0;
  double gap_idle_ms = 0;
  std::map<std::string, double, std::less<>> alive_slot_ms;  // by executor id
  for (const listener::correlate::ExecutorRecord& executor : scope.model->executors()) {
    const EpochMillis from = std::max(executor.added_ms, window.start_ms);
    const EpochMillis to = std::min(executor.removed_ms.value_or(window.end_ms), window.end_ms);
    if (to <= from) continue;
    const double slots = std::max(1, executor.total_cores / task_cpus);
    slot_ms += static_cast<double>(to - from) * slots;
    alive_slot_ms[executor.executor_id] += static_cast<double>(to - from) * slots;
    for (const listener::correlate::PhaseInterval& interval : scope.phases->intervals) {
      if (interval.phase != listener::correlate::Phase::kIdle) continue;
      const EpochMillis overlap_from = std::max(from, interval.start_ms);
      const EpochMillis overlap_to = std::min(to, interval.end_ms);
      if (overlap_to > overlap_from) gap_idle_ms += static_cast<double>(overlap_to - overlap_from) * slots;
    }
  }
  if (slot_ms <= 0) return;
  double busy_ms = 0;
  for (const auto& [executor_id, usage] : scope.model->executor_usage()) {
    // Tasks of executors never added (the driver in local mode) have no slot time to fill.
    if (alive_slot_ms.contains(executor_id)) busy_ms += static_cast<double>(usage.busy_ms);
  }
  busy_ms = std::min(busy_ms, slot_ms);
  // Idle slot time behind stragglers, left to data-skew.
  const DataSkewThresholds& skew = scope.thresholds->data_skew;
  const double average_slots_alive = slot_ms / static_cast<double>(std::max<std::int64_t>(scope.WallMs(), 1));
  double straggler_idle_ms = 0;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::DurationSample& durations = stage->tasks.successful_durations;
    if (durations.count() < std::max<std::int64_t>(skew.min_tasks, 2)) continue;
    const double median = static_cast<double>(durations.Quantile(0.5).value_or(0));
    const double max = static_cast<double>(durations.max_ms());
    if (max / std::max(median, 1.0) < skew.min_duration_ratio ||
        (max - median) < skew.min_excess_seconds * 1000) {
      continue;
    }
    straggler_idle_ms += (max - median) * std::max(average_slots_alive - 1.0, 0.0);
  }
  const double idle_ms = std::max(0.0, slot_ms - busy_ms - straggler_idle_ms);
  const double idle_share = idle_ms / slot_ms;
  gap_idle_ms = std::min(gap_idle_ms, idle_ms);
  const double tail_idle_ms = idle_ms - gap_idle_ms;
  const double gap_share = gap_idle_ms / slot_ms;
  double narrow_idle_ms = 0;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    if (!duration_ms || static_cast<double>(stage->num_tasks) * 4 >= average_slots_alive) continue;
    narrow_idle_ms +=
        (average_slots_alive - static_cast<double>(stage->num_tasks)) * static_cast<double>(*duration_ms);
  }
  narrow_idle_ms = std::min(narrow_idle_ms, tail_idle_ms);
  const double narrow_share = narrow_idle_ms / slot_ms;
  if ((idle_share < t.min_idle_share && gap_share < t.min_driver_gap_share &&
       narrow_share < t.min_narrow_stage_share) ||
      idle_ms < t.min_idle_slot_seconds * 1000) {
    return;
  }
  const double wall_ms = static_cast<double>(std::max<std::int64_t>(scope.WallMs(), 1));
  const double average_slots = slot_ms / wall_ms;
  const double impact = idle_ms / average_slots / 1000.0;
  if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) return;

  // The executor that idled most, as an example.
  std::string most_idle;
  double most_idle_share = -1;
  for (const auto& [executor_id, alive] : alive_slot_ms) {
    double busy = 0;
    if (auto usage = scope.model->executor_usage().find(executor_id);
        usage != scope.model->executor_usage().end()) {
      busy = static_cast<double>(usage->second.busy_ms);
    }
    const double share = alive > 0 ? 1.0 - std::min(busy, alive) / alive : 0;
    if (share > most_idle_share) {
      most_idle_share = share;
      most_idle = executor_id;
    }
  }

  Finding finding = NewFinding(kIdleExecutors, scope.base, impact, SeverityForImpact(scope, impact));
  finding.title = "executors were idle " + Percent(idle_share) + " of their slot time (" +
                  Seconds(idle_ms / 1000) + " slot-seconds): " + Seconds(gap_idle_ms / 1000) +
                  " in driver-side gaps with no stage running, " + Seconds(tail_idle_ms / 1000) +
                  " waiting on stage tails";
  finding.evidence = {
      Crossed("idle_share", idle_share, "share", t.min_idle_share, Comparison::kAtLeast),
      Crossed("driver_gap_share", gap_share, "share", t.min_driver_gap_share, Comparison::kAtLeast),
      Crossed("narrow_stage_idle_share", narrow_share, "share", t.min_narrow_stage_share,
              Comparison::kAtLeast),
      Crossed("idle_slot_ms", idle_ms, "ms", t.min_idle_slot_seconds * 1000, Comparison::kAtLeast),
      Figure("slot_ms", slot_ms, "ms"),
      Figure("busy_slot_ms", busy_ms, "ms"),
      Figure("driver_gap_idle_slot_ms", gap_idle_ms, "ms"),
      Figure("tail_idle_slot_ms", tail_idle_ms, "ms"),
      Figure("straggler_idle_slot_ms_left_to_data_skew", straggler_idle_ms, "ms"),
      Figure("average_slots", average_slots, "count"),
      Setting("most_idle_executor", most_idle + " (" + Percent(most_idle_share) + " idle)"),
  };
  const std::string dynamic = PropertyOr(scope, "spark.dynamicAllocation.enabled", "false");
  finding.evidence.push_back(Setting("spark.dynamicAllocation.enabled", dynamic));
  if (dynamic != "true") {
    finding.fix.push_back(
        "release idle executors: spark.dynamicAllocation.enabled=true with "
        "spark.dynamicAllocation.shuffleTracking.enabled=true (or an external shuffle service), "
        "spark.dynamicAllocation.executorIdleTimeout=60s");
  } else {
    finding.fix.push_back(
        "release idle executors sooner: spark.dynamicAllocation.executorIdleTimeout=30s (now " +
        PropertyOr(scope, "spark.dynamicAllocation.executorIdleTimeout", "60s") +
        "), spark.dynamicAllocation.minExecutors lower (now " +
        PropertyOr(scope, "spark.dynamicAllocation.minExecutors", "0") + ")");
  }
  if (gap_idle_ms >= tail_idle_ms) {
    finding.fix.push_back(
        "driver-side gaps: move driver work (collect(), toPandas, Python loops, planning many "
        "small queries, output commits) off the critical path or run independent jobs "
        "concurrently (spark.scheduler.mode=FAIR)");
  } else {
    finding.fix.push_back(
        "stage tails: more, smaller partitions (spark.sql.shuffle.partitions, "
        "spark.sql.adaptive.advisoryPartitionSizeInBytes=64m), fix skew (see data-skew), "
        "spark.speculation=true for slow nodes");
  }
  findings.push_back(std::move(finding));
}

}  // namespace sparktrace::diagnose::rules
