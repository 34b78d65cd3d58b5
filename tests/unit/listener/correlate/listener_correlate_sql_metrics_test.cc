// SQL operator metrics as Spark's SQL UI aggregates them (sql_metric_aggregation.h,
// sql_execution_model.h, docs/diagnose-sql.md): each metric type against figures computed by hand
// from SQLMetrics.stringValue's rules, SQLAppStatusListener's task and stage attempt rules, the
// freeze at the execution's end, and the bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/sql_execution_model.h"
#include "listener/correlate/sql_metric_aggregation.h"
#include "listener/correlate/sql_plan.h"
#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::correlate {
namespace {

using events::AccumulableUpdate;

SqlMetricSummary SqlMetricsTestAggregate(SqlMetricType type, const std::vector<std::int64_t>& task_values,
                                         std::int64_t zero_slots = 0,
                                         const std::vector<std::int64_t>& driver_values = {}) {
  SqlMetricValues values(type);
  for (std::int64_t value : task_values) values.Add(value, 1000);
  SqlMetricAggregator aggregator(type);
  aggregator.AddStage(1, values);
  aggregator.AddZeros(zero_slots);
  for (std::int64_t value : driver_values) aggregator.AddDriverValue(value);
  return aggregator.Finish();
}

TEST(SqlMetricAggregation, SumAddsEveryValueAndHasNoDistribution) {
  const SqlMetricSummary sum = SqlMetricsTestAggregate(SqlMetricType::kSum, {3, 5, -2}, 2, {4});
  EXPECT_EQ(sum.total, 10);
  EXPECT_FALSE(sum.min);
  EXPECT_FALSE(sum.median);
  EXPECT_FALSE(sum.max);
  EXPECT_EQ(sum.divisor, 1);
  const SqlMetricSummary custom = SqlMetricsTestAggregate(SqlMetricTypeFromName("v2Custom_x.Y"), {3, 4});
  EXPECT_EQ(custom.total, 7);
  EXPECT_FALSE(custom.median);
}

TEST(SqlMetricAggregation, SizeCountsValuesFromZeroAndZeroSlots) {
  // Slots 4, -1 (never set), 10, 0 and one index that reported nothing (0): counted 0, 0, 4, 10.
  const SqlMetricSummary size = SqlMetricsTestAggregate(SqlMetricType::kSize, {4, -1, 10, 0}, 1);
  EXPECT_EQ(size.total, 14);
  EXPECT_EQ(size.min, 0);
  EXPECT_EQ(size.median, 4);  // sorted[4 / 2]: the upper middle
  EXPECT_EQ(size.max, 10);
  EXPECT_EQ(size.values, 4);
  EXPECT_FALSE(size.approximate);
}

TEST(SqlMetricAggregation, TimingsTakeSortedMiddleAndDriverValues) {
  const SqlMetricSummary timing = SqlMetricsTestAggregate(SqlMetricType::kTiming, {7, 1, 3});
  EXPECT_EQ(timing.total, 11);
  EXPECT_EQ(timing.min, 1);
  EXPECT_EQ(timing.median, 3);
  EXPECT_EQ(timing.max, 7);
  const SqlMetricSummary ns =
      SqlMetricsTestAggregate(SqlMetricType::kNsTiming, {7000000, 1000000}, 0, {2000000});
  EXPECT_EQ(ns.total, 10000000);  // raw nanoseconds
  EXPECT_EQ(ns.median, 2000000);
  EXPECT_EQ(SqlMetricUnit(SqlMetricType::kNsTiming), "ns");
}

TEST(SqlMetricAggregation, AverageCountsPositiveValuesOverTen) {
  // Spark stores averages x10; 0 and -1 are not counted, nor are zero slots.
  const SqlMetricSummary average = SqlMetricsTestAggregate(SqlMetricType::kAverage, {25, 0, 15, -1, 40}, 3);
  EXPECT_EQ(average.divisor, 10);
  EXPECT_EQ(average.values, 3);
  EXPECT_EQ(average.min, 15);
  EXPECT_EQ(average.median, 25);
  EXPECT_EQ(average.max, 40);
  EXPECT_EQ(average.total, 25);  // the median: Spark shows no total
}

TEST(SqlMetricAggregation, OneValueAndNoValue) {
  const SqlMetricSummary one = SqlMetricsTestAggregate(SqlMetricType::kSize, {42});
  EXPECT_EQ(one.total, 42);
  EXPECT_EQ(one.min, 42);
  EXPECT_EQ(one.median, 42);
  EXPECT_EQ(one.max, 42);
  const SqlMetricSummary none = SqlMetricsTestAggregate(SqlMetricType::kTiming, {-1, -1});
  EXPECT_EQ(none.total, 0);
  EXPECT_FALSE(none.min);
  EXPECT_FALSE(none.median);
  EXPECT_FALSE(none.max);
}

TEST(SqlMetricAggregation, ThinnedValuesKeepTotalsMinAndMaxExact) {
  SqlMetricValues values(SqlMetricType::kSize);
  for (std::int64_t value = 1; value <= 10000; ++value) values.Add(value, 64);
  EXPECT_LE(values.kept().size(), 64u);
  EXPECT_GT(values.stride(), 1);
  SqlMetricAggregator aggregator(SqlMetricType::kSize);
  aggregator.AddStage(1, values);
  const SqlMetricSummary summary = aggregator.Finish();
  EXPECT_TRUE(summary.approximate);
  EXPECT_EQ(summary.total, 50005000);
  EXPECT_EQ(summary.min, 1);
  EXPECT_EQ(summary.max, 10000);
  EXPECT_EQ(summary.values, 10000);
  ASSERT_TRUE(summary.median);
  EXPECT_NEAR(static_cast<double>(*summary.median), 5001.0, 400.0);
}

// The median is a weighted selection, not a sort: against the sorted expansion of the same values
// (duplicates, zero slots standing for many indexes, several stages), Spark's sorted(n / 2).
TEST(SqlMetricAggregation, MedianEqualsTheSortedExpansionsUpperMiddle) {
  std::mt19937 random(31);  // fixed seed: the same cases every run
  for (int trial = 0; trial < 300; ++trial) {
    SqlMetricAggregator aggregator(SqlMetricType::kTiming);
    std::vector<std::int64_t> expanded;
    const int stages = 1 + static_cast<int>(random() % 3);
    for (int stage = 0; stage < stages; ++stage) {
      SqlMetricValues values(SqlMetricType::kTiming);
      const int tasks = 1 + static_cast<int>(random() % 40);
      for (int task = 0; task < tasks; ++task) {
        const auto value = static_cast<std::int64_t>(random() % 12);  // few distinct: many ties
        values.Add(value, 1000);
        expanded.push_back(value);
      }
      aggregator.AddStage(stage, values);
      const auto zeros = static_cast<std::int64_t>(random() % 30);
      aggregator.AddZeros(zeros);
      expanded.insert(expanded.end(), static_cast<std::size_t>(zeros), 0);
    }
    std::sort(expanded.begin(), expanded.end());
    const SqlMetricSummary summary = aggregator.Finish();
    ASSERT_TRUE(summary.median) << "trial " << trial;
    EXPECT_EQ(*summary.median, expanded[expanded.size() / 2]) << "trial " << trial;
    EXPECT_EQ(summary.min, expanded.front()) << "trial " << trial;
    EXPECT_EQ(summary.max, expanded.back()) << "trial " << trial;
  }
}

// Event builders for the model.
events::SqlPlanMetric SqlMetricsTestMetric(std::string name, std::int64_t id, std::string type) {
  return events::SqlPlanMetric{std::move(name), id, std::move(type)};
}

events::SqlExecutionStart SqlMetricsTestStart(std::int64_t execution_id,
                                              std::vector<events::SqlPlanMetric> metrics) {
  events::SqlExecutionStart start;
  start.execution_id = execution_id;
  start.time_ms = 1000;
  start.description = "query " + std::to_string(execution_id);
  events::SqlPlan plan;
  plan.nodes.push_back(
      events::SqlPlanNode{"HashAggregate", "HashAggregate(keys=[])", std::move(metrics), {}});
  start.plan = std::move(plan);
  return start;
}

events::JobStart SqlMetricsTestJob(std::int32_t job_id, std::int64_t execution_id,
                                   std::vector<events::JobStageTasks> stages) {
  events::JobStart job;
  job.job_id = job_id;
  job.submission_time_ms = 1000;
  for (const auto& stage : stages) job.stage_ids.push_back(stage.stage_id);
  job.stage_tasks = std::move(stages);
  job.properties.sql_execution_id = execution_id;
  return job;
}

events::TaskEnd SqlMetricsTestTask(std::int32_t stage_id, std::int32_t attempt, std::int32_t index,
                                   bool failed, std::vector<AccumulableUpdate> updates) {
  static std::int64_t next_task_id = 0;
  events::TaskEnd task;
  task.stage_id = stage_id;
  task.stage_attempt_id = attempt;
  task.task_id = next_task_id++;
  task.index = index;
  task.launch_time_ms = 1000;
  task.finish_time_ms = 1100;
  task.failed = failed;
  task.reason = failed ? events::TaskEndReason::kExceptionFailure : events::TaskEndReason::kSuccess;
  task.accumulable_updates = std::move(updates);
  return task;
}

events::SqlExecutionEnd SqlMetricsTestEnd(std::int64_t execution_id) {
  events::SqlExecutionEnd end;
  end.execution_id = execution_id;
  end.time_ms = 2000;
  return end;
}

class SqlExecutionModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.OnExecutionStart(
        SqlMetricsTestStart(1, {SqlMetricsTestMetric("number of output rows", 10, "sum"),
                                SqlMetricsTestMetric("spill size", 11, "size"),
                                SqlMetricsTestMetric("time in aggregation build", 12, "timing")}));
    model_.OnJobStart(SqlMetricsTestJob(0, 1, {{3, 4}}));
  }

  SqlMetricSummary Metric(std::int64_t accumulator_id) const {
    const auto summaries = model_.MetricSummaries(1);
    auto found = summaries.find(accumulator_id);
    EXPECT_NE(found, summaries.end()) << accumulator_id;
    return found == summaries.end() ? SqlMetricSummary{} : found->second;
  }

  SqlExecutionModel model_;
};

TEST_F(SqlExecutionModelTest, TaskAttemptsOverwriteUntilTheirIndexSucceeds) {
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 0, false, {{10, 5}, {11, 100}, {12, 7}}));
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 1, true, {{10, 50}, {11, 999}}));  // failed attempt
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 1, false, {{10, 6}}));             // its retry: 11 stays 999
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 2, false, {{10, 7}, {11, -1}, {12, 9}}));
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 2, false, {{10, 1000}}));  // speculative copy: ignored
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 1, false, {{99, 1}}));     // not a metric of the execution
  // Index 3 never ran: a 0 slot for every metric.
  EXPECT_EQ(Metric(10).total, 18);
  const SqlMetricSummary spill = Metric(11);  // slots 100, 999, -1, 0: counted 0, 100, 999
  EXPECT_EQ(spill.total, 1099);
  EXPECT_EQ(spill.min, 0);
  EXPECT_EQ(spill.median, 100);
  EXPECT_EQ(spill.max, 999);
  const SqlMetricSummary build = Metric(12);  // slots 7, 0, 9, 0
  EXPECT_EQ(build.total, 16);
  EXPECT_EQ(build.min, 0);
  EXPECT_EQ(build.median, 7);
  EXPECT_EQ(build.max, 9);
  EXPECT_EQ(build.stage_ids, (std::vector<std::int32_t>{3}));

  events::DriverAccumUpdates driver;
  driver.execution_id = 1;
  driver.updates = {{11, 50}, {12, -1}};
  model_.OnDriverAccumUpdates(driver);
  EXPECT_EQ(Metric(11).total, 1149);  // counted 0, 50, 100, 999
  EXPECT_EQ(Metric(11).median, 100);  // sorted[4 / 2]
  EXPECT_EQ(Metric(12).total, 16);    // -1 is not counted

  model_.OnExecutionEnd(SqlMetricsTestEnd(1));
  ASSERT_TRUE(model_.Find(1)->final_metrics);
  // Frozen: nothing after the end changes what Spark showed.
  model_.OnDriverAccumUpdates(driver);
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 3, false, {{10, 100}}));
  EXPECT_EQ(Metric(10).total, 18);
  EXPECT_EQ(Metric(11).total, 1149);
}

TEST_F(SqlExecutionModelTest, OnlyTheLatestStageAttemptCounts) {
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 0, false, {{10, 10}}));
  model_.OnStageSubmitted(3, 1);
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 1, false, {{10, 20}}));  // a zombie task of attempt 0
  model_.OnTaskEnd(SqlMetricsTestTask(3, 1, 0, false, {{10, 3}}));
  EXPECT_EQ(Metric(10).total, 3);
  model_.OnStageSubmitted(3, 1);  // the same attempt again changes nothing
  EXPECT_EQ(Metric(10).total, 3);
}

TEST_F(SqlExecutionModelTest, AdaptivePlansAddMetricsAndReplaceThePlan) {
  events::SqlAdaptiveExecutionUpdate update;
  update.execution_id = 1;
  update.plan.nodes.push_back(events::SqlPlanNode{"AdaptiveSparkPlan", "", {}, {1}});
  update.plan.nodes.push_back(events::SqlPlanNode{
      "AQEShuffleRead", "", {SqlMetricsTestMetric("number of partitions", 20, "sum")}, {}});
  model_.OnAdaptiveExecutionUpdate(update);
  events::SqlAdaptiveMetricUpdates added;
  added.execution_id = 1;
  added.metrics = {SqlMetricsTestMetric("fetch wait time", 30, "timing")};
  model_.OnAdaptiveMetricUpdates(added);
  model_.OnTaskEnd(SqlMetricsTestTask(3, 0, 0, false, {{10, 1}, {20, 2}, {30, 3}}));
  const SqlExecutionDetail* execution = model_.Find(1);
  ASSERT_NE(execution, nullptr);
  EXPECT_EQ(execution->plan_version, SqlPlanVersion::kAdaptive);
  EXPECT_EQ(execution->plan_updates, 1);
  ASSERT_EQ(execution->plan.nodes.size(), 2u);
  EXPECT_EQ(execution->plan.nodes[1].name, "AQEShuffleRead");
  // The first plan's metric still counts; so do the update's and the AQE metric update's.
  EXPECT_EQ(Metric(10).total, 1);
  EXPECT_EQ(Metric(20).total, 2);
  EXPECT_EQ(Metric(30).total, 3);
}

TEST(SqlExecutionModel, JobsBeforeAnyMetricGiveTheirStagesNoRecord) {
  SqlExecutionModel model;
  model.OnJobStart(SqlMetricsTestJob(0, 5, {{1, 2}}));  // execution 5 known, but without metrics yet
  model.OnExecutionStart(SqlMetricsTestStart(5, {SqlMetricsTestMetric("rows", 10, "sum")}));
  model.OnTaskEnd(SqlMetricsTestTask(1, 0, 0, false, {{10, 4}}));
  EXPECT_TRUE(model.MetricSummaries(5).empty());
  // A job of no execution gives none either.
  events::JobStart plain = SqlMetricsTestJob(1, 0, {{2, 1}});
  plain.properties.sql_execution_id.reset();
  model.OnJobStart(plain);
  model.OnTaskEnd(SqlMetricsTestTask(2, 0, 0, false, {{10, 4}}));
  EXPECT_TRUE(model.MetricSummaries(5).empty());
}

TEST(SqlExecutionModel, ExecutionsPastTheBoundAreCountedAndTheOldestEndedMakesRoom) {
  SqlLimits limits;
  limits.max_executions = 2;
  SqlExecutionModel model(limits);
  for (std::int64_t id : {1, 2, 3}) model.OnExecutionStart(SqlMetricsTestStart(id, {}));
  EXPECT_EQ(model.executions().size(), 2u);
  EXPECT_EQ(model.counters().executions_dropped, 1);
  EXPECT_EQ(model.Find(3), nullptr);
  model.OnExecutionEnd(SqlMetricsTestEnd(1));
  model.OnExecutionStart(SqlMetricsTestStart(4, {}));
  EXPECT_EQ(model.counters().executions_dropped, 2);
  EXPECT_EQ(model.Find(1), nullptr);
  EXPECT_NE(model.Find(2), nullptr);
  EXPECT_NE(model.Find(4), nullptr);
}

TEST(SqlExecutionModel, ManyTaskValuesStayBoundedWithExactTotals) {
  SqlLimits limits;
  limits.max_task_values = 1000;
  SqlExecutionModel model(limits);
  model.OnExecutionStart(SqlMetricsTestStart(
      1, {SqlMetricsTestMetric("rows", 10, "sum"), SqlMetricsTestMetric("data size", 11, "size")}));
  constexpr std::int32_t kTasks = 50000;
  model.OnJobStart(SqlMetricsTestJob(0, 1, {{1, kTasks}}));
  for (std::int32_t index = 0; index < kTasks; ++index)
    model.OnTaskEnd(SqlMetricsTestTask(1, 0, index, false, {{10, 1}, {11, index}}));
  model.OnTaskEnd(SqlMetricsTestTask(1, 0, kTasks, false, {{10, 1}}));  // past the task count
  EXPECT_EQ(model.counters().task_updates_out_of_range, 1);
  const auto summaries = model.MetricSummaries(1);
  EXPECT_EQ(summaries.at(10).total, kTasks);
  const SqlMetricSummary& size = summaries.at(11);
  EXPECT_TRUE(size.approximate);
  EXPECT_EQ(size.total, std::int64_t{kTasks} * (kTasks - 1) / 2);
  EXPECT_EQ(size.min, 0);
  EXPECT_EQ(size.max, kTasks - 1);
  EXPECT_NEAR(static_cast<double>(*size.median), kTasks / 2.0, kTasks * 0.02);
}

TEST(SqlExecutionModel, HugePlanThroughTheParserStaysBounded) {
  std::string children;
  for (int i = 0; i < 30000; ++i) {
    if (i > 0) children += ',';
    children += R"({"nodeName":"LocalTableScan","simpleString":"LocalTableScan","children":[],"metadata":{},)"
                R"("metrics":[{"name":"number of output rows","accumulatorId":)" +
                std::to_string(100 + i) + R"(,"metricType":"sum"}]})";
  }
  const std::string line =
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":1,)"
      R"("description":"union","sparkPlanInfo":{"nodeName":"Union","simpleString":"Union","children":[)" +
      children + R"(],"metadata":{},"metrics":[]},"time":1})";
  events::EventParser parser;
  Result<events::SparkEvent> event = parser.Parse(line);
  ASSERT_TRUE(event.ok()) << event.error().ToString();
  ApplicationModel model;
  model.Apply(*event);
  const SqlExecutionDetail* execution = model.sql().Find(1);
  ASSERT_NE(execution, nullptr);
  EXPECT_EQ(execution->plan.nodes.size(), 20000u);
  EXPECT_EQ(execution->plan.dropped_nodes, 10001);
  EXPECT_EQ(execution->metric_types.size(), 19999u);
}

TEST(SqlPlanReading, CodegenStagesFollowWholeStageCodegenDownToInputAdapters) {
  events::SqlPlan plan;
  // 0 WholeStageCodegen (2) > 1 HashAggregate > 2 InputAdapter > 3 Exchange > 4 WholeStageCodegen (1) > 5
  // Project
  plan.nodes = {{"WholeStageCodegen (2)", "", {}, {1}}, {"HashAggregate", "", {}, {2}},
                {"InputAdapter", "", {}, {3}},          {"Exchange", "", {}, {4}},
                {"WholeStageCodegen (1)", "", {}, {5}}, {"Project", "", {}, {}}};
  const auto stages = CodegenStageIds(plan);
  const std::vector<std::optional<std::int32_t>> expected = {2, 2, 2, std::nullopt, 1, 1};
  EXPECT_EQ(stages, expected);
  EXPECT_EQ(CodegenStageIdFromName("WholeStageCodegen (12)"), 12);
  EXPECT_FALSE(CodegenStageIdFromName("WholeStageCodegen"));
  EXPECT_FALSE(CodegenStageIdFromName("Project"));
}

TEST(SqlPlanReading, TopOperatorsRankByTimeAndSkipRepeats) {
  events::SqlPlan plan;
  plan.nodes = {
      {"Sort",
       "",
       {SqlMetricsTestMetric("sort time", 1, "timing"), SqlMetricsTestMetric("spill size", 2, "size")},
       {1, 2}},
      {"Exchange",
       "",
       {SqlMetricsTestMetric("shuffle write time", 3, "nsTiming"),
        SqlMetricsTestMetric("number of output rows", 4, "sum")},
       {}},
      {"Exchange",
       "",
       {SqlMetricsTestMetric("shuffle write time", 3, "nsTiming"),
        SqlMetricsTestMetric("number of output rows", 4, "sum")},
       {}},
      {"Project", "", {}, {}}};
  std::map<std::int64_t, SqlMetricSummary> metrics;
  metrics[1].total = 40;          // ms
  metrics[2].total = 1 << 20;     // bytes
  metrics[3].total = 2500000000;  // ns: 2,500 ms
  metrics[4].total = 77;
  const auto top = TopOperatorsByTime(plan, metrics, 5);
  ASSERT_EQ(top.size(), 2u);  // the reused exchange once; the project has no time
  EXPECT_EQ(top[0].node, 1u);
  EXPECT_DOUBLE_EQ(top[0].time_ms, 2500.0);
  EXPECT_EQ(top[0].output_rows, 77);
  EXPECT_EQ(top[1].node, 0u);
  EXPECT_EQ(top[1].spill_bytes, 1 << 20);
}

TEST(SqlApplicationModel, ExecutionsJoinTheirJobsAndTheirOperation) {
  ApplicationModel model;
  events::SqlExecutionStart start = SqlMetricsTestStart(4, {SqlMetricsTestMetric("rows", 10, "sum")});
  start.job_tags = std::vector<std::string>{
      "SparkConnect_OperationTag_User_u_Session_8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f_Operation_"
      "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59"};
  model.Apply(start);
  model.Apply(SqlMetricsTestJob(2, 4, {{1, 1}}));
  model.Apply(SqlMetricsTestJob(3, 4, {{2, 1}}));
  model.Apply(SqlMetricsTestTask(1, 0, 0, false, {{10, 5}}));
  model.Apply(SqlMetricsTestTask(2, 0, 0, false, {{10, 6}}));
  EXPECT_EQ(model.JobsOfSqlExecution(4), (std::vector<std::int32_t>{2, 3}));
  EXPECT_EQ(model.OperationOfSqlExecution(4), "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59");
  EXPECT_EQ(model.sql().MetricSummaries(4).at(10).total, 11);
  EXPECT_FALSE(model.OperationOfSqlExecution(99));
}

}  // namespace
}  // namespace sparktrace::listener::correlate
