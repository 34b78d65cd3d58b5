#pragma once
// RuleThresholds: every threshold of the diagnosis rules, with the defaults below (also listed in
// docs/diagnose-rules.md), and LoadRuleThresholds: a rules file (`sparktrace diagnose --rules FILE`)
// that overrides some of them.
//
// Every rule has absolute floors AND relative thresholds, and an impact gate (its estimated wall
// time cost, absolute and as a share of the application's or operation's wall time), so that short
// or tiny applications (a 2-second local-mode test) never fire noise.
//
// Rules file: YAML or JSON, one section per rule id (plus "general"), snake_case keys, e.g.
//   data-skew:
//     min_duration_ratio: 8
//     min_excess_seconds: 60
//   gc-pressure: {enabled: false}
// Every section and key is optional; an unknown section or key is an error naming it, and so is a
// value of the wrong type (booleans are true/false; numbers are plain, integers where the field
// is one).
//
// Plain values; LoadRuleThresholds is thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::diagnose {

inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;

struct GeneralThresholds {
  // A finding whose impact is at least this share of the wall time is critical.
  double critical_impact_share = 0.25;
};

struct ResourceWaitThresholds {
  bool enabled = true;
  double min_wait_seconds = 30;  // resource_wait phase time (start → first executor, no-executor gaps)
  double min_wait_share = 0.10;  // of the wall time
};

struct S3WriteThresholds {
  bool enabled = true;
  double min_stage_seconds = 10;               // writing stages shorter than this are not judged
  std::int64_t min_output_bytes = 256 * kMiB;  // ...nor those that wrote less than this
  // The write rate (output bytes per task-second of writing) is slow below the compute rate
  // (bytes read per task-second by the non-writing stages) divided by this...
  double min_compute_to_write_ratio = 4.0;
  // ...capped here (a write this fast is never slow)...
  double max_judged_write_mib_per_second = 16.0;
  // ...and never below this floor, which is also the limit without a compute reference.
  double min_task_throughput_mib_per_second = 8.0;
  std::int64_t min_compute_tasks = 8;  // successful tasks the compute reference needs
  // Bytes the compute reference needs to have read: a rate over a few kilobytes (metadata and
  // planning stages) says nothing about how fast this job processes data.
  std::int64_t min_compute_read_bytes = 256 * kMiB;
  // Compute stages shorter than this do not count in the reference (metadata and planning stages
  // of a few milliseconds say nothing about task speed).
  double min_compute_stage_seconds = 3;
  double min_impact_seconds = 5;
  double min_impact_share = 0.03;
};

struct DataSkewThresholds {
  bool enabled = true;
  std::int64_t min_tasks = 8;       // successful tasks in the stage
  double min_duration_ratio = 4.0;  // max / median task duration
  double min_excess_seconds = 10;   // max − median task duration (absolute floor)
  double min_bytes_ratio = 3.0;     // max / median per-task input + shuffle-read bytes
  // Below this largest per-task byte count the stage's bytes are not judged (tasks that read
  // nothing measurable): the duration criterion alone decides.
  std::int64_t min_max_task_bytes = 16 * kMiB;
  double min_impact_seconds = 10;
  double min_impact_share = 0.05;
};

struct OomAndSpillThresholds {
  bool enabled = true;
  std::int64_t min_spill_bytes = 512 * kMiB;  // memory bytes spilled by the stage
  double min_spill_ratio = 0.1;               // memory spilled / (input + shuffle read bytes)
  double min_stage_seconds = 10;
  // Assumed local-disk speed per task for writing and re-reading spill (impact estimate).
  double spill_disk_mib_per_second = 100;
  double min_impact_seconds = 1;
  double min_impact_share = 0.01;
  // Spill this large is reported whatever the impact estimate (a floor that leaves out sorting and
  // (de)serialising): as much spilled as the stage processed, or this much on disk...
  double ungated_spill_ratio = 1.0;
  std::int64_t ungated_disk_spill_bytes = 1024 * kMiB;
  // ...or by one task: memory pressure on that task, whatever the stage's ratio (with data-skew
  // when the task got more data than the others).
  std::int64_t min_task_disk_spill_bytes = 1024 * kMiB;
  std::int64_t min_oom_tasks = 1;      // failed tasks whose message says out of memory
  std::int64_t min_oom_executors = 1;  // executors removed for memory (exit 137/143, container killed)
};

struct ShuffleBottleneckThresholds {
  bool enabled = true;
  double min_shuffle_share = 0.15;                  // (fetch wait + shuffle write time) / executor run time
  double min_shuffle_seconds = 20;                  // Σ fetch wait + write time over the stage's tasks
  std::int64_t huge_partition_bytes = 1024 * kMiB;  // average shuffle read per task above: huge
  std::int64_t tiny_partition_bytes = 1 * kMiB;     // below (with many tasks): tiny
  std::int64_t tiny_min_tasks = 1000;
  std::int64_t target_partition_bytes = 128 * kMiB;  // for the suggested spark.sql.shuffle.partitions
  double min_impact_seconds = 2;
  double min_impact_share = 0.015;
};

struct LowParallelismThresholds {
  bool enabled = true;
  // A stage with fewer tasks than free slots fires when its tasks each moved at least this much (the
  // median task's input + shuffle read, or output or shuffle write per task): four times the 128 MiB
  // Spark packs into a file partition (spark.sql.files.maxPartitionBytes), twice AQE's 64 MiB advisory
  // shuffle partition; a task this size could have been four tasks...
  std::int64_t min_task_bytes = 512 * kMiB;
  // ...or when its median task ran this many times the scope's typical task (the task-weighted median
  // of its stages' median task durations)...
  double min_duration_ratio = 10.0;
  // ...and at least this long (a few seconds on one core are not worth a change).
  double min_task_seconds = 60;
  // The partition size the suggested partition count and the full-parallelism estimate aim at.
  std::int64_t target_partition_bytes = 128 * kMiB;
  double min_impact_seconds = 10;
  double min_impact_share = 0.03;
};

struct GcPressureThresholds {
  bool enabled = true;
  double min_gc_share = 0.07;   // JVM GC time / executor run time
  double min_run_seconds = 60;  // Σ executor run time (stage, or the application as a whole)
  double min_impact_seconds = 2;
  double min_impact_share = 0.015;
};

struct IdleExecutorsThresholds {
  bool enabled = true;
  double min_idle_share = 0.5;  // idle slot time / slot time of executors alive
  // ...or idle in driver-side gaps alone (no stage running), as a share of slot time: stage tails
  // and waves leave healthy applications 10-40 % idle, driver gaps a few percent.
  double min_driver_gap_share = 0.15;
  // ...or idle while narrow stages ran (fewer tasks than a quarter of the slots: a single-partition
  // tail, a coalesce(1)), as a share of slot time: full-width stages' tails do not count here.
  double min_narrow_stage_share = 0.2;
  double min_idle_slot_seconds = 600;  // idle executor-core seconds
  double min_impact_seconds = 30;
  double min_impact_share = 0.1;
};

struct TaskFailuresThresholds {
  bool enabled = true;
  std::int64_t min_failed_tasks = 1;   // failed (not killed) task attempts; any failed stage or job fires
  double warning_failed_share = 0.05;  // failed / ended tasks at or above which it is a warning (else info)
};

struct SlowSparkJobsThresholds {
  bool enabled = true;
  // The summary is written when some other finding of at least warning severity fired and their
  // combined impact passes this gate.
  double min_impact_seconds = 10;
  double min_impact_share = 0.05;
  std::int64_t top_stages = 3;  // longest stages listed in its evidence
};

// ---- Plan rules: one operator of a SQL execution's final plan, with its metrics as Spark's SQL UI
// totals them (listener/correlate/sql_plan.h). Their impact is the operator's share of the wall time
// of the stages that ran it (diagnose/plan_scope.h).

struct ExplodingJoinThresholds {
  bool enabled = true;
  // A join's output rows at least this many times its larger input's rows (a one-to-many join
  // outputs at most its larger input's rows; more means a key repeats on both sides)...
  double min_output_ratio = 5.0;
  // ...and at least this many rows (a 10x join of a thousand rows costs nothing).
  std::int64_t min_output_rows = 10'000'000;
  double min_impact_seconds = 10;
  double min_impact_share = 0.05;
};

struct NestedLoopJoinThresholds {
  bool enabled = true;
  // CartesianProduct / BroadcastNestedLoopJoin whose smaller input has at least this many rows (a
  // nested loop over a one-row side, a scalar subquery's, is how Spark should run it)...
  std::int64_t min_smaller_side_rows = 1000;
  // ...and whose inputs' rows multiplied (the pairs it compares) reach this.
  double min_pairs = 1e9;
  double min_impact_seconds = 10;
  double min_impact_share = 0.05;
};

struct ScanDiscardsMostThresholds {
  bool enabled = true;
  // A Filter right above a file scan (through ColumnarToRow, InputAdapter, codegen) that keeps at
  // most this share of the scan's rows...
  double max_kept_share = 0.02;
  // ...of a scan that produced at least this many rows and read at least this many bytes.
  std::int64_t min_scan_rows = 10'000'000;
  std::int64_t min_files_bytes = 1024 * kMiB;
  double min_impact_seconds = 10;
  double min_impact_share = 0.05;
};

struct BroadcastNearLimitThresholds {
  bool enabled = true;
  // A BroadcastExchange's "data size" at least this share of the threshold in force
  // (spark.sql.autoBroadcastJoinThreshold, default 10 MiB; Spark's adaptive one when larger)...
  double near_threshold_share = 0.8;
  // ...or at least this many bytes, whatever the threshold...
  std::int64_t min_data_bytes = 1024 * kMiB;
  // ...whose collect + build + broadcast time reached this (a broadcast near its limit that still
  // ships in a second is fine);
  double min_broadcast_seconds = 10;
  // or, whatever its time, at least this share of Spark's 8 GiB hard limit on a broadcast table.
  double hard_limit_share = 0.5;
  double min_impact_seconds = 10;
  double min_impact_share = 0.05;
};

struct OperatorSpillThresholds {
  bool enabled = true;
  // Sort, aggregate and join operators whose "spill size" (memory bytes spilled) reached this.
  std::int64_t min_spill_bytes = 512 * kMiB;
  // Assumed local-disk speed per task for writing and re-reading spill (the impact estimate, as
  // oom-and-spill's spill_disk_mib_per_second).
  double spill_disk_mib_per_second = 100;
  // The gate of oom-and-spill: the operator's spill is its stage's.
  double min_impact_seconds = 1;
  double min_impact_share = 0.01;
};

struct RuleThresholds {
  GeneralThresholds general;
  ResourceWaitThresholds resource_wait_long;
  S3WriteThresholds s3_write_slow;
  DataSkewThresholds data_skew;
  OomAndSpillThresholds oom_and_spill;
  ShuffleBottleneckThresholds shuffle_bottleneck;
  LowParallelismThresholds low_parallelism;
  GcPressureThresholds gc_pressure;
  IdleExecutorsThresholds idle_executors;
  TaskFailuresThresholds task_failures;
  SlowSparkJobsThresholds slow_spark_jobs;
  ExplodingJoinThresholds exploding_join;
  NestedLoopJoinThresholds nested_loop_join;
  ScanDiscardsMostThresholds scan_discards_most;
  BroadcastNearLimitThresholds broadcast_near_limit;
  OperatorSpillThresholds operator_spill;
};

// Thresholds from a rules file, over the defaults (its suppressions: rules_file.h). JSON when the file's
// first non-blank character is '{', YAML otherwise. Errors name the file and the section.key at fault.
Result<RuleThresholds> LoadRuleThresholds(const std::string& path);

enum class RulesFormat : std::uint8_t { kJson, kYaml };
// The same from text (for tests and LoadRuleThresholds).
Result<RuleThresholds> ParseRuleThresholds(std::string_view text, RulesFormat format);

}  // namespace sparktrace::diagnose
