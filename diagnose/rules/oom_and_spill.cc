// oom-and-spill: execution memory ran short. Per stage: tasks spilled much of what they processed
// to disk, or tasks failed with out-of-memory errors; per application (or operation window):
// executors were lost to memory (exit code 137/143, container killed, OutOfMemoryError).
//
// Spill fires when a stage of at least min_stage_seconds spilled ≥ min_spill_bytes (memory bytes
// spilled, Spark's "Spill (Memory)") and that is ≥ min_spill_ratio of the bytes it processed (input
// + shuffle read), and the impact passes the gate — or needs no gate, being large (≥
// ungated_spill_ratio of what it processed, or ≥ ungated_disk_spill_bytes on disk); or when one of
// its tasks spilled ≥ min_task_disk_spill_bytes to disk. Out-of-memory fires from min_oom_tasks failed
// tasks or min_oom_executors lost executors, without an impact gate: it is always critical.
// Impact:
//   spill: the disk bytes spilled are written and read back once, at spill_disk_mib_per_second per
//     task; that task time spread over the stage's average parallelism is wall time, bounded by the
//     stage's duration. (Sorting and (de)serialising cost more; this is a floor.)
//   OOM tasks: the task time of the failed attempts, spread over the stage's average parallelism
//     (the retries redo that work).
//   lost executors: their removal costs the tasks they ran; the failed tasks (task-failures) carry
//     that time, so the application-scope finding states 0 s of its own.
#include <algorithm>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

void AddMemoryFixes(const DiagnosisScope& scope, Finding& finding, bool out_of_memory) {
  const std::string executor_memory = PropertyOr(scope, "spark.executor.memory", "1g");
  const std::string overhead = PropertyOr(scope, "spark.executor.memoryOverhead", "max(384m, 10%)");
  const std::string fraction = PropertyOr(scope, "spark.memory.fraction", "0.6");
  const std::string partitions = PropertyOr(scope, "spark.sql.shuffle.partitions", "200");
  finding.evidence.push_back(Setting("spark.executor.memory", executor_memory));
  finding.evidence.push_back(Setting("spark.sql.shuffle.partitions", partitions));
  finding.fix.push_back("give each task less data: raise spark.sql.shuffle.partitions (now " + partitions +
                        ", e.g. 2-4x) or let AQE split partitions (spark.sql.adaptive.enabled=true, "
                        "spark.sql.adaptive.advisoryPartitionSizeInBytes=64m)");
  finding.fix.push_back("give each task more memory: spark.executor.memory (now " + executor_memory +
                        ", e.g. 1.5-2x) or fewer concurrent tasks per executor (spark.executor.cores); "
                        "spark.memory.fraction=0.7 (now " +
                        fraction + ")");
  if (out_of_memory) {
    finding.fix.push_back(
        "containers killed for memory (exit 137/143) need off-heap headroom: "
        "spark.executor.memoryOverhead=<20% of spark.executor.memory> (now " +
        overhead + ")");
  }
}

}  // namespace

void OomAndSpillRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const OomAndSpillThresholds& t = scope.thresholds->oom_and_spill;
  if (!t.enabled) return;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::TaskStatistics& tasks = stage->tasks;
    const double processed = static_cast<double>(tasks.input_bytes + tasks.shuffle_read_bytes);
    const double spilled = static_cast<double>(tasks.memory_bytes_spilled);
    const double spill_ratio = spilled / std::max(processed, 1.0);
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    const double duration_seconds = duration_ms ? static_cast<double>(*duration_ms) / 1000.0 : 0;
    const double parallelism = AverageParallelism(*stage);

    const bool long_enough = duration_seconds >= t.min_stage_seconds;
    const bool task_spilled = long_enough && tasks.max_task_disk_bytes_spilled >= t.min_task_disk_spill_bytes;
    bool spill =
        long_enough && spilled >= static_cast<double>(t.min_spill_bytes) && spill_ratio >= t.min_spill_ratio;
    const double spill_task_seconds =
        2.0 * static_cast<double>(tasks.disk_bytes_spilled) /
        (std::max(t.spill_disk_mib_per_second, 1e-3) * static_cast<double>(kMiB));
    const double spill_impact = std::min(duration_seconds, spill_task_seconds / parallelism);
    // The impact is a floor (disk bytes at a fast disk's speed, no sorting or serialising): large
    // spill is reported even when the floor is under the gate.
    const bool large =
        spill_ratio >= t.ungated_spill_ratio || tasks.disk_bytes_spilled >= t.ungated_disk_spill_bytes;
    spill = (spill &&
             (large || PassesImpactGate(scope, spill_impact, t.min_impact_seconds, t.min_impact_share))) ||
            task_spilled;

    const bool out_of_memory = tasks.out_of_memory_tasks >= std::max<std::int64_t>(t.min_oom_tasks, 1);
    double oom_task_ms = 0;
    std::string oom_sample;
    for (const listener::correlate::TaskFailureGroup& group : tasks.failure_groups) {
      if (!group.out_of_memory) continue;
      oom_task_ms += static_cast<double>(group.task_time_ms);
      if (oom_sample.empty()) oom_sample = group.sample_message.substr(0, 200);
    }
    if (!spill && !out_of_memory) continue;
    const double oom_impact = std::min(duration_seconds, oom_task_ms / 1000.0 / parallelism);

    const double impact = (spill ? spill_impact : 0) + (out_of_memory ? oom_impact : 0);
    Finding finding = NewFinding(kOomAndSpill, StageScope(scope, *stage), impact,
                                 out_of_memory ? Severity::kCritical : SeverityForImpact(scope, impact));
    finding.title =
        StageLabel(*stage) + ": " +
        (out_of_memory ? std::to_string(tasks.out_of_memory_tasks) + " tasks failed out of memory" : "") +
        (out_of_memory && spill ? "; " : "") +
        (spill ? "spilled " + Bytes(spilled) + " (" + Bytes(static_cast<double>(tasks.disk_bytes_spilled)) +
                     " on disk), " + Ratio(spill_ratio) + " the " + Bytes(processed) + " it processed" +
                     (task_spilled
                          ? "; one task spilled " +
                                Bytes(static_cast<double>(tasks.max_task_disk_bytes_spilled)) + " to disk"
                          : "")
               : "");
    if (spill) {
      finding.evidence.push_back(Crossed("memory_spilled_bytes", spilled, "bytes",
                                         static_cast<double>(t.min_spill_bytes), Comparison::kAtLeast));
      finding.evidence.push_back(
          Figure("disk_spilled_bytes", static_cast<double>(tasks.disk_bytes_spilled), "bytes"));
      finding.evidence.push_back(Figure("processed_bytes", processed, "bytes"));
      finding.evidence.push_back(
          Crossed("spill_ratio", spill_ratio, "ratio", t.min_spill_ratio, Comparison::kAtLeast));
      finding.evidence.push_back(
          Crossed("max_task_disk_spilled_bytes", static_cast<double>(tasks.max_task_disk_bytes_spilled),
                  "bytes", static_cast<double>(t.min_task_disk_spill_bytes), Comparison::kAtLeast));
    }
    if (out_of_memory) {
      finding.evidence.push_back(Crossed("out_of_memory_tasks",
                                         static_cast<double>(tasks.out_of_memory_tasks), "count",
                                         static_cast<double>(t.min_oom_tasks), Comparison::kAtLeast));
      finding.evidence.push_back(Setting("out_of_memory_sample", oom_sample));
    }
    if (tasks.max_peak_execution_memory_bytes) {
      finding.evidence.push_back(Figure("max_peak_execution_memory_bytes",
                                        static_cast<double>(*tasks.max_peak_execution_memory_bytes),
                                        "bytes"));
    }
    AddMemoryFixes(scope, finding, out_of_memory);
    findings.push_back(std::move(finding));
  }

  // Executors lost to memory, within the scope's window.
  std::int64_t lost = 0;
  std::string sample;
  const std::optional<listener::correlate::TimeWindow> window =
      scope.phases ? std::optional<listener::correlate::TimeWindow>(scope.phases->window) : std::nullopt;
  for (const listener::correlate::ExecutorRecord& executor : scope.model->executors()) {
    if (!executor.removed_ms || !listener::correlate::LooksLikeOutOfMemory(executor.removed_reason)) continue;
    if (window && (*executor.removed_ms < window->start_ms || *executor.removed_ms > window->end_ms))
      continue;
    ++lost;
    if (sample.empty())
      sample = "executor " + executor.executor_id + ": " + executor.removed_reason.substr(0, 200);
  }
  if (lost < std::max<std::int64_t>(t.min_oom_executors, 1)) return;
  // Impact 0: carried by the failed tasks (task-failures), see above.
  Finding finding = NewFinding(kOomAndSpill, scope.base, 0, Severity::kCritical);
  finding.title =
      std::to_string(lost) + " executors were lost to memory (container killed / exit 137/143 / OOM)";
  finding.evidence = {Crossed("executors_lost_to_memory", static_cast<double>(lost), "count",
                              static_cast<double>(t.min_oom_executors), Comparison::kAtLeast),
                      Setting("executor_loss_sample", sample)};
  AddMemoryFixes(scope, finding, true);
  findings.push_back(std::move(finding));
}

}  // namespace sparktrace::diagnose::rules
