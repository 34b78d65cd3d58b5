#include "diagnose/rule_thresholds.h"

#include <cmath>
#include <variant>
#include <vector>

#include "diagnose/finding.h"
#include "diagnose/rules_document.h"

namespace sparktrace::diagnose {
namespace {

// One settable threshold: where it lives in the file and in the struct.
struct Binding {
  std::string_view section;
  std::string_view key;
  std::variant<double*, std::int64_t*, bool*> target;
};

std::vector<Binding> BindingsOf(RuleThresholds& t) {
  return {
      {"general", "critical_impact_share", &t.general.critical_impact_share},

      {kResourceWaitLong, "enabled", &t.resource_wait_long.enabled},
      {kResourceWaitLong, "min_wait_seconds", &t.resource_wait_long.min_wait_seconds},
      {kResourceWaitLong, "min_wait_share", &t.resource_wait_long.min_wait_share},

      {kS3WriteSlow, "enabled", &t.s3_write_slow.enabled},
      {kS3WriteSlow, "min_stage_seconds", &t.s3_write_slow.min_stage_seconds},
      {kS3WriteSlow, "min_compute_to_write_ratio", &t.s3_write_slow.min_compute_to_write_ratio},
      {kS3WriteSlow, "max_judged_write_mib_per_second", &t.s3_write_slow.max_judged_write_mib_per_second},
      {kS3WriteSlow, "min_compute_tasks", &t.s3_write_slow.min_compute_tasks},
      {kS3WriteSlow, "min_compute_read_bytes", &t.s3_write_slow.min_compute_read_bytes},
      {kS3WriteSlow, "min_compute_stage_seconds", &t.s3_write_slow.min_compute_stage_seconds},
      {kS3WriteSlow, "min_task_throughput_mib_per_second",
       &t.s3_write_slow.min_task_throughput_mib_per_second},
      {kS3WriteSlow, "min_output_bytes", &t.s3_write_slow.min_output_bytes},
      {kS3WriteSlow, "min_impact_seconds", &t.s3_write_slow.min_impact_seconds},
      {kS3WriteSlow, "min_impact_share", &t.s3_write_slow.min_impact_share},

      {kDataSkew, "enabled", &t.data_skew.enabled},
      {kDataSkew, "min_tasks", &t.data_skew.min_tasks},
      {kDataSkew, "min_duration_ratio", &t.data_skew.min_duration_ratio},
      {kDataSkew, "min_excess_seconds", &t.data_skew.min_excess_seconds},
      {kDataSkew, "min_bytes_ratio", &t.data_skew.min_bytes_ratio},
      {kDataSkew, "min_max_task_bytes", &t.data_skew.min_max_task_bytes},
      {kDataSkew, "min_impact_seconds", &t.data_skew.min_impact_seconds},
      {kDataSkew, "min_impact_share", &t.data_skew.min_impact_share},

      {kOomAndSpill, "enabled", &t.oom_and_spill.enabled},
      {kOomAndSpill, "min_spill_bytes", &t.oom_and_spill.min_spill_bytes},
      {kOomAndSpill, "min_spill_ratio", &t.oom_and_spill.min_spill_ratio},
      {kOomAndSpill, "min_stage_seconds", &t.oom_and_spill.min_stage_seconds},
      {kOomAndSpill, "spill_disk_mib_per_second", &t.oom_and_spill.spill_disk_mib_per_second},
      {kOomAndSpill, "min_impact_seconds", &t.oom_and_spill.min_impact_seconds},
      {kOomAndSpill, "min_impact_share", &t.oom_and_spill.min_impact_share},
      {kOomAndSpill, "ungated_spill_ratio", &t.oom_and_spill.ungated_spill_ratio},
      {kOomAndSpill, "ungated_disk_spill_bytes", &t.oom_and_spill.ungated_disk_spill_bytes},
      {kOomAndSpill, "min_task_disk_spill_bytes", &t.oom_and_spill.min_task_disk_spill_bytes},
      {kOomAndSpill, "min_oom_tasks", &t.oom_and_spill.min_oom_tasks},
      {kOomAndSpill, "min_oom_executors", &t.oom_and_spill.min_oom_executors},

      {kShuffleBottleneck, "enabled", &t.shuffle_bottleneck.enabled},
      {kShuffleBottleneck, "min_shuffle_share", &t.shuffle_bottleneck.min_shuffle_share},
      {kShuffleBottleneck, "min_shuffle_seconds", &t.shuffle_bottleneck.min_shuffle_seconds},
      {kShuffleBottleneck, "huge_partition_bytes", &t.shuffle_bottleneck.huge_partition_bytes},
      {kShuffleBottleneck, "tiny_partition_bytes", &t.shuffle_bottleneck.tiny_partition_bytes},
      {kShuffleBottleneck, "tiny_min_tasks", &t.shuffle_bottleneck.tiny_min_tasks},
      {kShuffleBottleneck, "target_partition_bytes", &t.shuffle_bottleneck.target_partition_bytes},
      {kShuffleBottleneck, "min_impact_seconds", &t.shuffle_bottleneck.min_impact_seconds},
      {kShuffleBottleneck, "min_impact_share", &t.shuffle_bottleneck.min_impact_share},

      {kLowParallelism, "enabled", &t.low_parallelism.enabled},
      {kLowParallelism, "min_task_bytes", &t.low_parallelism.min_task_bytes},
      {kLowParallelism, "min_duration_ratio", &t.low_parallelism.min_duration_ratio},
      {kLowParallelism, "min_task_seconds", &t.low_parallelism.min_task_seconds},
      {kLowParallelism, "target_partition_bytes", &t.low_parallelism.target_partition_bytes},
      {kLowParallelism, "min_impact_seconds", &t.low_parallelism.min_impact_seconds},
      {kLowParallelism, "min_impact_share", &t.low_parallelism.min_impact_share},

      {kGcPressure, "enabled", &t.gc_pressure.enabled},
      {kGcPressure, "min_gc_share", &t.gc_pressure.min_gc_share},
      {kGcPressure, "min_run_seconds", &t.gc_pressure.min_run_seconds},
      {kGcPressure, "min_impact_seconds", &t.gc_pressure.min_impact_seconds},
      {kGcPressure, "min_impact_share", &t.gc_pressure.min_impact_share},

      {kIdleExecutors, "enabled", &t.idle_executors.enabled},
      {kIdleExecutors, "min_idle_share", &t.idle_executors.min_idle_share},
      {kIdleExecutors, "min_driver_gap_share", &t.idle_executors.min_driver_gap_share},
      {kIdleExecutors, "min_narrow_stage_share", &t.idle_executors.min_narrow_stage_share},
      {kIdleExecutors, "min_idle_slot_seconds", &t.idle_executors.min_idle_slot_seconds},
      {kIdleExecutors, "min_impact_seconds", &t.idle_executors.min_impact_seconds},
      {kIdleExecutors, "min_impact_share", &t.idle_executors.min_impact_share},

      {kTaskFailures, "enabled", &t.task_failures.enabled},
      {kTaskFailures, "min_failed_tasks", &t.task_failures.min_failed_tasks},
      {kTaskFailures, "warning_failed_share", &t.task_failures.warning_failed_share},

      {kSlowSparkJobs, "enabled", &t.slow_spark_jobs.enabled},
      {kSlowSparkJobs, "min_impact_seconds", &t.slow_spark_jobs.min_impact_seconds},
      {kSlowSparkJobs, "min_impact_share", &t.slow_spark_jobs.min_impact_share},
      {kSlowSparkJobs, "top_stages", &t.slow_spark_jobs.top_stages},

      {kExplodingJoin, "enabled", &t.exploding_join.enabled},
      {kExplodingJoin, "min_output_ratio", &t.exploding_join.min_output_ratio},
      {kExplodingJoin, "min_output_rows", &t.exploding_join.min_output_rows},
      {kExplodingJoin, "min_impact_seconds", &t.exploding_join.min_impact_seconds},
      {kExplodingJoin, "min_impact_share", &t.exploding_join.min_impact_share},

      {kNestedLoopJoin, "enabled", &t.nested_loop_join.enabled},
      {kNestedLoopJoin, "min_smaller_side_rows", &t.nested_loop_join.min_smaller_side_rows},
      {kNestedLoopJoin, "min_pairs", &t.nested_loop_join.min_pairs},
      {kNestedLoopJoin, "min_impact_seconds", &t.nested_loop_join.min_impact_seconds},
      {kNestedLoopJoin, "min_impact_share", &t.nested_loop_join.min_impact_share},

      {kScanDiscardsMost, "enabled", &t.scan_discards_most.enabled},
      {kScanDiscardsMost, "max_kept_share", &t.scan_discards_most.max_kept_share},
      {kScanDiscardsMost, "min_scan_rows", &t.scan_discards_most.min_scan_rows},
      {kScanDiscardsMost, "min_files_bytes", &t.scan_discards_most.min_files_bytes},
      {kScanDiscardsMost, "min_impact_seconds", &t.scan_discards_most.min_impact_seconds},
      {kScanDiscardsMost, "min_impact_share", &t.scan_discards_most.min_impact_share},

      {kBroadcastNearLimit, "enabled", &t.broadcast_near_limit.enabled},
      {kBroadcastNearLimit, "near_threshold_share", &t.broadcast_near_limit.near_threshold_share},
      {kBroadcastNearLimit, "min_data_bytes", &t.broadcast_near_limit.min_data_bytes},
      {kBroadcastNearLimit, "min_broadcast_seconds", &t.broadcast_near_limit.min_broadcast_seconds},
      {kBroadcastNearLimit, "hard_limit_share", &t.broadcast_near_limit.hard_limit_share},
      {kBroadcastNearLimit, "min_impact_seconds", &t.broadcast_near_limit.min_impact_seconds},
      {kBroadcastNearLimit, "min_impact_share", &t.broadcast_near_limit.min_impact_share},

      {kOperatorSpill, "enabled", &t.operator_spill.enabled},
      {kOperatorSpill, "min_spill_bytes", &t.operator_spill.min_spill_bytes},
      {kOperatorSpill, "spill_disk_mib_per_second", &t.operator_spill.spill_disk_mib_per_second},
      {kOperatorSpill, "min_impact_seconds", &t.operator_spill.min_impact_seconds},
      {kOperatorSpill, "min_impact_share", &t.operator_spill.min_impact_share},
  };
}

std::string Where(const RulesEntry& entry) { return "\"" + entry.section + "." + entry.key + "\""; }

Result<void> Assign(const RulesEntry& entry, const Binding& binding) {
  const RulesValue& value = entry.value;
  if (bool* const* flag = std::get_if<bool*>(&binding.target)) {
    if (value.kind != RulesValue::Kind::kBool)
      return InvalidArgument(Where(entry) + ": expected true or false, got " + value.text);
    **flag = value.boolean;
    return {};
  }
  if (value.kind != RulesValue::Kind::kNumber || !std::isfinite(value.number)) {
    return InvalidArgument(Where(entry) + ": expected a number, got " + value.text);
  }
  if (value.number < 0) return InvalidArgument(Where(entry) + ": must not be negative, got " + value.text);
  if (double* const* number = std::get_if<double*>(&binding.target)) {
    **number = value.number;
    return {};
  }
  if (value.number != std::floor(value.number) || value.number > 9.0e18) {
    return InvalidArgument(Where(entry) + ": expected an integer, got " + value.text);
  }
  *std::get<std::int64_t*>(binding.target) = static_cast<std::int64_t>(value.number);
  return {};
}

}  // namespace

Result<RuleThresholds> ThresholdsFromEntries(const std::vector<RulesEntry>& entries) {
  RuleThresholds thresholds;
  const std::vector<Binding> bindings = BindingsOf(thresholds);
  for (const RulesEntry& entry : entries) {
    bool known_section = false;
    const Binding* match = nullptr;
    for (const Binding& binding : bindings) {
      if (binding.section != entry.section) continue;
      known_section = true;
      if (binding.key == entry.key) match = &binding;
    }
    if (!known_section) return InvalidArgument("unknown section \"" + entry.section + "\"");
    if (match == nullptr) return InvalidArgument("unknown key " + Where(entry));
    if (Result<void> assigned = Assign(entry, *match); !assigned.ok()) return assigned.error();
  }
  return thresholds;
}

}  // namespace sparktrace::diagnose
