#include "cli/demo/rules.h"

#include <fmt/format.h>

#include "diagnose/rule_thresholds.h"
#include "diagnose/suppression.h"

namespace sparktrace::cli::demo {

std::string ScaledDemoRulesYaml(double time_scale) {
  const sparktrace::diagnose::RuleThresholds defaults;
  const auto scaled = [&](double seconds) { return seconds * time_scale; };
  std::string yaml = fmt::format(
      "# sparktrace demo: the default time floors x {} (the simulated application runs that much faster).\n",
      time_scale);
  yaml += fmt::format("resource-wait-long: {{min_wait_seconds: {:g}}}\n",
                      scaled(defaults.resource_wait_long.min_wait_seconds));
  // Bytes are not scaled, so rates (bytes per second) are 1 / time_scale times the real ones.
  const auto rate = [&](double per_second) { return per_second / time_scale; };
  yaml += fmt::format(
      "s3-write-slow: {{min_stage_seconds: {:g}, min_compute_stage_seconds: {:g}, min_impact_seconds: "
      "{:g}, min_task_throughput_mib_per_second: {:g}, max_judged_write_mib_per_second: {:g}}}\n",
      scaled(defaults.s3_write_slow.min_stage_seconds),
      scaled(defaults.s3_write_slow.min_compute_stage_seconds),
      scaled(defaults.s3_write_slow.min_impact_seconds),
      rate(defaults.s3_write_slow.min_task_throughput_mib_per_second),
      rate(defaults.s3_write_slow.max_judged_write_mib_per_second));
  yaml += fmt::format("data-skew: {{min_excess_seconds: {:g}, min_impact_seconds: {:g}}}\n",
                      scaled(defaults.data_skew.min_excess_seconds),
                      scaled(defaults.data_skew.min_impact_seconds));
  yaml += fmt::format("oom-and-spill: {{min_stage_seconds: {:g}, min_impact_seconds: {:g}}}\n",
                      scaled(defaults.oom_and_spill.min_stage_seconds),
                      scaled(defaults.oom_and_spill.min_impact_seconds));
  yaml += fmt::format("shuffle-bottleneck: {{min_shuffle_seconds: {:g}, min_impact_seconds: {:g}}}\n",
                      scaled(defaults.shuffle_bottleneck.min_shuffle_seconds),
                      scaled(defaults.shuffle_bottleneck.min_impact_seconds));
  yaml += fmt::format("gc-pressure: {{min_run_seconds: {:g}, min_impact_seconds: {:g}}}\n",
                      scaled(defaults.gc_pressure.min_run_seconds),
                      scaled(defaults.gc_pressure.min_impact_seconds));
  yaml += fmt::format("idle-executors: {{min_idle_slot_seconds: {:g}, min_impact_seconds: {:g}}}\n",
                      scaled(defaults.idle_executors.min_idle_slot_seconds),
                      scaled(defaults.idle_executors.min_impact_seconds));
  yaml += fmt::format("slow-spark-jobs: {{min_impact_seconds: {:g}}}\n",
                      scaled(defaults.slow_spark_jobs.min_impact_seconds));
  yaml += fmt::format("exploding-join: {{min_impact_seconds: {:g}}}\n",
                      scaled(defaults.exploding_join.min_impact_seconds));
  yaml += fmt::format("nested-loop-join: {{min_impact_seconds: {:g}}}\n",
                      scaled(defaults.nested_loop_join.min_impact_seconds));
  yaml += fmt::format("scan-discards-most: {{min_impact_seconds: {:g}}}\n",
                      scaled(defaults.scan_discards_most.min_impact_seconds));
  yaml += fmt::format("broadcast-near-limit: {{min_broadcast_seconds: {:g}, min_impact_seconds: {:g}}}\n",
                      scaled(defaults.broadcast_near_limit.min_broadcast_seconds),
                      scaled(defaults.broadcast_near_limit.min_impact_seconds));
  yaml += fmt::format("operator-spill: {{min_impact_seconds: {:g}}}\n",
                      scaled(defaults.operator_spill.min_impact_seconds));
  return yaml;
}

std::string DemoSuppressionsYaml(std::chrono::sys_days today) {
  return fmt::format(
      "suppressions:\n"
      "  - id: {}\n"
      "    dag: \"daily_sales\"\n"
      "    task: \"load_*\"\n"
      "    reason: \"demo: the summary repeats its causes, which stay counted\"\n"
      "    until: \"{}\"\n",
      sparktrace::diagnose::kSlowSparkJobs, sparktrace::diagnose::DateText(today + std::chrono::days(30)));
}

}  // namespace sparktrace::cli::demo
