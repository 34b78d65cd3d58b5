// The demo's scaled diagnosis thresholds (cli/demo/rules.h): a valid rules file whose time floors
// are the defaults times the demo's speed-up, rates the defaults divided by it, and whose other
// thresholds are the defaults.
#include "cli/demo/rules.h"

#include <gtest/gtest.h>

#include "diagnose/rule_thresholds.h"
#include "diagnose/rules_file.h"

namespace sparktrace::cli::demo {
namespace {

TEST(DemoRules, TimeFloorsAreScaledAndTheRestIsTheDefault) {
  const auto parsed = diagnose::ParseRuleThresholds(ScaledDemoRulesYaml(0.02), diagnose::RulesFormat::kYaml);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const diagnose::RuleThresholds defaults;
  const diagnose::RuleThresholds& rules = *parsed;
  EXPECT_DOUBLE_EQ(rules.resource_wait_long.min_wait_seconds,
                   defaults.resource_wait_long.min_wait_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.s3_write_slow.min_stage_seconds, defaults.s3_write_slow.min_stage_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.s3_write_slow.min_compute_stage_seconds,
                   defaults.s3_write_slow.min_compute_stage_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.data_skew.min_excess_seconds, defaults.data_skew.min_excess_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.oom_and_spill.min_stage_seconds, defaults.oom_and_spill.min_stage_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.shuffle_bottleneck.min_shuffle_seconds,
                   defaults.shuffle_bottleneck.min_shuffle_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.gc_pressure.min_run_seconds, defaults.gc_pressure.min_run_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.idle_executors.min_idle_slot_seconds,
                   defaults.idle_executors.min_idle_slot_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.slow_spark_jobs.min_impact_seconds,
                   defaults.slow_spark_jobs.min_impact_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.exploding_join.min_impact_seconds,
                   defaults.exploding_join.min_impact_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.broadcast_near_limit.min_broadcast_seconds,
                   defaults.broadcast_near_limit.min_broadcast_seconds * 0.02);
  EXPECT_DOUBLE_EQ(rules.operator_spill.min_impact_seconds,
                   defaults.operator_spill.min_impact_seconds * 0.02);
  // Rates are bytes over time, and the bytes are not scaled: divided by the factor.
  EXPECT_DOUBLE_EQ(rules.s3_write_slow.min_task_throughput_mib_per_second,
                   defaults.s3_write_slow.min_task_throughput_mib_per_second / 0.02);
  EXPECT_DOUBLE_EQ(rules.s3_write_slow.max_judged_write_mib_per_second,
                   defaults.s3_write_slow.max_judged_write_mib_per_second / 0.02);
  // Shares and ratios are not times: unchanged.
  EXPECT_DOUBLE_EQ(rules.resource_wait_long.min_wait_share, defaults.resource_wait_long.min_wait_share);
  EXPECT_DOUBLE_EQ(rules.data_skew.min_duration_ratio, defaults.data_skew.min_duration_ratio);
  EXPECT_DOUBLE_EQ(rules.gc_pressure.min_gc_share, defaults.gc_pressure.min_gc_share);
  EXPECT_DOUBLE_EQ(rules.exploding_join.min_output_ratio, defaults.exploding_join.min_output_ratio);
}

TEST(DemoRules, ScaleOneIsTheDefaults) {
  const auto parsed = diagnose::ParseRuleThresholds(ScaledDemoRulesYaml(1), diagnose::RulesFormat::kYaml);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const diagnose::RuleThresholds defaults;
  EXPECT_DOUBLE_EQ(parsed->idle_executors.min_impact_seconds, defaults.idle_executors.min_impact_seconds);
  EXPECT_DOUBLE_EQ(parsed->s3_write_slow.min_impact_seconds, defaults.s3_write_slow.min_impact_seconds);
}

TEST(DemoRules, SuppressTheDemoTasksSummaryForThirtyDays) {
  const auto today = diagnose::ParseDate("2026-12-15");
  ASSERT_TRUE(today.has_value());
  const auto parsed = diagnose::ParseRulesFile(ScaledDemoRulesYaml(0.02) + DemoSuppressionsYaml(*today),
                                               diagnose::RulesFormat::kYaml);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->suppressions.size(), 1u);
  const diagnose::Suppression& suppression = parsed->suppressions.front();
  EXPECT_EQ(diagnose::DateText(suppression.until), "2027-01-14");
  EXPECT_FALSE(suppression.reason.empty());
  const diagnose::SuppressionTask demo_task{"daily_sales", "load_orders"};
  EXPECT_EQ(diagnose::FindSuppression(parsed->suppressions, "slow-spark-jobs", demo_task, *today),
            &suppression);
  EXPECT_EQ(diagnose::FindSuppression(parsed->suppressions, "resource-wait-long", demo_task, *today), nullptr)
      << "the demo's headline finding stays counted";
}

}  // namespace
}  // namespace sparktrace::cli::demo
