// The plan rules (exploding-join, nested-loop-join, scan-discards-most, broadcast-near-limit,
// operator-spill) on hand-written SQL logs: each fires on its problem, naming the execution and
// the operator, and stays quiet on a near miss and on the clean plan.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diagnose/finding.h"
#include "diagnose/plan_scope.h"
#include "tests/unit/diagnose/diagnose_plan_test_lines.h"

namespace sparktrace::diagnose {
namespace {

using plan_test_lines::DiagnosePlanLog;
using plan_test_lines::FindPlanFinding;
using plan_test_lines::PlanLog;
using plan_test_lines::PlanMetric;
using plan_test_lines::PlanNode;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr int kTasks = 10;

PlanNode ScanNode(const std::string& table, std::int64_t rows_id) {
  return PlanNode{"Scan parquet " + table, {{"number of output rows", rows_id}}, {}};
}

// WholeStageCodegen (1) [duration 10] → SortMergeJoin [rows 11] ← (InputAdapter → Exchange → Scan a
// [rows 13]) and Scan b [rows 15]; every task spends 50 s in the codegen stage.
PlanLog JoinLog(std::int64_t left_rows, std::int64_t right_rows, std::int64_t output_rows) {
  PlanLog log;
  PlanNode exchange{"Exchange", {}, {ScanNode("a", 13)}};
  PlanNode join{"SortMergeJoin",
                {{"number of output rows", 11}},
                {PlanNode{"InputAdapter", {}, {exchange}}, ScanNode("b", 15)}};
  log.plan = PlanNode{"WholeStageCodegen (1)", {{"duration", 10, "timing"}}, {join}};
  log.per_task = {
      {10, 50'000}, {11, output_rows / kTasks}, {13, left_rows / kTasks}, {15, right_rows / kTasks}};
  return log;
}

TEST(DiagnosePlanRules, ExplodingJoinFiresAndNamesTheOperator) {
  const auto findings = DiagnosePlanLog(JoinLog(20'000'000, 5'000'000, 300'000'000));
  const Finding* finding = FindPlanFinding(findings, kExplodingJoin);
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->scope.kind, ScopeKind::kSqlOperator);
  EXPECT_EQ(finding->scope.sql_execution_id, 4);
  EXPECT_EQ(finding->scope.plan_node_id, 1u);  // pre-order: the codegen node is 0
  EXPECT_EQ(finding->scope.plan_node_name, "SortMergeJoin");
  EXPECT_EQ(finding->Key(), "exploding-join@sql:4/node:1");
  // 500 s of codegen task time over 600 s of run time in a 60.1 s stage: 50.08 s of wall time,
  // of which the explosion's share is 1 − 20M / 300M.
  EXPECT_NEAR(finding->impact_seconds, 500.0 * 60.1 / 600.0 * (1.0 - 20.0 / 300.0), 0.01);
  EXPECT_EQ(finding->recipe, "docs/recipes/troubleshoot/plan-joins.md#exploding-join");
  EXPECT_FALSE(finding->fix.empty());
}

TEST(DiagnosePlanRules, ExplodingJoinNearMissAndCleanDoNotFire) {
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(JoinLog(20'000'000, 5'000'000, 90'000'000)), kExplodingJoin),
            nullptr);  // 4.5x: below 5x
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(JoinLog(200'000, 50'000, 5'000'000)), kExplodingJoin),
            nullptr);  // 25x of few rows: below the 10M-row floor
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(JoinLog(20'000'000, 5'000'000, 20'000'000)), kExplodingJoin),
            nullptr);
}

// WholeStageCodegen (1) [duration 10] → BroadcastNestedLoopJoin [rows 21] ← Scan a [rows 22] and
// BroadcastExchange [rows 23, set on the driver].
PlanLog NestedLoopLog(std::int64_t build_rows, const std::string& join_name = "BroadcastNestedLoopJoin") {
  PlanLog log;
  PlanNode broadcast{"BroadcastExchange", {{"number of output rows", 23}}, {ScanNode("b", 24)}};
  PlanNode join{join_name,
                {{"number of output rows", 21}},
                {ScanNode("a", 22), PlanNode{"InputAdapter", {}, {broadcast}}}};
  log.plan = PlanNode{"WholeStageCodegen (1)", {{"duration", 10, "timing"}}, {join}};
  log.per_task = {{10, 50'000}, {21, 2'000'000}, {22, 2'000'000}};
  log.driver = {{23, build_rows}};
  return log;
}

TEST(DiagnosePlanRules, NestedLoopJoinFiresOnLargeInputs) {
  const auto findings = DiagnosePlanLog(NestedLoopLog(5000));
  const Finding* finding = FindPlanFinding(findings, kNestedLoopJoin);
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->scope.plan_node_name, "BroadcastNestedLoopJoin");
  EXPECT_NEAR(finding->impact_seconds, 500.0 * 60.1 / 600.0, 0.01);
  ASSERT_FALSE(finding->evidence.empty());
  EXPECT_EQ(finding->evidence[0].name, "smaller_input_rows");
  EXPECT_EQ(finding->evidence[0].value, 5000);
}

TEST(DiagnosePlanRules, NestedLoopJoinOverAOneRowSideDoesNotFire) {
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(NestedLoopLog(1)), kNestedLoopJoin), nullptr);
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(NestedLoopLog(900)), kNestedLoopJoin), nullptr);
  // The same sizes as the positive, joined on a key: not a nested loop.
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(NestedLoopLog(5000, "BroadcastHashJoin")), kNestedLoopJoin),
            nullptr);
}

// WholeStageCodegen (1) [duration 10] → Filter [rows 31] → ColumnarToRow → Scan [rows 32, size of
// files read 33 (driver), scan time 34 (ns)].
PlanLog ScanLog(std::int64_t scan_rows, std::int64_t kept_rows, std::int64_t files_bytes) {
  PlanLog log;
  PlanNode scan{
      "Scan parquet sales.orders",
      {{"number of output rows", 32}, {"size of files read", 33, "size"}, {"scan time", 34, "nsTiming"}},
      {}};
  PlanNode filter{"Filter", {{"number of output rows", 31}}, {PlanNode{"ColumnarToRow", {}, {scan}}}};
  log.plan = PlanNode{"WholeStageCodegen (1)", {{"duration", 10, "timing"}}, {filter}};
  log.per_task = {{10, 50'000}, {31, kept_rows / kTasks}, {32, scan_rows / kTasks}, {34, 40'000'000'000}};
  log.driver = {{33, files_bytes}};
  return log;
}

TEST(DiagnosePlanRules, ScanDiscardsMostFiresOnTheScan) {
  const auto findings = DiagnosePlanLog(ScanLog(200'000'000, 100'000, 20 * kGiB));
  const Finding* finding = FindPlanFinding(findings, kScanDiscardsMost);
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->scope.plan_node_name, "Scan parquet sales.orders");
  EXPECT_EQ(finding->scope.plan_node_id, 3u);
  // max(scan time 400 s, codegen 500 s) of task time → 50.08 s of wall, × the 99.95 % dropped.
  EXPECT_NEAR(finding->impact_seconds, 500.0 * 60.1 / 600.0 * (1.0 - 0.0005), 0.01);
}

TEST(DiagnosePlanRules, ScanDiscardsMostNearMissesDoNotFire) {
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(ScanLog(200'000'000, 20'000'000, 20 * kGiB)), kScanDiscardsMost),
            nullptr);  // keeps 10 %
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(ScanLog(5'000'000, 1000, 20 * kGiB)), kScanDiscardsMost),
            nullptr);  // a small scan
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(ScanLog(200'000'000, 100'000, kGiB / 2)), kScanDiscardsMost),
            nullptr);  // little read
}

// BroadcastExchange [data size 41, rows 42, collect 43, build 44, broadcast 45], driver-set,
// under a join running 10 tasks.
PlanLog BroadcastLog(std::int64_t data_bytes, std::int64_t collect_ms) {
  PlanLog log;
  PlanNode broadcast{"BroadcastExchange",
                     {{"data size", 41, "size"},
                      {"number of output rows", 42},
                      {"time to collect", 43, "timing"},
                      {"time to build", 44, "timing"},
                      {"time to broadcast", 45, "timing"}},
                     {ScanNode("dim", 46)}};
  log.plan = PlanNode{"BroadcastHashJoin", {{"number of output rows", 40}}, {ScanNode("a", 47), broadcast}};
  log.per_task = {{40, 1000}, {47, 1000}};
  log.driver = {{41, data_bytes}, {42, 1000}, {43, collect_ms}, {44, 1000}, {45, 1000}};
  return log;
}

TEST(DiagnosePlanRules, BroadcastNearLimitFiresOnASlowLargeBroadcast) {
  const auto findings = DiagnosePlanLog(BroadcastLog(3 * kGiB / 2, 20'000));
  const Finding* finding = FindPlanFinding(findings, kBroadcastNearLimit);
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->scope.plan_node_name, "BroadcastExchange");
  EXPECT_NEAR(finding->impact_seconds, 22.0, 1e-9);  // collect + build + broadcast
}

TEST(DiagnosePlanRules, BroadcastNearTheConfiguredThresholdFiresWhenSlow) {
  PlanLog log = BroadcastLog(95 * (std::int64_t{1} << 20), 12'000);
  log.properties = {{"spark.sql.autoBroadcastJoinThreshold", "100m"}};
  EXPECT_NE(FindPlanFinding(DiagnosePlanLog(log), kBroadcastNearLimit), nullptr);
}

TEST(DiagnosePlanRules, BroadcastNearMissesDoNotFire) {
  // 9 MiB under the default 10 MiB threshold, shipped in 2 s: what broadcast joins are for.
  EXPECT_EQ(
      FindPlanFinding(DiagnosePlanLog(BroadcastLog(9 * (std::int64_t{1} << 20), 0)), kBroadcastNearLimit),
      nullptr);
  // Large but quick.
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(BroadcastLog(3 * kGiB / 2, 5000)), kBroadcastNearLimit), nullptr);
  // Slow but small against a raised threshold.
  PlanLog small = BroadcastLog(50 * (std::int64_t{1} << 20), 20'000);
  small.properties = {{"spark.sql.autoBroadcastJoinThreshold", "1g"}};
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(small), kBroadcastNearLimit), nullptr);
}

// Sort [spill size 51, sort time 52, peak memory 53] over a scan; every task sorts for 30 s.
PlanLog SpillLog(std::int64_t spill_per_task) {
  PlanLog log;
  log.plan = PlanNode{"Sort",
                      {{"spill size", 51, "size"}, {"sort time", 52, "timing"}, {"peak memory", 53, "size"}},
                      {ScanNode("a", 54)}};
  log.per_task = {{51, spill_per_task}, {52, 30'000}, {53, 512 << 20}, {54, 1000}};
  return log;
}

TEST(DiagnosePlanRules, OperatorSpillFiresNamingTheSort) {
  const auto findings = DiagnosePlanLog(SpillLog(kGiB));
  const Finding* finding = FindPlanFinding(findings, kOperatorSpill);
  ASSERT_NE(finding, nullptr);
  EXPECT_EQ(finding->scope.plan_node_name, "Sort");
  EXPECT_EQ(finding->scope.plan_node_id, 0u);
  // 10 GiB written and read at 100 MiB/s = 204.8 s of task time, within the 300 s of sort time:
  // 204.8 × 60.1 / 600 s of wall time.
  EXPECT_NEAR(finding->impact_seconds, 204.8 * 60.1 / 600.0, 0.01);
}

TEST(DiagnosePlanRules, OperatorSpillBelowTheFloorDoesNotFire) {
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(SpillLog(40 << 20)), kOperatorSpill), nullptr);  // 400 MiB in all
  EXPECT_EQ(FindPlanFinding(DiagnosePlanLog(SpillLog(0)), kOperatorSpill), nullptr);
}

TEST(DiagnosePlanRules, SparkByteStrings) {
  EXPECT_EQ(ParseSparkByteString("10485760"), 10485760);
  EXPECT_EQ(ParseSparkByteString("10m"), 10 * (std::int64_t{1} << 20));
  EXPECT_EQ(ParseSparkByteString("2g"), 2 * kGiB);
  EXPECT_EQ(ParseSparkByteString("100MB"), 100 * (std::int64_t{1} << 20));
  EXPECT_EQ(ParseSparkByteString("-1"), std::nullopt);
  EXPECT_EQ(ParseSparkByteString("ten"), std::nullopt);
  EXPECT_EQ(ParseSparkByteString("10x"), std::nullopt);
}

}  // namespace
}  // namespace sparktrace::diagnose
