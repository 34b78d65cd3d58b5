// The simulator's SQL plans (sql_plan_drafter.h): read back through the production parser, each
// operation's SQL execution has a Spark-shaped final plan whose metric totals agree with the task
// metrics the same log reports, and each plan problem shows in its operator's figures.

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "diagnose/diagnose.h"
#include "listener/correlate/sql_plan.h"
#include "tests/unit/sim/eventlog/sim_eventlog_test_support.h"

namespace sparktrace::sim::eventlog {
namespace {

using testing::GenerateAndParse;
using testing::LogOptions;

// The total of the first metric `name` of the first node called `node_name` (prefix) of a plan.
std::int64_t SimPlanTotal(const listener::correlate::ApplicationModel& model, std::int64_t execution,
                          std::string_view node_name, std::string_view name) {
  const listener::correlate::SqlExecutionDetail* detail = model.sql().Find(execution);
  if (detail == nullptr) return -1;
  const auto totals = model.sql().MetricSummaries(execution);
  for (const listener::events::SqlPlanNode& node : detail->plan.nodes) {
    if (!node.name.starts_with(node_name)) continue;
    for (const listener::events::SqlPlanMetric& metric : node.metrics) {
      if (metric.name != name) continue;
      const auto total = totals.find(metric.accumulator_id);
      return total == totals.end() ? -1 : total->second.total;
    }
  }
  return -1;
}

TEST(SimEventLogSqlPlan, PlansAgreeWithTheTaskMetrics) {
  const testing::ParsedLog parsed = GenerateAndParse(LogOptions("clean", 1.0, 5, 3));
  ASSERT_EQ(parsed.malformed, 0) << parsed.first_malformed;
  EXPECT_EQ(parsed.events.at("DriverAccumUpdates"), 3);
  const auto& executions = parsed.model.sql().executions();
  ASSERT_EQ(executions.size(), 3u);
  for (const auto& [id, detail] : executions) {
    SCOPED_TRACE(id);
    EXPECT_TRUE(detail.ended);
    ASSERT_FALSE(detail.plan.nodes.empty());
    EXPECT_EQ(detail.plan.nodes[0].name, "AdaptiveSparkPlan");
    // Input records and shuffle records of the execution's stages, from the task metrics.
    std::set<listener::correlate::StageAttemptKey> stages_seen;
    std::int64_t input_records = 0;
    std::int64_t shuffle_bytes = 0;
    for (std::int32_t job_id : parsed.model.JobsOfSqlExecution(id)) {
      for (const auto* stage : parsed.model.StagesOfJob(job_id)) {
        if (!stages_seen.insert(stage->key).second) continue;
        input_records += stage->tasks.input_records;
        shuffle_bytes += stage->tasks.shuffle_write_bytes;
      }
    }
    EXPECT_GT(input_records, 0);
    EXPECT_EQ(SimPlanTotal(parsed.model, id, "Scan parquet sales", "number of output rows"), input_records);
    EXPECT_EQ(SimPlanTotal(parsed.model, id, "Exchange", "data size"), shuffle_bytes);
    // Clean: the join keeps one row per order the filter kept (60 %).
    const std::int64_t kept = SimPlanTotal(parsed.model, id, "Filter", "number of output rows");
    EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(input_records), 0.6, 0.001);
    EXPECT_EQ(SimPlanTotal(parsed.model, id, "BroadcastHashJoin", "number of output rows"), kept);
    // Codegen stages as Spark numbers them.
    const auto stages = listener::correlate::CodegenStageIds(detail.plan);
    int in_codegen = 0;
    for (const auto& stage : stages) in_codegen += stage.has_value() ? 1 : 0;
    EXPECT_GT(in_codegen, 8);
  }
  EXPECT_EQ(parsed.model.sql().counters().task_updates_out_of_range, 0);
}

TEST(SimEventLogSqlPlan, PlanProblemsShowInTheirOperatorsAndFireTheirRules) {
  struct Case {
    const char* problem;
    std::string_view rule;
  };
  for (const Case& c :
       {Case{"exploding-join", diagnose::kExplodingJoin}, Case{"nested-loop-join", diagnose::kNestedLoopJoin},
        Case{"scan-discards-most", diagnose::kScanDiscardsMost},
        Case{"broadcast-near-limit", diagnose::kBroadcastNearLimit},
        Case{"spill", diagnose::kOperatorSpill}}) {
    SCOPED_TRACE(c.problem);
    for (double strength : {0.0, 0.7}) {
      const testing::ParsedLog parsed = GenerateAndParse(LogOptions(c.problem, strength, 5, 3));
      ASSERT_EQ(parsed.malformed, 0) << parsed.first_malformed;
      const auto findings = diagnose::DiagnoseApplication(parsed.model, diagnose::RuleThresholds{});
      bool fired = false;
      for (const diagnose::Finding& finding : findings) fired = fired || finding.id == c.rule;
      EXPECT_EQ(fired, strength > 0) << strength;
    }
  }
}

}  // namespace
}  // namespace sparktrace::sim::eventlog
