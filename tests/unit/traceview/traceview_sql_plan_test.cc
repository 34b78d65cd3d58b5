// SQL executions in the trace view's API: the attempt JSON's "sql_executions" summaries (without the
// plans) and GET /api/v1/traces/<trace id>/sql-plan?span=<span id>, over a real SQLite store.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/traceview/sqlite_store_fixture.h"
#include "tests/unit/traceview/traceview_api_request.h"
#include "tests/unit/traceview/traceview_test_spans.h"
#include "traceview/query_values.h"
#include "traceview/trace_view_api.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::traceview {
namespace {

using traceview_test::NewSpan;

class TraceViewSqlPlanTest : public traceview_test::SqliteStoreFixture {
 protected:
  TraceViewSqlPlanTest() : SqliteStoreFixture("sparktrace-sqlplan-") {}

  void SetUp() override {
    SqliteStoreFixture::SetUp();
    std::vector<tracing::Span> spans = traceview_test::Operation(1, 10, 0, 0, "etl", "load", "run-1", 1);
    tracing::Span sql = NewSpan(1, 40, 10, std::string(tracing::kSparkSqlExecutionSpanName), 8, 950);
    sql.attributes.push_back({std::string(tracing::kSparkSqlExecutionIdKey), std::int64_t{3}});
    sql.attributes.push_back({std::string(tracing::kSparkSqlDescriptionKey), std::string("join orders")});
    sql.attributes.push_back({std::string(tracing::kSparkSqlPlanKey), std::string(kPlan)});
    sql.events.push_back({std::string(tracing::kSparkSqlOperatorEvent),
                          traceview_test::kBase + 950 * traceview_test::kMs,
                          {{std::string(tracing::kSparkSqlOperatorNameKey), std::string("SortMergeJoin")},
                           {std::string(tracing::kSparkSqlOperatorTimeMsKey), 12.5},
                           {std::string(tracing::kSparkSqlOperatorRowsKey), std::int64_t{77}}}});
    spans.push_back(sql);
    // A span without a plan (--sql-plan-max-bytes 0), and one with a broken plan text.
    tracing::Span bare = NewSpan(1, 41, 10, std::string(tracing::kSparkSqlExecutionSpanName), 9, 20);
    spans.push_back(bare);
    tracing::Span broken = NewSpan(1, 42, 10, std::string(tracing::kSparkSqlExecutionSpanName), 9, 20);
    broken.attributes.push_back({std::string(tracing::kSparkSqlPlanKey), std::string("{\"root\":")});
    spans.push_back(broken);
    Write(spans);
  }

  static constexpr std::string_view kPlan = R"({"nodes":1,"root":{"id":0,"name":"SortMergeJoin"}})";
};

TEST_F(TraceViewSqlPlanTest, AttemptListsSummariesAndServesEachPlanOnDemand) {
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto attempt = traceview_test::GetFrom(api, "/api/v1/attempt", "dag=etl&task=load&run=run-1&try=1");
  ASSERT_EQ(attempt.status, 200) << attempt.body;
  EXPECT_EQ(attempt.body.find("SortMergeJoin\\\"}"), std::string::npos);  // no plan inlined
  const auto body = nlohmann::json::parse(attempt.body);
  ASSERT_EQ(body["sql_executions"].size(), 3u);
  const auto& execution = body["sql_executions"][0];
  EXPECT_EQ(execution["execution_id"], 3);
  EXPECT_EQ(execution["description"], "join orders");
  EXPECT_EQ(execution["parent_id"], tracing::ToHex(traceview_test::SpanNumber(1, 10)));
  ASSERT_EQ(execution["top_operators"].size(), 1u);
  EXPECT_EQ(execution["top_operators"][0]["name"], "SortMergeJoin");
  EXPECT_EQ(execution["top_operators"][0]["rows"], 77);
  EXPECT_TRUE(body["sql_executions"][1]["plan_href"].is_null());
  for (const auto& span : body["spans"]) {
    EXPECT_FALSE(span["attributes"].contains(std::string(tracing::kSparkSqlPlanKey))) << span["name"];
    if (span["name"] == std::string(tracing::kSparkSqlExecutionSpanName) && span["id"] == execution["span_id"]) {
      EXPECT_EQ(span["label"], "SQL 3");
    }
  }

  const std::string href = execution["plan_href"];
  const std::size_t question = href.find('?');
  ASSERT_NE(question, std::string::npos);
  const auto plan = traceview_test::GetFrom(api, href.substr(0, question), href.substr(question + 1));
  ASSERT_EQ(plan.status, 200) << plan.body;
  const auto plan_body = nlohmann::json::parse(plan.body);
  EXPECT_EQ(plan_body["schema"], "sparktrace.sql_plan/1");
  EXPECT_EQ(plan_body["execution_id"], 3);
  EXPECT_EQ(plan_body["plan"], nlohmann::json::parse(kPlan));
}

TEST_F(TraceViewSqlPlanTest, BadParametersAre400sNamingThemAndAbsentPlans404s) {
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const std::string trace = tracing::ToHex(traceview_test::TraceNumber(1));
  const std::string path = "/api/v1/traces/" + trace + "/sql-plan";
  const auto get = [&](const std::string& p, const std::string& query) {
    return traceview_test::GetFrom(api, p, query);
  };
  const auto missing = get(path, "");
  EXPECT_EQ(missing.status, 400);
  EXPECT_NE(missing.body.find("span is required"), std::string::npos);
  const auto bad = get(path, "span=xyz");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("span must be"), std::string::npos);
  EXPECT_EQ(get(path, "span=0g00000000000000").status, 400);
  EXPECT_EQ(get("/api/v1/traces/zz/sql-plan", "span=0100000000000028").status, 400);
  // Not a span of the trace, not a SQL execution span, no plan, a broken plan: 404.
  EXPECT_EQ(get(path, "span=ffffffffffffffff").status, 404);
  EXPECT_EQ(get(path, "span=" + tracing::ToHex(traceview_test::SpanNumber(1, 10))).status, 404);
  EXPECT_EQ(get(path, "span=" + tracing::ToHex(traceview_test::SpanNumber(1, 41))).status, 404);
  EXPECT_EQ(get(path, "span=" + tracing::ToHex(traceview_test::SpanNumber(1, 42))).status, 404);
  EXPECT_EQ(get("/api/v1/traces/" + std::string(32, 'f') + "/sql-plan",
                "span=" + tracing::ToHex(traceview_test::SpanNumber(1, 40)))
                .status,
            404);
  EXPECT_EQ(get("/api/v1/traces/" + trace + "/sql-plan/more", "span=0100000000000028").status, 400);
  EXPECT_TRUE(ParseSqlPlanQuery("span=0100000000000028&x=1").ok());
}

}  // namespace
}  // namespace sparktrace::traceview
