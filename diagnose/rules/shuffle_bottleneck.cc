// shuffle-bottleneck: a stage whose tasks spent much of their run time waiting for shuffle blocks
// (fetch wait) or writing shuffle output (shuffle write time).
//
// Fires when (fetch wait + shuffle write time) ≥ min_shuffle_share of the stage's executor run time
// and ≥ min_shuffle_seconds in total (the floor), and the impact passes the gate. The partition
// sizes (average shuffle read per task: huge above huge_partition_bytes, tiny below
// tiny_partition_bytes with at least tiny_min_tasks tasks) are reported with it, with the
// spark.sql.shuffle.partitions that target_partition_bytes per task would need.
// Impact: stage duration × shuffle share. Tasks spend that share of their run time on shuffle I/O,
// so with it gone the stage, whose tasks run in parallel waves, would be that much shorter.
#include <algorithm>
#include <cmath>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {

void ShuffleBottleneckRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const ShuffleBottleneckThresholds& t = scope.thresholds->shuffle_bottleneck;
  if (!t.enabled) return;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::TaskStatistics& tasks = stage->tasks;
    if (tasks.executor_run_time_ms <= 0) continue;
    const double fetch_wait_ms = static_cast<double>(tasks.shuffle_fetch_wait_ms);
    const double write_ms = static_cast<double>(tasks.shuffle_write_time_ns) / 1e6;
    const double shuffle_seconds = (fetch_wait_ms + write_ms) / 1000.0;
    const double share =
        std::min(1.0, (fetch_wait_ms + write_ms) / static_cast<double>(tasks.executor_run_time_ms));
    if (share < t.min_shuffle_share || shuffle_seconds < t.min_shuffle_seconds) continue;
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    if (!duration_ms) continue;
    const double impact = static_cast<double>(*duration_ms) / 1000.0 * share;
    if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;

    Finding finding =
        NewFinding(kShuffleBottleneck, StageScope(scope, *stage), impact, SeverityForImpact(scope, impact));
    finding.title = StageLabel(*stage) + ": tasks spent " + Percent(share) +
                    " of their run time on shuffle (" + Seconds(fetch_wait_ms / 1000) + " fetch wait, " +
                    Seconds(write_ms / 1000) + " writing)";
    finding.evidence = {
        Crossed("shuffle_share", share, "share", t.min_shuffle_share, Comparison::kAtLeast),
        Crossed("shuffle_time_ms", shuffle_seconds * 1000, "ms", t.min_shuffle_seconds * 1000,
                Comparison::kAtLeast),
        Figure("fetch_wait_ms", fetch_wait_ms, "ms"),
        Figure("shuffle_write_time_ms", write_ms, "ms"),
        Figure("executor_run_time_ms", static_cast<double>(tasks.executor_run_time_ms), "ms"),
        Figure("shuffle_read_bytes", static_cast<double>(tasks.shuffle_read_bytes), "bytes"),
        Figure("shuffle_write_bytes", static_cast<double>(tasks.shuffle_write_bytes), "bytes"),
    };
    const std::string partitions = PropertyOr(scope, "spark.sql.shuffle.partitions", "200");
    finding.evidence.push_back(Setting("spark.sql.shuffle.partitions", partitions));
    const std::int64_t reading_tasks = std::max<std::int64_t>(tasks.tasks_ended, 1);
    const double per_task =
        static_cast<double>(tasks.shuffle_read_bytes) / static_cast<double>(reading_tasks);
    const double suggested =
        std::ceil(static_cast<double>(std::max(tasks.shuffle_read_bytes, tasks.shuffle_write_bytes)) /
                  static_cast<double>(std::max<std::int64_t>(t.target_partition_bytes, 1)));
    if (tasks.shuffle_read_bytes > 0) {
      finding.evidence.push_back(Figure("shuffle_read_bytes_per_task", per_task, "bytes"));
      if (per_task >= static_cast<double>(t.huge_partition_bytes)) {
        finding.title += "; partitions are huge (" + Bytes(per_task) + " per task)";
      } else if (per_task <= static_cast<double>(t.tiny_partition_bytes) &&
                 tasks.tasks_ended >= t.tiny_min_tasks) {
        finding.title += "; partitions are tiny (" + Bytes(per_task) + " per task over " +
                         std::to_string(tasks.tasks_ended) + " tasks)";
      }
    }
    if (suggested >= 1) {
      finding.fix.push_back(
          "size shuffle partitions at ~" + Bytes(static_cast<double>(t.target_partition_bytes)) +
          ": spark.sql.shuffle.partitions=" + std::to_string(static_cast<std::int64_t>(suggested)) +
          " (now " + partitions +
          "), or let AQE coalesce them "
          "(spark.sql.adaptive.coalescePartitions.enabled=true, "
          "spark.sql.adaptive.advisoryPartitionSizeInBytes=128m)");
    }
    if (fetch_wait_ms >= write_ms) {
      finding.fix.push_back(
          "fetch wait dominates: more parallel fetches (spark.reducer.maxSizeInFlight=96m, "
          "spark.reducer.maxReqsInFlight), an external shuffle service or push-based shuffle "
          "(spark.shuffle.push.enabled=true on YARN), and fewer executors lost mid-stage");
    } else {
      finding.fix.push_back(
          "shuffle write dominates: faster local disks for spark.local.dir, "
          "spark.shuffle.file.buffer=1m, spark.shuffle.compress=true with spark.io.compression.codec=lz4");
    }
    finding.fix.push_back(
        "shuffle less: filter and project before wide operations, broadcast small join sides "
        "(spark.sql.autoBroadcastJoinThreshold)");
    findings.push_back(std::move(finding));
  }
}

}  // namespace sparktrace::diagnose::rules
