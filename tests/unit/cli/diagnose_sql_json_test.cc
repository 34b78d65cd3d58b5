// `sparktrace diagnose`'s SQL executions (cli/diagnose/sql_report.cc): the JSON contract of issue 31
// on real logs (figures checked by hand against the raw task updates), the bounds' flags and the text
// report's lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/diagnose_command.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::cli {
namespace {

namespace test_data = listener::events::test_data;

struct DiagnoseSqlRun {
  int code = 0;
  std::string out;
  std::string err;
};

DiagnoseSqlRun RunDiagnoseForSql(std::vector<std::string> args) {
  std::ostringstream out, err;
  DiagnoseSqlRun run;
  run.code = RunDiagnoseCommand(args, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// The first application of `diagnose --json` on one shared-data log; null when the data is absent.
nlohmann::json DiagnoseSqlApplication(const std::string& relative, std::vector<std::string> flags = {}) {
  const auto data_dir = test_data::FindDataDir();
  if (!data_dir) return nullptr;
  flags.insert(flags.begin(), "--json");
  flags.push_back((*data_dir / relative).string());
  const DiagnoseSqlRun run = RunDiagnoseForSql(flags);
  EXPECT_EQ(run.code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc.at("applications").size(), 1u);
  return doc.at("applications").at(0);
}

// Every node of a plan, pre-order.
void CollectSqlNodes(const nlohmann::json& node, std::vector<const nlohmann::json*>& out) {
  out.push_back(&node);
  for (const nlohmann::json& child : node.at("children")) CollectSqlNodes(child, out);
}

const nlohmann::json* FindSqlMetric(const nlohmann::json& execution, std::int64_t accumulator_id) {
  std::vector<const nlohmann::json*> nodes;
  CollectSqlNodes(execution.at("plan"), nodes);
  for (const nlohmann::json* node : nodes) {
    for (const nlohmann::json& metric : node->at("metrics")) {
      if (metric.at("accumulator_id").get<std::int64_t>() == accumulator_id) return &metric;
    }
  }
  return nullptr;
}

TEST(DiagnoseSqlJson, ExecutionsFollowTheContract) {
  const nlohmann::json app = DiagnoseSqlApplication("spark-events/local-1642039451826");
  if (app.is_null()) GTEST_SKIP() << test_data::DataDirMissingMessage();
  const nlohmann::json& executions = app.at("sql_executions");
  ASSERT_EQ(executions.size(), 2u);
  std::int64_t previous = -1;
  for (const nlohmann::json& execution : executions) {
    EXPECT_GT(execution.at("execution_id").get<std::int64_t>(), previous);
    previous = execution.at("execution_id").get<std::int64_t>();
    EXPECT_TRUE(execution.at("description").is_string());
    EXPECT_TRUE(execution.at("operation_id").is_null());  // not a Spark Connect log
    EXPECT_TRUE(execution.at("job_ids").is_array());
    EXPECT_TRUE(execution.at("start_ms").is_number_integer());
    EXPECT_TRUE(execution.at("end_ms").is_number_integer());
    EXPECT_EQ(execution.at("plan_version"), "adaptive");
    EXPECT_EQ(execution.at("truncated"), false);
    std::vector<const nlohmann::json*> nodes;
    CollectSqlNodes(execution.at("plan"), nodes);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const nlohmann::json& node = *nodes[i];
      EXPECT_EQ(node.at("id").get<std::size_t>(), i);  // pre-order
      EXPECT_TRUE(node.at("name").is_string());
      for (const nlohmann::json& metric : node.at("metrics")) {
        EXPECT_TRUE(metric.at("name").is_string());
        EXPECT_TRUE(metric.at("accumulator_id").is_number_integer());
        EXPECT_TRUE(metric.at("type").is_string());
        EXPECT_TRUE(metric.at("total").is_number());
        for (const char* key : {"min", "median", "max"}) {
          EXPECT_TRUE(metric.at(key).is_null() || metric.at(key).is_number()) << key;
          if (metric.at("type") == "sum") {
            EXPECT_TRUE(metric.at(key).is_null()) << key;
          }
        }
      }
    }
  }
  EXPECT_EQ(executions[0].at("job_ids"), nlohmann::json::parse("[0,1,2]"));
  EXPECT_EQ(executions[1].at("job_ids"), nlohmann::json::parse("[3,4,5]"));
  EXPECT_EQ(executions[0].at("plan").at("name"), "AdaptiveSparkPlan");
  // "shuffle write time" (nsTiming) of the round-robin exchange: the 8 task updates of stage 0, by
  // hand: 31370834 .. 33968833, sum 259554613, sorted[4] 32402787.
  const nlohmann::json* write_time = FindSqlMetric(executions[0], 72);
  ASSERT_NE(write_time, nullptr);
  EXPECT_EQ(write_time->at("type"), "nsTiming");
  EXPECT_EQ(write_time->at("unit"), "ns");
  EXPECT_EQ(write_time->at("total").get<std::int64_t>(), 259554613);
  EXPECT_EQ(write_time->at("min").get<std::int64_t>(), 31370834);
  EXPECT_EQ(write_time->at("median").get<std::int64_t>(), 32402787);
  EXPECT_EQ(write_time->at("max").get<std::int64_t>(), 33968833);
  // The Range's "number of output rows": 100 rows.
  const nlohmann::json* rows = FindSqlMetric(executions[0], 36);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->at("total").get<std::int64_t>(), 100);
  EXPECT_EQ(app.at("sql_limits").at("executions_dropped"), 0);
}

TEST(DiagnoseSqlJson, DriverValuesCount) {
  const nlohmann::json app = DiagnoseSqlApplication("spark-events/app-20200706201101-0003");
  if (app.is_null()) GTEST_SKIP() << test_data::DataDirMissingMessage();
  ASSERT_EQ(app.at("sql_executions").size(), 1u);
  const nlohmann::json& execution = app.at("sql_executions").at(0);
  EXPECT_EQ(execution.at("plan_version"), "initial");
  // Accumulator 9 is set on the driver only: [[9,1048632],...].
  const nlohmann::json* driver_only = FindSqlMetric(execution, 9);
  ASSERT_NE(driver_only, nullptr);
  EXPECT_EQ(driver_only->at("total").get<std::int64_t>(), 1048632);
  EXPECT_EQ(driver_only->at("values").get<std::int64_t>(), 1);
}

TEST(DiagnoseSqlJson, LogsWithoutSqlHaveNone) {
  const nlohmann::json app = DiagnoseSqlApplication("spark-events/local-1422981759269");
  if (app.is_null()) GTEST_SKIP() << test_data::DataDirMissingMessage();
  EXPECT_EQ(app.at("sql_executions"), nlohmann::json::array());
}

TEST(DiagnoseSqlJson, PlanBoundMarksTheExecutionTruncated) {
  const nlohmann::json app =
      DiagnoseSqlApplication("spark-events/local-1642039451826", {"--sql-max-plan-nodes", "3"});
  if (app.is_null()) GTEST_SKIP() << test_data::DataDirMissingMessage();
  EXPECT_EQ(app.at("sql_limits").at("max_plan_nodes"), 3);
  for (const nlohmann::json& execution : app.at("sql_executions")) {
    EXPECT_EQ(execution.at("truncated"), true);
    EXPECT_GT(execution.at("dropped_nodes").get<std::int64_t>(), 0);
    EXPECT_EQ(execution.at("limits_hit").at(0), "max_plan_nodes");
    std::vector<const nlohmann::json*> nodes;
    CollectSqlNodes(execution.at("plan"), nodes);
    EXPECT_EQ(nodes.size(), 3u);
  }
}

TEST(DiagnoseSqlJson, BadBoundIsAnArgumentError) {
  const DiagnoseSqlRun run = RunDiagnoseForSql({"--sql-max-executions", "0", "/nonexistent"});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("sql-max-executions"), std::string::npos) << run.err;
}

TEST(DiagnoseSqlText, ListsExecutionsAndTheirTopOperators) {
  const auto data_dir = test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << test_data::DataDirMissingMessage();
  const DiagnoseSqlRun run = RunDiagnoseForSql({(*data_dir / "spark-events/local-1642039451826").string()});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("sql executions (2)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  sql 0  "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("time "), std::string::npos) << run.out;
}

}  // namespace
}  // namespace sparktrace::cli
