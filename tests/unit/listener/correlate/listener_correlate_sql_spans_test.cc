// spark.sql.execution spans (listener/correlate/sql_execution_span.h) built from a model fed SQL,
// job and task events, and the plan document's byte bound (sql_plan_json.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/span_builder.h"
#include "listener/correlate/sql_plan.h"
#include "listener/correlate/sql_plan_json.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::listener::correlate {
namespace {

constexpr std::string_view kSqlSpansOperation = "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59";

std::string SqlSpansOperationTag() {
  return "SparkConnect_OperationTag_User_u_Session_8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f_Operation_" +
         std::string(kSqlSpansOperation);
}

// SortMergeJoin (0) over two scans (1, 2): the join has a timing metric and rows, the first scan
// a larger nsTiming scan time, the second nothing measured.
events::SqlExecutionStart SqlSpansStart(std::int64_t execution_id, bool tagged) {
  events::SqlExecutionStart start;
  start.execution_id = execution_id;
  start.time_ms = 1000;
  start.description = "join " + std::to_string(execution_id);
  events::SqlPlan plan;
  plan.nodes.push_back(events::SqlPlanNode{"SortMergeJoin",
                                           "SortMergeJoin [k], [k], Inner",
                                           {{"number of output rows", 10, "sum"}, {"join time", 11, "timing"},
                                            {"spill size", 12, "size"}},
                                           {1, 2}});
  plan.nodes.push_back(events::SqlPlanNode{"Scan parquet a", "", {{"scan time", 13, "nsTiming"}}, {}});
  plan.nodes.push_back(events::SqlPlanNode{"Scan parquet b", "", {{"number of files read", 14, "sum"}}, {}});
  start.plan = std::move(plan);
  if (tagged) start.job_tags = std::vector<std::string>{SqlSpansOperationTag()};
  return start;
}

events::JobStart SqlSpansJob(std::int32_t job_id, std::int64_t execution_id) {
  events::JobStart job;
  job.job_id = job_id;
  job.submission_time_ms = 1100;
  job.stage_ids = {job_id};
  job.stage_tasks = {{job_id, 1}};
  job.properties.sql_execution_id = execution_id;
  return job;
}

events::TaskEnd SqlSpansTask(std::int32_t stage_id, std::vector<events::AccumulableUpdate> updates) {
  events::TaskEnd task;
  task.stage_id = stage_id;
  task.task_id = stage_id;
  task.launch_time_ms = 1200;
  task.finish_time_ms = 1300;
  task.reason = events::TaskEndReason::kSuccess;
  task.accumulable_updates = std::move(updates);
  return task;
}

events::ConnectOperationEvent SqlSpansOperationStarted() {
  events::ConnectOperationEvent started;
  started.phase = events::ConnectOperationPhase::kStarted;
  started.job_tag = SqlSpansOperationTag();
  started.operation_id = std::string(kSqlSpansOperation);
  started.event_time_ms = 900;
  return started;
}

ApplicationModel SqlSpansModel(bool tagged, bool ended, const std::string& error = "") {
  ApplicationModel model;
  events::ApplicationStart app;
  app.app_id = "app-sql";
  app.time_ms = 500;
  model.Apply(app);
  if (tagged) model.Apply(SqlSpansOperationStarted());
  model.Apply(SqlSpansStart(7, tagged));
  model.Apply(SqlSpansJob(1, 7));
  model.Apply(SqlSpansTask(1, {{10, 1000}, {11, 40}, {12, 4096}, {13, 2'500'000'000}}));
  if (ended) {
    events::SqlExecutionEnd end;
    end.execution_id = 7;
    end.time_ms = 3000;
    if (!error.empty()) end.error_message = error;
    model.Apply(end);
  }
  return model;
}

const tracing::Span* SqlSpansFind(const BuiltSpans& built) {
  const auto found = std::find_if(built.spans.begin(), built.spans.end(), [](const tracing::Span& span) {
    return span.name == tracing::kSparkSqlExecutionSpanName;
  });
  return found == built.spans.end() ? nullptr : &*found;
}

template <typename T>
T SqlSpansAttribute(const tracing::Span& span, std::string_view key) {
  const T* value = tracing::AttributeValueOf<T>(span.attributes, key);
  EXPECT_NE(value, nullptr) << key;
  return value != nullptr ? *value : T{};
}

const OperationSpanRef kSqlSpansParent{tracing::TraceId{1, 2, 3}, tracing::SpanId{9, 9, 9}};

TEST(SqlExecutionSpans, AnEndedExecutionIsAChildOfItsOperationWithItsPlanAndTopOperators) {
  const ApplicationModel model = SqlSpansModel(/*tagged=*/true, /*ended=*/true);
  const BuiltSpans built = BuildOperationSpans(model, kSqlSpansOperation, kSqlSpansParent);
  const tracing::Span* span = SqlSpansFind(built);
  ASSERT_NE(span, nullptr);
  EXPECT_EQ(span->parent_span_id, kSqlSpansParent.parent);
  EXPECT_EQ(span->trace_id, kSqlSpansParent.trace);
  EXPECT_FALSE(built.IsOpen(span->span_id));
  EXPECT_EQ(span->start_time_unix_nano, 1000 * 1'000'000ULL);
  EXPECT_EQ(span->end_time_unix_nano, 3000 * 1'000'000ULL);
  EXPECT_EQ(span->status_code, tracing::StatusCode::kUnset);
  EXPECT_EQ(SqlSpansAttribute<std::int64_t>(*span, tracing::kSparkSqlExecutionIdKey), 7);
  EXPECT_EQ(SqlSpansAttribute<std::string>(*span, tracing::kSparkSqlDescriptionKey), "join 7");
  EXPECT_EQ(SqlSpansAttribute<std::vector<std::string>>(*span, tracing::kSparkSqlJobIdsKey),
            (std::vector<std::string>{"1"}));
  EXPECT_EQ(SqlSpansAttribute<std::string>(*span, tracing::kSparkSqlPlanVersionKey), "initial");
  EXPECT_EQ(SqlSpansAttribute<std::int64_t>(*span, tracing::kSparkSqlOperatorCountKey), 3);
  EXPECT_DOUBLE_EQ(SqlSpansAttribute<double>(*span, tracing::kSparkSqlTotalOperatorTimeMsKey), 2540.0);
  EXPECT_FALSE(SqlSpansAttribute<bool>(*span, tracing::kSparkSqlPlanTruncatedKey));

  const auto plan = nlohmann::json::parse(SqlSpansAttribute<std::string>(*span, tracing::kSparkSqlPlanKey));
  EXPECT_EQ(plan["nodes"], 3);
  EXPECT_EQ(plan["nodes_written"], 3);
  EXPECT_EQ(plan["metrics_dropped"], false);
  const auto& join = plan["root"];
  EXPECT_EQ(join["name"], "SortMergeJoin");
  EXPECT_EQ(join["rows"], 1000);
  EXPECT_EQ(join["spill_bytes"], 4096);
  EXPECT_DOUBLE_EQ(join["time_ms"].get<double>(), 40.0);
  EXPECT_EQ(join["stage_ids"], nlohmann::json::array({1}));
  EXPECT_EQ(join["metrics"][1]["name"], "join time");
  EXPECT_EQ(join["metrics"][1]["total"], 40);
  EXPECT_FALSE(join["metrics"][1].contains("accumulator_id"));  // diagnose's bookkeeping stays there
  ASSERT_EQ(join["children"].size(), 2u);
  EXPECT_DOUBLE_EQ(join["children"][0]["time_ms"].get<double>(), 2500.0);
  EXPECT_TRUE(join["children"][1]["rows"].is_null());

  // The hottest first: the scan (2,500 ms), then the join; the unmeasured scan is not listed.
  ASSERT_EQ(span->events.size(), 2u);
  EXPECT_EQ(span->events[0].name, tracing::kSparkSqlOperatorEvent);
  EXPECT_EQ(*tracing::AttributeValueOf<std::string>(span->events[0].attributes, tracing::kSparkSqlOperatorNameKey),
            "Scan parquet a");
  EXPECT_EQ(*tracing::AttributeValueOf<std::int64_t>(span->events[1].attributes, tracing::kSparkSqlOperatorRankKey), 2);
  EXPECT_EQ(*tracing::AttributeValueOf<std::int64_t>(span->events[1].attributes,
                                                     tracing::kSparkSqlOperatorSpillBytesKey),
            4096);
}

TEST(SqlExecutionSpans, ARunningExecutionIsOpenWithStableIdAndAFailedOneIsAnError) {
  const ApplicationModel running = SqlSpansModel(true, /*ended=*/false);
  const BuiltSpans first = BuildOperationSpans(running, kSqlSpansOperation, kSqlSpansParent);
  const tracing::Span* open = SqlSpansFind(first);
  ASSERT_NE(open, nullptr);
  EXPECT_TRUE(first.IsOpen(open->span_id));
  const ApplicationModel failed = SqlSpansModel(true, true, "java.lang.OutOfMemoryError");
  const BuiltSpans second = BuildOperationSpans(failed, kSqlSpansOperation, kSqlSpansParent);
  const tracing::Span* ended = SqlSpansFind(second);
  ASSERT_NE(ended, nullptr);
  EXPECT_EQ(ended->span_id, open->span_id);  // the store replaces the running version
  EXPECT_FALSE(second.IsOpen(ended->span_id));
  EXPECT_EQ(ended->status_code, tracing::StatusCode::kError);
  EXPECT_EQ(ended->status_message, "java.lang.OutOfMemoryError");
}

TEST(SqlExecutionSpans, ALongDescriptionIsCutBetweenCharacters) {
  ApplicationModel model;
  events::ApplicationStart app;
  app.app_id = "app-sql";
  app.time_ms = 500;
  model.Apply(app);
  events::SqlExecutionStart start = SqlSpansStart(2, false);
  start.description.clear();
  for (int i = 0; i < 400; ++i) start.description += "\xc3\xa9";  // 800 bytes of "é"
  model.Apply(start);
  const BuiltSpans built = BuildApplicationSpans(model);
  const tracing::Span* span = SqlSpansFind(built);
  ASSERT_NE(span, nullptr);
  const std::string description = SqlSpansAttribute<std::string>(*span, tracing::kSparkSqlDescriptionKey);
  EXPECT_EQ(description.size(), SqlSpanLimits::kMaxDescriptionBytes);  // 512: 256 whole characters
  EXPECT_EQ(description.substr(0, 2), "\xc3\xa9");
  EXPECT_EQ(static_cast<unsigned char>(description.back()), 0xa9);
}

TEST(SqlExecutionSpans, AnExecutionOfNoOperationIsUnderTheApplicationRoot) {
  const ApplicationModel model = SqlSpansModel(/*tagged=*/false, true);
  const BuiltSpans built = BuildApplicationSpans(model);
  ASSERT_FALSE(built.spans.empty());
  const tracing::Span* span = SqlSpansFind(built);
  ASSERT_NE(span, nullptr);
  EXPECT_EQ(span->parent_span_id, built.spans.front().span_id);
  EXPECT_EQ(SqlSpansFind(BuildOperationSpans(model, kSqlSpansOperation, kSqlSpansParent)), nullptr);
}

TEST(SqlExecutionSpans, APlanPastTheBoundLosesMetricsThenNodesAndIsCounted) {
  const ApplicationModel model = SqlSpansModel(true, true);
  SpanBuildOptions options;
  options.sql.max_plan_bytes = 700;  // the whole document is about 1 KiB, without metric lists less
  const BuiltSpans built = BuildOperationSpans(model, kSqlSpansOperation, kSqlSpansParent, options);
  const tracing::Span* span = SqlSpansFind(built);
  ASSERT_NE(span, nullptr);
  EXPECT_EQ(built.sql_plans_reduced, 1);
  EXPECT_TRUE(SqlSpansAttribute<bool>(*span, tracing::kSparkSqlPlanTruncatedKey));
  const std::string text = SqlSpansAttribute<std::string>(*span, tracing::kSparkSqlPlanKey);
  EXPECT_LE(text.size(), 700u);
  const auto plan = nlohmann::json::parse(text);
  EXPECT_EQ(plan["metrics_dropped"], true);
  EXPECT_FALSE(plan["root"].contains("metrics"));
  EXPECT_EQ(plan["root"]["rows"], 1000);  // the operator facts stay
  // 0: no plan at all, and nothing counted (the operator chose it); top operators still there.
  options.sql.max_plan_bytes = 0;
  const BuiltSpans none = BuildOperationSpans(model, kSqlSpansOperation, kSqlSpansParent, options);
  EXPECT_EQ(none.sql_plans_reduced, 0);
  EXPECT_EQ(tracing::AttributeValueOf<std::string>(SqlSpansFind(none)->attributes, tracing::kSparkSqlPlanKey),
            nullptr);
  EXPECT_EQ(SqlSpansFind(none)->events.size(), 2u);
}

// A left-deep chain of `count` operators, each with five metrics that all reported.
events::SqlPlan SqlSpansChainPlan(std::uint32_t count, SqlMetricSummaries& summaries) {
  events::SqlPlan plan;
  for (std::uint32_t i = 0; i < count; ++i) {
    events::SqlPlanNode node{"Project", "Project [a#" + std::to_string(i) + ", b, c]", {}, {}};
    for (std::int64_t m = 0; m < 5; ++m) {
      const std::int64_t id = std::int64_t{i} * 10 + m;
      node.metrics.push_back({m == 0 ? "number of output rows" : "time " + std::to_string(m), id,
                              m == 0 ? "sum" : "timing"});
      summaries[id] = SqlMetricSummary{static_cast<std::int64_t>(i) + m, 1, 2, 3, 1, 4, false, {1}};
    }
    if (i + 1 < count) node.children.push_back(i + 1);
    plan.nodes.push_back(std::move(node));
  }
  return plan;
}

TEST(SqlPlanJsonBound, ATwoThousandOperatorPlanFitsTheDefaultAndIsCutToFitLess) {
  SqlMetricSummaries summaries;
  const events::SqlPlan plan = SqlSpansChainPlan(2000, summaries);
  const BoundedSqlPlanJson whole = SqlPlanJsonWithin(plan, summaries, SqlSpanLimits{}.max_plan_bytes);
  EXPECT_FALSE(whole.Reduced()) << whole.json.size();
  EXPECT_GT(whole.json.size(), std::size_t{1} << 20);  // about 1.1 MiB: why the default is 2 MiB
  EXPECT_EQ(whole.nodes_written, 2000u);
  EXPECT_LE(whole.json.size(), SqlSpanLimits{}.max_plan_bytes);

  const BoundedSqlPlanJson cut = SqlPlanJsonWithin(plan, summaries, 64 << 10);
  EXPECT_TRUE(cut.metrics_dropped);
  EXPECT_TRUE(cut.cut);
  EXPECT_LE(cut.json.size(), std::size_t{64} << 10);
  EXPECT_GT(cut.nodes_written, 100u);  // cut to fit, not to nothing
  EXPECT_LT(cut.nodes_written, 2000u);
  const auto document = nlohmann::json::parse(cut.json);
  EXPECT_EQ(document["nodes_written"], cut.nodes_written);
  // The deepest node written says its child was left out.
  const nlohmann::json* node = &document["root"];
  std::size_t depth = 1;
  while (!(*node)["children"].empty()) {
    node = &(*node)["children"][0];
    ++depth;
  }
  EXPECT_EQ(depth, cut.nodes_written);
  EXPECT_EQ((*node)["children_omitted"], 1);

  const BoundedSqlPlanJson nothing = SqlPlanJsonWithin(plan, summaries, 16);
  EXPECT_TRUE(nothing.json.empty());
  EXPECT_TRUE(nothing.cut);
}

TEST(SqlPlanJsonBound, DiagnoseShapeKeepsItsBookkeepingAndNoFacts) {
  SqlMetricSummaries summaries;
  const events::SqlPlan plan = SqlSpansChainPlan(2, summaries);
  JsonWriter json;
  EXPECT_EQ(WriteSqlPlanNode(json, plan, 0, CodegenStageIds(plan), summaries), 2u);
  const auto node = nlohmann::json::parse(json.text());
  EXPECT_EQ(node["metrics"][0]["accumulator_id"], 0);
  EXPECT_EQ(node["metrics"][0]["unit"], "count");
  EXPECT_EQ(node["metrics"][1]["values"], 4);
  EXPECT_FALSE(node.contains("time_ms"));
  EXPECT_FALSE(node.contains("children_omitted"));
  EXPECT_EQ(node["children"][0]["id"], 1);
}

}  // namespace
}  // namespace sparktrace::listener::correlate
