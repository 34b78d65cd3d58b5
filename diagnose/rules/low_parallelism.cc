// low-parallelism: a stage that ran fewer tasks than there were free task slots, while each task moved a
// lot of data or ran far longer than the scope's typical task: the job waited on a few cores while the
// others idled (a repartition(2) or coalesce(n) before a write, spark.sql.shuffle.partitions set far
// too low, an unsplittable input file, a single-partition UDF).
//
// Free slots: the task slots (cores / spark.task.cpus) of the executors alive when the stage's first task
// launched, less the slots the application's other stages kept busy while it ran (their task time over
// their duration, for the share of its run they overlapped): a Spark Connect server runs several
// operations' stages at once, and slots another stage used were not free. Logs without ExecutorAdded events
// (local mode) have no known slots: not judged. Fires when the stage had fewer tasks than free slots and
// either
//   * its tasks each moved ≥ min_task_bytes: the largest of the median successful task's input + shuffle
//     read, and the stage's output and shuffle write per successful task (Spark packs 128 MiB into a
//     file partition, spark.sql.files.maxPartitionBytes, and AQE aims at 64 MiB per shuffle partition:
//     512 MiB is four partitions' worth in one task), or
//   * its median task ran ≥ min_duration_ratio × the scope's typical task (the task-weighted median of
//     its stages' median task durations) and ≥ min_task_seconds,
// and the impact passes the gate.
// Impact: the stage's duration less its duration at full parallelism. Its task time T is split into
// n partitions (bytes / target_partition_bytes on the bytes path, else T / the typical task), at least
// its own task count; n partitions on F free slots run ceil(n / F) waves of T / n each. That assumes
// the work divides evenly and ignores per-task overhead (scheduling, file opening), both small at
// 128 MiB partitions.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

using listener::correlate::StageAttemptRecord;
using listener::events::EpochMillis;

int TaskCpus(const DiagnosisScope& scope) {
  const std::string text = PropertyOr(scope, "spark.task.cpus", "1");
  int task_cpus = 1;
  std::from_chars(text.data(), text.data() + text.size(), task_cpus);
  return std::max(task_cpus, 1);
}

// Task slots of the executors alive at `at_ms`.
double SlotsAliveAt(const DiagnosisScope& scope, EpochMillis at_ms) {
  const int task_cpus = TaskCpus(scope);
  double slots = 0;
  for (const listener::correlate::ExecutorRecord& executor : scope.model->executors()) {
    if (executor.added_ms > at_ms || (executor.removed_ms && *executor.removed_ms <= at_ms)) continue;
    slots += std::max(1, executor.total_cores / task_cpus);
  }
  return slots;
}

// Slots the application's other stage attempts kept busy while this one ran, on average over its run:
// each overlapping one's task time over its duration (its average parallelism), for the share of this
// stage's run they overlapped. Walks every stage attempt of the model: called only for the few stages
// that pass the other tests.
double SlotsBusyDuring(const DiagnosisScope& scope, const StageAttemptRecord& stage, EpochMillis from_ms,
                       EpochMillis to_ms) {
  if (to_ms <= from_ms) return 0;
  double busy_slot_ms = 0;
  for (const auto& [key, other] : scope.model->stages()) {
    if (&other == &stage) continue;
    const std::optional<EpochMillis> start = other.StartMs();
    const std::optional<std::int64_t> duration_ms = StageDurationMs(other);
    if (!start || !duration_ms || *duration_ms <= 0) continue;
    const EpochMillis overlap_ms = std::min(to_ms, *start + *duration_ms) - std::max(from_ms, *start);
    if (overlap_ms <= 0) continue;
    busy_slot_ms += static_cast<double>(other.tasks.task_time_ms) / static_cast<double>(*duration_ms) *
                    static_cast<double>(overlap_ms);
  }
  return busy_slot_ms / static_cast<double>(to_ms - from_ms);
}

// The scope's typical task: the median of its stages' median task durations, each weighted by its
// successful tasks (one quantile per stage; the exact median when a stage's tasks are alike).
double TypicalTaskMs(const DiagnosisScope& scope) {
  std::vector<std::pair<double, double>> medians;  // (median ms, tasks)
  double total = 0;
  for (const StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::DurationSample& durations = stage->tasks.successful_durations;
    if (durations.count() == 0) continue;
    medians.emplace_back(static_cast<double>(durations.Quantile(0.5).value_or(0)),
                         static_cast<double>(durations.count()));
    total += static_cast<double>(durations.count());
  }
  std::sort(medians.begin(), medians.end());
  double seen = 0;
  for (const auto& [median_ms, tasks] : medians) {
    seen += tasks;
    if (seen * 2 >= total) return median_ms;
  }
  return 0;
}

// The partition count the fixes suggest, and how it was sized.
struct Suggestion {
  std::int64_t partitions = 0;
  std::string sizing;  // "5.0 GiB / 128 MiB, in whole waves of the 4 free slots"
};

// Fixes in the order they apply: a stage that writes output is held by the partitioning the write
// inherits (a repartition(k) or coalesce(k) before it), a shuffle-reading stage by the shuffle's
// partition count (spark.sql.shuffle.partitions, unless the query or AQE set fewer), a scanning stage by
// how its files split; long tasks over little data by where the rows are split before the expensive step.
void AddPartitioningFixes(const DiagnosisScope& scope, const listener::correlate::TaskStatistics& tasks,
                          bool bytes_path, std::int64_t task_count, const Suggestion& suggestion,
                          Finding& finding) {
  const std::string n = std::to_string(suggestion.partitions);
  const std::string count = std::to_string(task_count);
  const std::string shuffle_partitions = PropertyOr(scope, "spark.sql.shuffle.partitions", "200");
  const std::string adaptive = AdaptiveEnabled(scope);
  const std::string advisory = PropertyOr(scope, "spark.sql.adaptive.advisoryPartitionSizeInBytes", "64MB");
  finding.evidence.push_back(Setting("spark.sql.shuffle.partitions", shuffle_partitions));
  finding.evidence.push_back(Setting("spark.sql.adaptive.enabled", adaptive));
  finding.evidence.push_back(Setting("spark.sql.adaptive.advisoryPartitionSizeInBytes", advisory));
  if (!bytes_path) {
    finding.fix.push_back(
        "the tasks are long for the data they read (a UDF, a model, a call per row): df.repartition(" + n +
        ") before the expensive step spreads its rows over the free slots (n = " + suggestion.sizing + ")");
  }
  if (tasks.WritesOutput()) {
    finding.fix.push_back(
        "repartition before the write: df.repartition(" + n + ").write... (n = " + suggestion.sizing +
        "); a repartition(k) or coalesce(k) before the write held it to " + count + " tasks: raise its k");
  }
  if (tasks.shuffle_read_bytes > 0) {
    std::int64_t configured = 200;
    std::from_chars(shuffle_partitions.data(), shuffle_partitions.data() + shuffle_partitions.size(),
                    configured);
    if (task_count >= configured) {
      finding.fix.push_back("more shuffle partitions: spark.sql.shuffle.partitions=" + n + " (now " +
                            shuffle_partitions + "; n = " + suggestion.sizing + ")");
    } else if (!tasks.WritesOutput()) {
      finding.fix.push_back("the " + count + " tasks are fewer than spark.sql.shuffle.partitions (" +
                            shuffle_partitions +
                            "): a repartition(k) or coalesce(k) in the query set the count: raise its k to " +
                            n + " (n = " + suggestion.sizing + ")");
    }
    finding.fix.push_back(
        "let AQE size the partitions from their bytes: " +
        (adaptive == "true" ? std::string() : "spark.sql.adaptive.enabled=true (now " + adaptive + "), ") +
        "spark.sql.adaptive.advisoryPartitionSizeInBytes=128m (now " + advisory +
        ") with a repartition without a count or the REBALANCE hint, which AQE splits at that size (it "
        "merges small partitions, and never splits a repartition(k) with an explicit k)");
  }
  if (tasks.input_bytes > 0 && tasks.input_bytes >= tasks.shuffle_read_bytes) {
    finding.evidence.push_back(Setting("spark.sql.files.maxPartitionBytes",
                                       PropertyOr(scope, "spark.sql.files.maxPartitionBytes", "128MB")));
    finding.fix.push_back(
        "split the input: spark.sql.files.maxPartitionBytes=128m splits splittable files (a coalesce(k) "
        "after the read merges them again: use repartition(" +
        n + ")); a gzip CSV/JSON file is read by one task whatever the setting: df.repartition(" + n +
        ") right after the read, or store it splittable (Parquet, bzip2, uncompressed)");
  }
  if (finding.fix.empty()) {  // the tasks make their bytes (an explode, a cross join) from little input
    finding.fix.push_back("df.repartition(" + n +
                          ") before the step that multiplies the rows (n = " + suggestion.sizing + ")");
  }
}

}  // namespace

void LowParallelismRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const LowParallelismThresholds& t = scope.thresholds->low_parallelism;
  if (!t.enabled || scope.model->executors().empty()) return;
  std::optional<double> typical_task_ms;  // computed once a stage needs it
  for (const StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::TaskStatistics& tasks = stage->tasks;
    const listener::correlate::DurationSample& durations = tasks.successful_durations;
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    const std::optional<EpochMillis> first_launch =
        tasks.first_launch_ms ? tasks.first_launch_ms : stage->StartMs();
    if (durations.count() == 0 || !duration_ms || *duration_ms <= 0 || !first_launch) continue;
    const std::int64_t task_count = std::max<std::int64_t>(stage->num_tasks, durations.count());
    const double slots_alive = SlotsAliveAt(scope, *first_launch);
    if (static_cast<double>(task_count) >= slots_alive) continue;  // no free slot, whatever else ran

    const double successful = static_cast<double>(durations.count());
    const double task_bytes =
        std::max({static_cast<double>(tasks.successful_task_bytes.Quantile(0.5).value_or(0)),
                  static_cast<double>(tasks.output_bytes) / successful,
                  static_cast<double>(tasks.shuffle_write_bytes) / successful});
    const double median_ms = static_cast<double>(durations.Quantile(0.5).value_or(0));
    if (!typical_task_ms) typical_task_ms = TypicalTaskMs(scope);
    const double duration_ratio = median_ms / std::max(*typical_task_ms, 1.0);
    const bool bytes_path = task_bytes >= static_cast<double>(t.min_task_bytes);
    const bool duration_path =
        duration_ratio >= t.min_duration_ratio && median_ms >= t.min_task_seconds * 1000;
    if (!bytes_path && !duration_path) continue;
    const double slots_busy = std::min(
        SlotsBusyDuring(scope, *stage, *stage->StartMs(), *stage->StartMs() + *duration_ms), slots_alive);
    const double free_slots = std::floor(slots_alive - slots_busy);  // busy is an average: fractional
    if (static_cast<double>(task_count) >= free_slots) continue;

    // Full parallelism: the task time in `partitions` pieces, on the free slots in whole waves.
    const double task_time_ms = static_cast<double>(tasks.task_time_ms);
    const double moved_bytes = static_cast<double>(std::max(
        {tasks.input_bytes + tasks.shuffle_read_bytes, tasks.output_bytes, tasks.shuffle_write_bytes}));
    const double pieces = bytes_path ? std::ceil(moved_bytes / static_cast<double>(std::max<std::int64_t>(
                                                                   t.target_partition_bytes, 1)))
                                     : std::ceil(task_time_ms / std::max(*typical_task_ms, 1.0));
    double partitions = std::max(static_cast<double>(task_count), pieces);
    if (partitions > free_slots) partitions = std::ceil(partitions / free_slots) * free_slots;
    const double ideal_ms = std::ceil(partitions / free_slots) * task_time_ms / partitions;
    const double stage_ms = static_cast<double>(*duration_ms);
    const double impact = std::clamp(stage_ms - ideal_ms, 0.0, stage_ms) / 1000.0;
    if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;

    Finding finding =
        NewFinding(kLowParallelism, StageScope(scope, *stage), impact, SeverityForImpact(scope, impact));
    const bool one = task_count == 1;
    finding.title =
        StageLabel(*stage) + ": " + std::to_string(task_count) + (one ? " task" : " tasks") + " on " +
        std::to_string(static_cast<std::int64_t>(free_slots)) + " free slots " +
        (bytes_path ? "moved " + Bytes(task_bytes) + (one ? "" : " each (" + Bytes(moved_bytes) + " in all)")
                    : "ran " + Seconds(median_ms / 1000) + (one ? ", " : " each, ") + Ratio(duration_ratio) +
                          " the typical task (" + Seconds(*typical_task_ms / 1000) + ")") +
        ", the stage " + Seconds(stage_ms / 1000) + "; in " +
        std::to_string(static_cast<std::int64_t>(partitions)) + " partitions it would take ~" +
        Seconds(ideal_ms / 1000);
    finding.evidence = {
        Crossed("tasks", static_cast<double>(task_count), "count", free_slots - 1, Comparison::kAtMost),
        Figure("free_slots", free_slots, "count"),
        Figure("slots_alive", slots_alive, "count"),
        Figure("slots_busy_with_other_stages", slots_busy, "count"),
        Crossed("task_bytes", task_bytes, "bytes", static_cast<double>(t.min_task_bytes),
                Comparison::kAtLeast),
        Crossed("task_duration_ratio", duration_ratio, "ratio", t.min_duration_ratio, Comparison::kAtLeast),
        Figure("median_task_ms", median_ms, "ms"),
        Figure("typical_task_ms", *typical_task_ms, "ms"),
        Figure("moved_bytes", moved_bytes, "bytes"),
        Figure("stage_duration_ms", stage_ms, "ms"),
        Figure("task_time_ms", task_time_ms, "ms"),
        Figure("suggested_partitions", partitions, "count"),
        Figure("full_parallelism_stage_ms", ideal_ms, "ms"),
    };
    Suggestion suggestion;
    suggestion.partitions = static_cast<std::int64_t>(partitions);
    const std::string free_text = std::to_string(static_cast<std::int64_t>(free_slots));
    suggestion.sizing = bytes_path ? Bytes(moved_bytes) + " / " +
                                         Bytes(static_cast<double>(t.target_partition_bytes)) +
                                         ", in whole waves of the " + free_text + " free slots"
                                   : "the task time in pieces of the typical task, in whole waves of the " +
                                         free_text + " free slots";
    AddPartitioningFixes(scope, tasks, bytes_path, task_count, suggestion, finding);
    findings.push_back(std::move(finding));
  }
}

}  // namespace sparktrace::diagnose::rules
