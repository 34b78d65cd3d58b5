// The SQL plan and metric events (sql_plan_readers.cc) and the SQL parts of other events: a task's
// non-internal accumulables, a job's stage task counts, an execution's description and plan. On
// hand-written lines (shapes copied from the real logs) and on the real logs of shared/data.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"
#include "tests/unit/listener/events/listener_event_parser_test_support.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::listener::events {
namespace {

constexpr std::string_view kSqlStartPrefix =
    R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":7,)";

std::string SqlPlanTestNode(std::string_view name, std::string_view children, std::string_view metrics) {
  return R"({"nodeName":")" + std::string(name) + R"(","simpleString":")" + std::string(name) +
         R"( detail","children":[)" + std::string(children) +
         R"(],"metadata":{"Location":"s3://x"},"metrics":[)" + std::string(metrics) + "]}";
}

std::string SqlPlanTestMetric(std::string_view name, std::int64_t id, std::string_view type) {
  return R"({"name":")" + std::string(name) + R"(","accumulatorId":)" + std::to_string(id) +
         R"(,"metricType":")" + std::string(type) + R"("})";
}

// A chain of `depth` operators, each the only child of the one above.
std::string SqlPlanTestChain(std::size_t depth) {
  std::string json;
  for (std::size_t i = 0; i < depth; ++i)
    json += R"({"nodeName":"Project","simpleString":"Project","children":[)";
  for (std::size_t i = 0; i < depth; ++i) json += R"(],"metadata":{},"metrics":[]})";
  return json;
}

TEST(SqlPlanEvents, ExecutionStartKeepsDescriptionAndPlanInPreOrder) {
  const std::string scan = SqlPlanTestNode("Scan parquet db.t", "",
                                           SqlPlanTestMetric("number of output rows", 3, "sum") + "," +
                                               SqlPlanTestMetric("scan time", 4, "timing"));
  const std::string filter =
      SqlPlanTestNode("Filter", scan, SqlPlanTestMetric("number of output rows", 2, "sum"));
  const std::string exchange = SqlPlanTestNode("Exchange", "", SqlPlanTestMetric("data size", 5, "size"));
  const std::string root = SqlPlanTestNode("WholeStageCodegen (1)", filter + "," + exchange,
                                           SqlPlanTestMetric("duration", 1, "timing"));
  const std::string line =
      std::string(kSqlStartPrefix) +
      R"("description":"select * from t","details":"stack","physicalPlanDescription":"== Plan ==",)"
      R"("sparkPlanInfo":)" +
      root + R"(,"time":1000,"modifiedConfigs":{}})";
  const auto start = ParseAs<SqlExecutionStart>(line);
  EXPECT_EQ(start.execution_id, 7);
  EXPECT_EQ(start.time_ms, 1000);
  EXPECT_EQ(start.description, "select * from t");
  ASSERT_TRUE(start.plan);
  const SqlPlan& plan = *start.plan;
  ASSERT_EQ(plan.nodes.size(), 4u);
  EXPECT_EQ(plan.dropped_nodes, 0);
  EXPECT_EQ(plan.nodes[0].name, "WholeStageCodegen (1)");
  EXPECT_EQ(plan.nodes[0].detail, "WholeStageCodegen (1) detail");
  EXPECT_EQ(plan.nodes[0].children, (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(plan.nodes[1].name, "Filter");
  EXPECT_EQ(plan.nodes[1].children, (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(plan.nodes[2].name, "Scan parquet db.t");
  ASSERT_EQ(plan.nodes[2].metrics.size(), 2u);
  EXPECT_EQ(plan.nodes[2].metrics[1].name, "scan time");
  EXPECT_EQ(plan.nodes[2].metrics[1].accumulator_id, 4);
  EXPECT_EQ(plan.nodes[2].metrics[1].type, "timing");
  EXPECT_EQ(plan.nodes[3].name, "Exchange");
  EXPECT_TRUE(plan.nodes[3].children.empty());
}

TEST(SqlPlanEvents, LongTextIsCutAndNullsAreNone) {
  const std::string long_name(5000, 'x');
  const std::string line = std::string(kSqlStartPrefix) + R"("description":")" + long_name +
                           R"(","sparkPlanInfo":)" + SqlPlanTestNode(long_name, "", "") + R"(,"time":1})";
  const auto start = ParseAs<SqlExecutionStart>(line);
  EXPECT_EQ(start.description.size(), kMaxSqlDescriptionBytes);
  ASSERT_TRUE(start.plan);
  EXPECT_EQ(start.plan->nodes[0].detail.size(), kMaxPlanDetailBytes);
  EXPECT_EQ(start.plan->nodes[0].name, long_name);  // names are identifiers: kept whole

  const auto bare = ParseAs<SqlExecutionStart>(std::string(kSqlStartPrefix) +
                                               R"("description":null,"sparkPlanInfo":null,"time":1})");
  EXPECT_EQ(bare.description, "");
  EXPECT_FALSE(bare.plan);
}

TEST(SqlPlanEvents, PlansPastTheNodeBoundAreCountedNotKept) {
  // 30,000 leaves under one Union: a wide plan past the default bound of 20,000.
  std::string children;
  for (int i = 0; i < 30000; ++i) {
    if (i > 0) children += ',';
    children +=
        SqlPlanTestNode("LocalTableScan", "", SqlPlanTestMetric("number of output rows", 100 + i, "sum"));
  }
  const std::string line = std::string(kSqlStartPrefix) + R"("sparkPlanInfo":)" +
                           SqlPlanTestNode("Union", children, "") + R"(,"time":1})";
  EventParser parser;
  Result<SparkEvent> result = parser.Parse(line);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  const auto& start = std::get<SqlExecutionStart>(*result);
  ASSERT_TRUE(start.plan);
  EXPECT_EQ(start.plan->nodes.size(), 20000u);
  EXPECT_EQ(start.plan->dropped_nodes, 10001);
  EXPECT_EQ(start.plan->nodes[0].children.size(), 19999u);

  EventParserOptions small;
  small.max_plan_nodes = 10;
  EventParser bounded(small);
  Result<SparkEvent> cut = bounded.Parse(line);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(std::get<SqlExecutionStart>(*cut).plan->nodes.size(), 10u);
  EXPECT_EQ(std::get<SqlExecutionStart>(*cut).plan->dropped_nodes, 29991);
}

TEST(SqlPlanEvents, DeepPlansKeepTheirUpperLevelsWithoutFailing) {
  // 1,000 levels parse whole (simdjson's default depth would reject them); 3,000 keep kMaxPlanDepth.
  for (std::size_t depth : {std::size_t{1000}, std::size_t{3000}}) {
    const std::string line =
        std::string(kSqlStartPrefix) + R"("sparkPlanInfo":)" + SqlPlanTestChain(depth) + R"(,"time":1})";
    EventParser parser;
    Result<SparkEvent> result = parser.Parse(line);
    ASSERT_TRUE(result.ok()) << depth << ": " << result.error().ToString();
    const SqlPlan& plan = *std::get<SqlExecutionStart>(*result).plan;
    EXPECT_EQ(plan.nodes.size(), std::min(depth, kMaxPlanDepth)) << depth;
    EXPECT_EQ(plan.dropped_nodes, depth > kMaxPlanDepth ? 1 : 0) << depth;
  }
}

TEST(SqlPlanEvents, AdaptiveUpdatesMetricUpdatesAndDriverUpdates) {
  const auto update = ParseAs<SqlAdaptiveExecutionUpdate>(
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate","executionId":3,)"
      R"("physicalPlanDescription":"== Physical Plan ==","sparkPlanInfo":)" +
      SqlPlanTestNode("AdaptiveSparkPlan", SqlPlanTestNode("ShuffleQueryStage", "", ""), "") + "}");
  EXPECT_EQ(update.execution_id, 3);
  ASSERT_EQ(update.plan.nodes.size(), 2u);
  EXPECT_EQ(update.plan.nodes[1].name, "ShuffleQueryStage");

  const auto metrics = ParseAs<SqlAdaptiveMetricUpdates>(
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveSQLMetricUpdates","executionId":24,)"
      R"("sqlPlanMetrics":[{"name":"shuffle write time","accumulatorId":1927,"metricType":"nsTiming"}]})");
  EXPECT_EQ(metrics.execution_id, 24);
  ASSERT_EQ(metrics.metrics.size(), 1u);
  EXPECT_EQ(metrics.metrics[0].accumulator_id, 1927);
  EXPECT_EQ(metrics.metrics[0].type, "nsTiming");

  const auto driver = ParseAs<DriverAccumUpdates>(
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates","executionId":0,)"
      R"("accumUpdates":[[9,1048632],[10,1736]]})");
  EXPECT_EQ(driver.execution_id, 0);
  ASSERT_EQ(driver.updates.size(), 2u);
  EXPECT_EQ(driver.updates[0].accumulator_id, 9);
  EXPECT_EQ(driver.updates[0].update, 1048632);
  EXPECT_EQ(driver.updates[1].update, 1736);

  EXPECT_NE(ErrorOf(R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate",)"
                    R"("executionId":3})")
                .find("sparkPlanInfo"),
            std::string::npos);
}

TEST(SqlPlanEvents, TaskEndKeepsNonInternalAccumulablesOnly) {
  const std::string line =
      R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,"Task Type":"ResultTask",)"
      R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":5,"Index":2,"Attempt":0,"Launch Time":10,)"
      R"("Executor ID":"1","Finish Time":20,"Failed":false,"Killed":false,"Accumulables":[)"
      R"({"ID":1,"Name":"internal.metrics.executorRunTime","Update":5,"Value":5,"Internal":true,"Count Failed Values":true},)"
      R"({"ID":36,"Name":"number of output rows","Update":"12","Value":"61","Internal":true,"Count Failed Values":true,"Metadata":"sql"},)"
      R"({"ID":37,"Name":"my accumulator","Update":"1.5","Value":"3.0","Internal":false,"Count Failed Values":false},)"
      R"({"ID":38,"Name":"spill size","Update":"-1","Value":"0","Internal":true,"Count Failed Values":true,"Metadata":"sql"},)"
      R"({"ID":9,"Name":"internal.metrics.peakExecutionMemory","Update":4096,"Value":8192,"Internal":true,"Count Failed Values":true}]},)"
      R"("Task Metrics":{"Executor Run Time":5}})";
  const auto task = ParseAs<TaskEnd>(line);
  ASSERT_EQ(task.accumulable_updates.size(), 2u);
  EXPECT_EQ(task.accumulable_updates[0].accumulator_id, 36);
  EXPECT_EQ(task.accumulable_updates[0].update, 12);
  EXPECT_EQ(task.accumulable_updates[1].accumulator_id, 38);
  EXPECT_EQ(task.accumulable_updates[1].update, -1);
  // Before Spark 3.0 the peak execution memory is only among the accumulables.
  ASSERT_TRUE(task.metrics.peak_execution_memory_bytes);
  EXPECT_EQ(*task.metrics.peak_execution_memory_bytes, 4096);
  EXPECT_EQ(task.index, 2);
}

// The feeds read without the SQL metrics (EventParserOptions::sql_metrics): no plan, no task updates,
// the AQE and driver events ignored; the rest of each event, the peak memory of 2.x logs included, read.
TEST(SqlPlanEvents, WithoutSqlMetricsPlansAndUpdatesAreLeftUnread) {
  EventParserOptions options;
  options.sql_metrics = false;
  EventParser parser(options);
  auto start = parser.Parse(std::string(kSqlStartPrefix) + R"("time":5,"description":"count","sparkPlanInfo":)" +
                            SqlPlanTestNode("Scan", "", SqlPlanTestMetric("rows", 1, "sum")) + "}");
  ASSERT_TRUE(start.ok()) << start.error().message;
  const auto* execution = std::get_if<SqlExecutionStart>(&*start);
  ASSERT_NE(execution, nullptr);
  EXPECT_EQ(execution->execution_id, 7);
  EXPECT_FALSE(execution->plan.has_value());
  auto driver = parser.Parse(
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates","executionId":0,)"
      R"("accumUpdates":[[9,1048632]]})");
  ASSERT_TRUE(driver.ok());
  EXPECT_TRUE(std::holds_alternative<IgnoredEvent>(*driver));
  auto task = parser.Parse(
      R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,"Task Type":"ResultTask",)"
      R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":5,"Index":2,"Attempt":0,"Launch Time":10,)"
      R"("Executor ID":"1","Finish Time":20,"Failed":false,"Killed":false,"Accumulables":[)"
      R"({"ID":36,"Name":"number of output rows","Update":"12","Value":"61","Internal":true},)"
      R"({"ID":9,"Name":"internal.metrics.peakExecutionMemory","Update":4096,"Value":8192,"Internal":true}]},)"
      R"("Task Metrics":{"Executor Run Time":5}})");
  ASSERT_TRUE(task.ok()) << task.error().message;
  const auto* task_end = std::get_if<TaskEnd>(&*task);
  ASSERT_NE(task_end, nullptr);
  EXPECT_TRUE(task_end->accumulable_updates.empty());
  ASSERT_TRUE(task_end->metrics.peak_execution_memory_bytes);
  EXPECT_EQ(*task_end->metrics.peak_execution_memory_bytes, 4096);
}

TEST(SqlPlanEvents, OddAccumulablesLoseThemselvesNotTheTask) {
  const auto task = ParseAs<TaskEnd>(
      R"({"Event":"SparkListenerTaskEnd","Stage ID":1,"Stage Attempt ID":0,"Task End Reason":{"Reason":"Success"},)"
      R"("Task Info":{"Task ID":5,"Index":0,"Launch Time":10,"Finish Time":20,"Accumulables":[)"
      R"(5,{"ID":"x","Name":"rows","Update":"3"},{"Name":"rows","ID":7,"Update":4},{"ID":8,"Name":"rows","Update":null}]}})");
  ASSERT_EQ(task.accumulable_updates.size(), 1u);
  EXPECT_EQ(task.accumulable_updates[0].accumulator_id, 7);  // keys in another order still read
  EXPECT_EQ(task.accumulable_updates[0].update, 4);
}

TEST(SqlPlanEvents, JobStartKeepsEachStageTaskCount) {
  const auto job = ParseAs<JobStart>(
      R"({"Event":"SparkListenerJobStart","Job ID":4,"Submission Time":5,"Stage Infos":[)"
      R"({"Stage ID":6,"Stage Attempt ID":0,"Stage Name":"a","Number of Tasks":200,"RDD Info":[{"RDD ID":1}]},)"
      R"({"Stage ID":7,"Stage Attempt ID":0,"Stage Name":"b","Number of Tasks":3,"RDD Info":[]}],)"
      R"("Stage IDs":[6,7],"Properties":{"spark.sql.execution.id":"2"}})");
  ASSERT_EQ(job.stage_tasks.size(), 2u);
  EXPECT_EQ(job.stage_tasks[0].stage_id, 6);
  EXPECT_EQ(job.stage_tasks[0].num_tasks, 200);
  EXPECT_EQ(job.stage_tasks[1].num_tasks, 3);
  EXPECT_EQ(job.properties.sql_execution_id, 2);
}

// Events of a real log by type, parsed with the default parser.
struct SqlPlanTestLog {
  std::vector<SparkEvent> events;
  std::size_t malformed = 0;

  template <typename Event>
  std::vector<const Event*> All() const {
    std::vector<const Event*> found;
    for (const SparkEvent& event : events) {
      if (const auto* typed = std::get_if<Event>(&event)) found.push_back(typed);
    }
    return found;
  }
};

SqlPlanTestLog LoadSqlPlanTestLog(std::string_view relative_path, std::string& why) {
  SqlPlanTestLog log;
  const auto data_dir = test_data::FindDataDir();
  if (!data_dir) {
    why = test_data::DataDirMissingMessage();
    return log;
  }
  std::optional<std::string> content = test_data::ReadLogFile(*data_dir / relative_path, why);
  if (!content) return log;
  EventParser parser;
  for (std::string_view line : test_data::SplitLines(*content)) {
    Result<SparkEvent> result = parser.Parse(line);
    if (result.ok()) {
      log.events.push_back(std::move(*result));
    } else {
      ++log.malformed;
    }
  }
  return log;
}

TEST(SqlPlanEventsRealLogs, AqeLogHasItsPlansUpdatesAndDriverValues) {
  std::string why;
  const SqlPlanTestLog log = LoadSqlPlanTestLog("spark-events/local-1642039451826", why);
  if (!why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(log.malformed, 0u);
  const auto starts = log.All<SqlExecutionStart>();
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_TRUE(starts[0]->plan);
  EXPECT_EQ(starts[0]->plan->nodes[0].name, "AdaptiveSparkPlan");
  EXPECT_EQ(starts[0]->plan->nodes[0].detail, "AdaptiveSparkPlan isFinalPlan=false");
  EXPECT_EQ(log.All<SqlAdaptiveExecutionUpdate>().size(), 6u);
  EXPECT_EQ(log.All<DriverAccumUpdates>().size(), 4u);
  // The Range's "number of output rows" (accumulator 36), 12 in this task (line checked by hand).
  std::size_t tasks_with_sql_updates = 0;
  for (const TaskEnd* task : log.All<TaskEnd>()) {
    if (!task->accumulable_updates.empty()) ++tasks_with_sql_updates;
    for (const AccumulableUpdate& update : task->accumulable_updates)
      EXPECT_LT(update.accumulator_id, 1000) << "an internal accumulable was kept";
  }
  EXPECT_GT(tasks_with_sql_updates, 0u);
}

TEST(SqlPlanEventsRealLogs, DriverAccumUpdatesOfSpark31) {
  std::string why;
  const SqlPlanTestLog log = LoadSqlPlanTestLog("spark-events/app-20200706201101-0003", why);
  if (!why.empty()) GTEST_SKIP() << why;
  const auto driver = log.All<DriverAccumUpdates>();
  ASSERT_EQ(driver.size(), 2u);
  // {"executionId":0,"accumUpdates":[[9,1048632],[10,1736],[11,37],[12,5]]}
  const DriverAccumUpdates* first = driver[0]->updates.size() == 4 ? driver[0] : driver[1];
  ASSERT_EQ(first->updates.size(), 4u);
  EXPECT_EQ(first->updates[0].accumulator_id, 9);
  EXPECT_EQ(first->updates[0].update, 1048632);
  EXPECT_EQ(first->updates[3].accumulator_id, 12);
  EXPECT_EQ(first->updates[3].update, 5);
}

TEST(SqlPlanEventsRealLogs, EveryPlanOfTheRealLogsParses) {
  // Logs with sparkPlanInfo, Spark 3.0 to 3.5, Databricks and GPU plans included.
  const std::vector<std::string> logs = {"spark-events/local-1596020211915",
                                         "spark-events/app-20200706201101-0003",
                                         "spark-events-problems/nds_q66_gpu.zstd",
                                         "spark-events-problems/nds_q72_dataproc_2_2.zstd",
                                         "spark-events-problems/aqeshuffle_eventlog.zstd",
                                         "spark-events-problems/python_udf_eventlog",
                                         "spark-events-problems/join_missing_sql_end"};
  for (const std::string& path : logs) {
    std::string why;
    const SqlPlanTestLog log = LoadSqlPlanTestLog(path, why);
    if (!why.empty()) GTEST_SKIP() << why;
    const auto starts = log.All<SqlExecutionStart>();
    EXPECT_FALSE(starts.empty()) << path;
    std::size_t nodes = 0;
    for (const SqlExecutionStart* start : starts) {
      if (!start->plan) continue;
      nodes += start->plan->nodes.size();
      EXPECT_EQ(start->plan->dropped_nodes, 0) << path;
      for (const SqlPlanNode& node : start->plan->nodes) {
        EXPECT_FALSE(node.name.empty()) << path;
        for (std::uint32_t child : node.children) EXPECT_LT(child, start->plan->nodes.size()) << path;
      }
    }
    EXPECT_GT(nodes, 0u) << path;
  }
}

}  // namespace
}  // namespace sparktrace::listener::events
