// gc-pressure: executors spent a large share of task run time in JVM garbage collection.
//
// Per stage: fires when Σ JVM GC time ≥ min_gc_share of Σ executor run time, with at least
// min_run_seconds of run time (the floor), and the impact passes the gate. When no stage fires,
// the scope as a whole is judged the same way (GC spread thinly over many short stages).
// Impact: stage duration × GC share (for the whole scope: its compute and io_write time × GC
// share). GC pauses stop the task threads, so removing them would shorten the stage by about the
// share of task time they took.
#include <algorithm>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

void AddGcFixes(const DiagnosisScope& scope, Finding& finding) {
  const std::string memory = PropertyOr(scope, "spark.executor.memory", "1g");
  const std::string cores = PropertyOr(scope, "spark.executor.cores", "unset");
  finding.evidence.push_back(Setting("spark.executor.memory", memory));
  finding.evidence.push_back(Setting("spark.executor.cores", cores));
  finding.fix = {
      "more heap per task: spark.executor.memory (now " + memory +
          ", e.g. 1.5-2x) or fewer concurrent tasks "
          "(spark.executor.cores, now " +
          cores + ")",
      "use G1 with room to work: spark.executor.extraJavaOptions=-XX:+UseG1GC "
      "-XX:InitiatingHeapOccupancyPercent=35",
      "keep less on the heap: prefer DataFrame operations over UDFs and RDD objects, cache with "
      "MEMORY_AND_DISK_SER, use Kryo (spark.serializer=org.apache.spark.serializer.KryoSerializer)",
      "smaller partitions hold less at once: raise spark.sql.shuffle.partitions",
  };
}

}  // namespace

void GcPressureRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const GcPressureThresholds& t = scope.thresholds->gc_pressure;
  if (!t.enabled) return;
  bool stage_fired = false;
  std::int64_t total_gc_ms = 0;
  std::int64_t total_run_ms = 0;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::TaskStatistics& tasks = stage->tasks;
    total_gc_ms += tasks.jvm_gc_time_ms;
    total_run_ms += tasks.executor_run_time_ms;
    if (static_cast<double>(tasks.executor_run_time_ms) < t.min_run_seconds * 1000) continue;
    const double share =
        static_cast<double>(tasks.jvm_gc_time_ms) / static_cast<double>(tasks.executor_run_time_ms);
    if (share < t.min_gc_share) continue;
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    if (!duration_ms) continue;
    const double impact = static_cast<double>(*duration_ms) / 1000.0 * std::min(share, 1.0);
    if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;
    stage_fired = true;
    Finding finding =
        NewFinding(kGcPressure, StageScope(scope, *stage), impact, SeverityForImpact(scope, impact));
    finding.title = StageLabel(*stage) + ": JVM GC took " + Percent(share) + " of " +
                    Seconds(static_cast<double>(tasks.executor_run_time_ms) / 1000) + " task run time";
    finding.evidence = {
        Crossed("gc_share", share, "share", t.min_gc_share, Comparison::kAtLeast),
        Figure("jvm_gc_time_ms", static_cast<double>(tasks.jvm_gc_time_ms), "ms"),
        Crossed("executor_run_time_ms", static_cast<double>(tasks.executor_run_time_ms), "ms",
                t.min_run_seconds * 1000, Comparison::kAtLeast),
    };
    AddGcFixes(scope, finding);
    findings.push_back(std::move(finding));
  }
  if (stage_fired || total_run_ms <= 0 || static_cast<double>(total_run_ms) < t.min_run_seconds * 1000)
    return;
  const double share = static_cast<double>(total_gc_ms) / static_cast<double>(total_run_ms);
  if (share < t.min_gc_share || !scope.phases) return;
  const double busy_seconds =
      static_cast<double>(scope.phases->TotalMs(listener::correlate::Phase::kCompute) +
                          scope.phases->TotalMs(listener::correlate::Phase::kIoWrite)) /
      1000.0;
  const double impact = busy_seconds * std::min(share, 1.0);
  if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) return;
  Finding finding = NewFinding(kGcPressure, scope.base, impact, SeverityForImpact(scope, impact));
  finding.title = "JVM GC took " + Percent(share) + " of " +
                  Seconds(static_cast<double>(total_run_ms) / 1000) + " task run time across the stages";
  finding.evidence = {
      Crossed("gc_share", share, "share", t.min_gc_share, Comparison::kAtLeast),
      Figure("jvm_gc_time_ms", static_cast<double>(total_gc_ms), "ms"),
      Crossed("executor_run_time_ms", static_cast<double>(total_run_ms), "ms", t.min_run_seconds * 1000,
              Comparison::kAtLeast),
  };
  AddGcFixes(scope, finding);
  findings.push_back(std::move(finding));
}

}  // namespace sparktrace::diagnose::rules
