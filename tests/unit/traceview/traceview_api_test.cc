// The task index (tracing/task_index.h) and the trace view's HTTP API (traceview/trace_view_api.h) over a
// real SQLite store in a temporary directory, with spans shaped as the proxy and the listener store them.

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/url_codec.h"
#include "tests/unit/traceview/sqlite_store_fixture.h"
#include "tests/unit/traceview/traceview_api_request.h"
#include "tests/unit/traceview/traceview_test_spans.h"
#include "traceview/attempt_spans.h"
#include "traceview/trace_view_api.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::traceview {
namespace {

using namespace sparktrace::traceview_test;
using tracing::Span;

class TraceViewApiTest : public traceview_test::SqliteStoreFixture {
 protected:
  TraceViewApiTest() : SqliteStoreFixture("sparktrace-traceview-") {}

  // An Airflow 2.10-shaped trace: two tasks of one DAG run share trace 1; task "load" has two operations
  // (one with findings), task "report" one.
  void WriteSharedTrace() {
    std::vector<Span> spans = Operation(1, 10, 0, 0, "etl", "load", "run-1", 1,
                                        {Finding("resource-wait-long", 2.5), Finding("s3-write-slow", 0.5)});
    // The stage-scoped finding is also on its stage, as the feed attaches it: one finding, two spans.
    spans[4].events.push_back(Finding("s3-write-slow", 0.5));
    const auto second = Operation(1, 30, 0, 2000, "etl", "load", "run-1", 1);
    spans.insert(spans.end(), second.begin(), second.end());
    const auto other = Operation(1, 50, 0, 500, "etl", "report", "run-1", 1, {}, "running");
    spans.insert(spans.end(), other.begin(), other.end());
    Write(spans);
  }

  admin::HttpResponse Get(TraceViewApi& api, const std::string& path, const std::string& query = "") {
    return traceview_test::GetFrom(api, path, query);
  }

  static nlohmann::json Body(const admin::HttpResponse& response) {
    return nlohmann::json::parse(response.body);
  }

};

TEST_F(TraceViewApiTest, IndexesEachAttemptOfASharedTraceSeparately) {
  WriteSharedTrace();
  auto page = writer_->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->total, 2);
  const tracing::store::TaskAttemptRow& load =
      page->rows[0].key.task_id == "load" ? page->rows[0] : page->rows[1];
  const tracing::store::TaskAttemptRow& report =
      page->rows[0].key.task_id == "load" ? page->rows[1] : page->rows[0];
  // load: two operations of 7 spans each, 0 .. 3000 ms; phases 2 × 600 ms wait and 2 × 300 ms compute.
  EXPECT_EQ(load.span_count, 14);
  EXPECT_EQ(load.start_unix_nano, kBase);
  EXPECT_EQ(load.end_unix_nano, kBase + 3000 * kMs);
  EXPECT_EQ(load.phase_ms[0], 1200);
  EXPECT_EQ(load.phase_ms[1], 600);
  EXPECT_EQ(load.finding_count, 2);
  EXPECT_EQ(nlohmann::json::parse(load.top_finding_json)["id"], "resource-wait-long");
  EXPECT_EQ(load.state, "success");
  EXPECT_EQ(report.span_count, 7);
  EXPECT_EQ(report.state, "running");  // its job has not ended
  EXPECT_EQ(report.trace_ids, std::vector<std::string>{tracing::ToHex(TraceNumber(1))});
}

TEST_F(TraceViewApiTest, AFailedOperationFailsTheAttemptAnRpcErrorDoesNot) {
  std::vector<Span> retried = Operation(8, 10, 0, 0, "etl", "retried", "run-1", 1);
  retried[1].status_code = tracing::StatusCode::kError;  // the ExecutePlan RPC failed; the client reattached
  Write(retried);
  std::vector<Span> failed = Operation(9, 10, 0, 0, "etl", "failed", "run-1", 1);
  failed[0].status_code = tracing::StatusCode::kError;  // the operation's outcome: failed
  Write(failed);
  auto page = writer_->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  std::map<std::string, std::string> state_by_task;
  for (const auto& row : page->rows) state_by_task[row.key.task_id] = row.state;
  EXPECT_EQ(state_by_task["retried"], "success");
  EXPECT_EQ(state_by_task["failed"], "failed");
}

TEST_F(TraceViewApiTest, FiltersSearchesAndPages) {
  WriteSharedTrace();
  std::vector<Span> plain = {NewSpan(2, 1, 0, "spark.application", 5000, 9000)};
  plain[0].attributes.push_back({"spark.app.id", std::string("app-plain-7")});
  plain[0].attributes.push_back({"spark.app.name", std::string("nightly rollup")});
  Write(plain);

  tracing::store::TaskAttemptFilter running;
  running.state = "running";
  auto page = writer_->ListTaskAttempts(running);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].key.task_id, "report");

  auto by_app = writer_->TracesMatching("app-plain-7");
  ASSERT_TRUE(by_app.ok());
  EXPECT_EQ(*by_app, std::vector<std::string>{tracing::ToHex(TraceNumber(2))});
  auto by_operation = writer_->TracesMatching("op-1-30");
  ASSERT_TRUE(by_operation.ok());
  EXPECT_EQ(*by_operation, std::vector<std::string>{tracing::ToHex(TraceNumber(1))});

  tracing::store::TaskAttemptFilter paged;
  paged.limit = 2;
  paged.offset = 2;
  page = writer_->ListTaskAttempts(paged);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 3);
  ASSERT_EQ(page->rows.size(), 1u);  // newest first: the plain trace, report, then load
  EXPECT_EQ(page->rows[0].key.task_id, "load");

  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto listed = Get(api, "/api/v1/tasks", "q=app-plain-7");
  ASSERT_EQ(listed.status, 200) << listed.body;
  const auto body = Body(listed);
  ASSERT_EQ(body["tasks"].size(), 1u);
  EXPECT_EQ(body["tasks"][0]["kind"], "trace");
  EXPECT_EQ(body["tasks"][0]["name"], "nightly rollup");
  EXPECT_EQ(Body(Get(api, "/api/v1/tasks", "q=nothing-matches"))["total"], 0);
}

TEST_F(TraceViewApiTest, RetentionRemovesAttemptsWithTheirTraces) {
  WriteSharedTrace();
  tracing::store::StoreOptions options;
  options.max_age = std::chrono::hours(1);
  writer_.reset();
  auto store = tracing::store::SqliteSpanStore::Open(path_, options);
  ASSERT_TRUE(store.ok());
  auto retained = (*store)->EnforceRetention(
      std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase)) + std::chrono::hours(2));
  ASSERT_TRUE(retained.ok()) << retained.error().message;
  auto page = (*store)->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 0);
}

TEST_F(TraceViewApiTest, SelectsTheSpansOfOneAttemptFromASharedTrace) {
  WriteSharedTrace();
  auto trace = writer_->GetTrace(TraceNumber(1));
  ASSERT_TRUE(trace.ok());
  const auto load = SpansOfAttempt(*trace, tracing::store::TaskAttemptKey{"etl", "load", "run-1", 1, -1});
  const auto report = SpansOfAttempt(*trace, tracing::store::TaskAttemptKey{"etl", "report", "run-1", 1, -1});
  const auto none = SpansOfAttempt(*trace, tracing::store::TaskAttemptKey{"etl", "load", "run-1", 2, -1});
  EXPECT_EQ(load.size(), 14u);
  EXPECT_EQ(report.size(), 7u);
  EXPECT_TRUE(none.empty());
}

TEST_F(TraceViewApiTest, AttemptJsonBreaksTheWallTimeDownExactly) {
  WriteSharedTrace();
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto response = Get(api, "/api/v1/tasks/etl/load/run-1/1");
  ASSERT_EQ(response.status, 200) << response.body;
  const auto body = Body(response);
  EXPECT_EQ(body["schema"], "sparktrace.attempt/1");
  EXPECT_EQ(body["identity"]["task_id"], "load");
  double sum = 0;
  for (const auto& phase : body["breakdown"]["phases"]) sum += phase["ms"].get<double>();
  EXPECT_NEAR(sum, body["wall_ms"].get<double>(), 1e-6);
  EXPECT_NEAR(body["wall_ms"].get<double>(), 3000.0, 1e-6);
  // 0..600 and 2000..2600 wait; 600..900 and 2600..2900 compute; 900..1000 and 2900..3000 the
  // results stream (rows, jobs ended); 1000..2000 nothing in flight.
  const auto phase_ms = [&body](const std::string& name) {
    for (const auto& phase : body["breakdown"]["phases"]) {
      if (phase["phase"] == name) return phase["ms"].get<double>();
    }
    return -1.0;
  };
  EXPECT_NEAR(phase_ms("resource_wait"), 1200, 1e-6);
  EXPECT_NEAR(phase_ms("compute"), 600, 1e-6);
  EXPECT_NEAR(phase_ms("result_transfer"), 200, 1e-6);
  EXPECT_NEAR(phase_ms("client"), 1000, 1e-6);
  ASSERT_EQ(body["findings"].size(), 2u);
  EXPECT_EQ(body["findings"][0]["id"], "resource-wait-long");  // most impact first
  EXPECT_EQ(body["findings"][0]["recipe_href"], "/recipes/troubleshoot/resource-wait-long.md");
  EXPECT_EQ(body["findings"][1]["span_ids"].size(),
            2u);  // the stage's finding, on the stage and the lifecycle
  EXPECT_EQ(body["spans"].size(), 14u);
  EXPECT_EQ(body["spans"][0]["depth"], 0);
  EXPECT_EQ(body["spans"][1]["depth"], 1);  // children follow their parent
  EXPECT_EQ(body["history"]["runs"].size(), 1u);
  EXPECT_TRUE(body["history"]["baseline"].is_null());
  // Asked by the earlier path shape, answered with the links of the current one.
  EXPECT_EQ(body["downloads"]["chrome_trace"],
            "/api/v1/attempt/chrome-trace.json?dag=etl&task=load&run=run-1&try=1");
  EXPECT_EQ(body["downloads"]["otlp_json"], "/api/v1/attempt/otlp.json?dag=etl&task=load&run=run-1&try=1");
}

// A finding a rules-file suppression muted keeps its place in the JSON with the reason, after the others.
TEST_F(TraceViewApiTest, SuppressedFindingsCarryTheirReasonAndRankLast) {
  tracing::SpanEvent muted = Finding("resource-wait-long", 2.5);
  muted.attributes.push_back({"finding.suppressed_reason", std::string("capacity request open, INFRA-9")});
  muted.attributes.push_back({"finding.suppressed_until", std::string("2026-12-31")});
  Write(Operation(1, 10, 0, 0, "etl", "load", "run-1", 1, {muted, Finding("s3-write-slow", 0.5)}));
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto response = Get(api, "/api/v1/tasks/etl/load/run-1/1");
  ASSERT_EQ(response.status, 200) << response.body;
  const auto body = Body(response);
  ASSERT_EQ(body["findings"].size(), 2u);
  EXPECT_EQ(body["findings"][0]["id"], "s3-write-slow") << "the suppressed one ranks last despite its impact";
  EXPECT_TRUE(body["findings"][0]["suppressed"].is_null());
  EXPECT_EQ(body["findings"][1]["id"], "resource-wait-long");
  EXPECT_EQ(body["findings"][1]["suppressed"],
            (nlohmann::json{{"reason", "capacity request open, INFRA-9"}, {"until", "2026-12-31"}}));
  // The task list neither counts it nor leads with it.
  auto page = writer_->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].finding_count, 1);
  EXPECT_EQ(nlohmann::json::parse(page->rows[0].top_finding_json)["id"], "s3-write-slow");
}

TEST_F(TraceViewApiTest, ARunningAttemptIsInProgressWithItsOpenSpansMarked) {
  WriteSharedTrace();
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto body = Body(Get(api, "/api/v1/tasks/etl/report/run-1/1"));
  EXPECT_EQ(body["in_progress"], true);
  EXPECT_EQ(body["state"], "running");
  std::map<std::string, bool> open_by_lane;
  for (const auto& span : body["spans"]) {
    open_by_lane[span["lane"].get<std::string>()] |= span["open"].get<bool>();
  }
  EXPECT_TRUE(open_by_lane["job"]);    // its JobEnd has not come
  EXPECT_TRUE(open_by_lane["stage"]);  // the stage ends where the running job does
  EXPECT_FALSE(open_by_lane["rpc"]);   // the proxy's spans are exported when they end
  const auto done = Body(Get(api, "/api/v1/tasks/etl/load/run-1/1"));
  EXPECT_EQ(done["in_progress"], false);
}

TEST_F(TraceViewApiTest, ComparesWithTheMedianOfEarlierSuccessfulRuns) {
  // Three earlier runs of the task (traces 3..5) with 600 ms of resource wait each, then the current
  // one with the shared trace's 1200 ms.
  for (std::uint8_t run = 0; run < 3; ++run) {
    Write(Operation(static_cast<std::uint8_t>(3 + run), 10, 0, 0, "etl", "load",
                    "run-0" + std::to_string(run), 1));
  }
  std::vector<Span> later = Operation(6, 10, 0, 100'000, "etl", "load", "run-9", 1);
  const auto second = Operation(6, 30, 0, 102'000, "etl", "load", "run-9", 1);
  later.insert(later.end(), second.begin(), second.end());
  Write(later);
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto body = Body(Get(api, "/api/v1/tasks/etl/load/run-9/1"));
  ASSERT_FALSE(body["history"]["baseline"].is_null()) << body["history"].dump();
  EXPECT_EQ(body["history"]["baseline"]["runs"], 3);
  for (const auto& delta : body["history"]["comparison"]) {
    if (delta["phase"] == "resource_wait") {
      EXPECT_NEAR(delta["median_ms"].get<double>(), 600, 1e-6);
      EXPECT_NEAR(delta["delta_ms"].get<double>(), 600, 1e-6);
    }
  }
  EXPECT_FALSE(body["previous_run"].is_null());
  EXPECT_TRUE(body["next_run"].is_null());
}

// Three earlier runs of 1 s; this one 91 s, most of it between its two calls: a critical
// regression, outside Spark named as what grew, attached to the attempt's first root span.
TEST_F(TraceViewApiTest, ASlowRunAgainstItsBaselineIsARegressionFinding) {
  for (std::uint8_t run = 0; run < 3; ++run) {
    Write(Operation(static_cast<std::uint8_t>(3 + run), 10, 0, 0, "etl", "load",
                    "run-0" + std::to_string(run), 1));
  }
  std::vector<Span> slow = Operation(6, 10, 0, 100'000, "etl", "load", "run-9", 1);
  const auto later = Operation(6, 30, 0, 190'000, "etl", "load", "run-9", 1);
  slow.insert(slow.end(), later.begin(), later.end());
  Write(slow);
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto body = Body(Get(api, "/api/v1/tasks/etl/load/run-9/1"));
  ASSERT_FALSE(body["findings"].empty());
  const auto& finding = body["findings"][0];  // the most impact: 90 s lost
  EXPECT_EQ(finding["id"], "regression");
  EXPECT_EQ(finding["severity"], "critical");
  EXPECT_NEAR(finding["impact_seconds"].get<double>(), 90, 1e-6);
  EXPECT_EQ(finding["recipe_href"], "/recipes/troubleshoot/regression.md");
  EXPECT_NE(finding["title"].get<std::string>().find("outside Spark grew most"), std::string::npos)
      << finding["title"];
  EXPECT_EQ(body["spans"][0]["id"], finding["span_ids"][0]);
  EXPECT_EQ(body["spans"][0]["finding_ids"], nlohmann::json::array({"regression"}));
  // The earlier runs, fast and alone in their history, have none.
  const auto first = Body(Get(api, "/api/v1/tasks/etl/load/run-00/1"));
  for (const auto& other : first["findings"]) EXPECT_NE(other["id"], "regression");
}

TEST_F(TraceViewApiTest, AnswersBadRequestsAndMissingAttemptsClearly) {
  WriteSharedTrace();
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  EXPECT_EQ(Get(api, "/api/v1/tasks", "state=sleeping").status, 400);
  EXPECT_EQ(Get(api, "/api/v1/tasks", "limit=0").status, 400);
  EXPECT_EQ(Get(api, "/api/v1/tasks/etl/load/run-1/x").status, 400);
  EXPECT_EQ(Get(api, "/api/v1/tasks/etl/load/run-1/7").status, 404);
  EXPECT_EQ(Get(api, "/api/v1/traces/zz").status, 400);
  EXPECT_EQ(Get(api, "/api/v1/traces/" + std::string(32, 'f')).status, 404);
  EXPECT_EQ(Get(api, "/api/v1/recipes/../../etc/passwd").status, 400);
  EXPECT_EQ(Get(api, "/api/v1/attempt", "dag=etl&task=load&run=run-1").status, 400);  // no try
  EXPECT_EQ(Body(Get(api, "/api/v1/attempt", "dag=etl&task=load&run=run-1&try=1&map=x"))["error"],
            "map must be -1 or an integer from 0 to 2147483647");
  EXPECT_EQ(Get(api, "/api/v1/attempt", "dag=etl&task=load&run=run-1&try=7").status, 404);
  EXPECT_EQ(Get(api, "/api/v1/attempt/nope.json", "dag=etl&task=load&run=run-1&try=1").status, 404);
  // What the admin server asks before answering 405 rather than 404 to another method.
  EXPECT_TRUE(TraceViewApi::Serves("/api/v1/attempt"));
  EXPECT_TRUE(TraceViewApi::Serves("/api/v1/attempt/otlp.json"));
  EXPECT_TRUE(TraceViewApi::Serves("/attempt"));
  EXPECT_TRUE(TraceViewApi::Serves("/api/v1/tasks/etl/load/run-1/1"));
  EXPECT_TRUE(TraceViewApi::Serves("/tasks/etl/load/run-1/1"));
  EXPECT_FALSE(TraceViewApi::Serves("/api/v1/attempts"));
  EXPECT_FALSE(TraceViewApi::Serves("/attempts"));
  EXPECT_FALSE(TraceViewApi::Serves("/api/v1/events"));
  EXPECT_FALSE(TraceViewApi::Serves("/favicon.ico"));
  admin::HttpRequest unknown;
  unknown.path = "/favicon.ico";
  unknown.header = [](const std::string&) { return std::nullopt; };
  EXPECT_FALSE(api.Handle(unknown).has_value());
}

// Ids that break paths ("." and ".." are valid Airflow task ids; run ids hold "/", "?", "#", "%", "+",
// spaces and Unicode): the list's links, and every link an attempt's JSON gives, reach that attempt.
TEST_F(TraceViewApiTest, EveryLinkReachesItsAttemptWhateverItsIds) {
  const std::string run = "manual__2024-01-01T00:00:00+00:00/a?b=c#d 100% ü運🚀";
  Write(Operation(20, 10, 0, 0, "..", ".", run, 1, {}, "failed"));
  Write(Operation(21, 10, 0, 5000, "..", ".", run, 2));
  std::vector<Span> mapped = Operation(22, 10, 0, 9000, "..", ".", run, 2);
  for (Span& span : mapped) {
    if (tracing::AttributeValueOf<std::string>(span.attributes, "airflow.dag_id") != nullptr) {
      span.attributes.push_back({"airflow.map_index", std::int64_t{3}});
    }
  }
  Write(mapped);
  Write(Operation(23, 10, 0, 20000, "", "..", "", 1));  // an empty dag id and run id

  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto listed = Body(Get(api, "/api/v1/tasks"));
  ASSERT_EQ(listed["total"], 4) << listed.dump();
  std::set<std::string> hrefs;
  for (const auto& row : listed["tasks"]) {
    const std::string href = row["href"];
    SCOPED_TRACE(href);
    hrefs.insert(href);
    ASSERT_TRUE(href.starts_with("/attempt?"));
    const std::string query = href.substr(href.find('?') + 1);
    const auto page = Get(api, "/attempt", query);
    EXPECT_EQ(page.status, 200);
    EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
    // The page asks /api/v1/attempt with its own query (web/assets/url_state.js).
    const auto answer = Get(api, "/api/v1/attempt", query);
    ASSERT_EQ(answer.status, 200) << answer.body;
    const auto attempt = Body(answer);
    for (const char* field : {"dag_id", "task_id", "run_id", "try_number", "map_index"}) {
      EXPECT_EQ(attempt["identity"][field], row[field]) << field;
    }
    for (const char* download : {"chrome_trace", "otlp_json"}) {
      const std::string link = attempt["downloads"][download];
      const auto file = Get(api, link.substr(0, link.find('?')), link.substr(link.find('?') + 1));
      EXPECT_EQ(file.status, 200) << link;
    }
    // The other tries and the history lead to attempts of this task, each one its own.
    for (const auto& other : attempt["tries"]) {
      const std::string link = other["href"];
      const auto tried = Body(Get(api, "/api/v1/attempt", link.substr(link.find('?') + 1)));
      EXPECT_EQ(tried["identity"]["try_number"], other["try_number"]) << link;
      EXPECT_EQ(tried["identity"]["task_id"], row["task_id"]) << link;
    }
    for (const auto& other : attempt["history"]["runs"]) {
      const std::string link = other["href"];
      EXPECT_EQ(Get(api, "/api/v1/attempt", link.substr(link.find('?') + 1)).status, 200) << link;
    }
  }
  EXPECT_EQ(hrefs.size(), 4u);  // four attempts, four addresses
  EXPECT_TRUE(hrefs.contains("/attempt?dag=..&task=.&run=" + EncodePathSegment(run) + "&try=2&map=3"));
  EXPECT_TRUE(hrefs.contains("/attempt?dag=&task=..&run=&try=1"));

  // The mapped attempt's downloads hold its own spans, not those of the unmapped one of the same try.
  const auto otlp = Body(
      Get(api, "/api/v1/attempt/otlp.json", "dag=..&task=.&run=" + EncodePathSegment(run) + "&try=2&map=3"));
  const auto& spans = otlp["resourceSpans"][0]["scopeSpans"][0]["spans"];
  ASSERT_EQ(spans.size(), 7u);
  EXPECT_EQ(spans[0]["traceId"], tracing::ToHex(TraceNumber(22)));
}

TEST_F(TraceViewApiTest, ServesThePageAssetsRecipesAndDownloads) {
  WriteSharedTrace();
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto page = Get(api, "/tasks/etl/load/run-1/1");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("/assets/"), std::string::npos);
  const auto recipe = Get(api, "/api/v1/recipes/troubleshoot/resource-wait-long.md");
  ASSERT_EQ(recipe.status, 200);
  EXPECT_EQ(recipe.content_type, "text/markdown; charset=utf-8");
  const auto chrome = Get(api, "/api/v1/tasks/etl/load/run-1/1/chrome-trace.json");
  ASSERT_EQ(chrome.status, 200);
  EXPECT_EQ(Body(chrome)["traceEvents"].is_array(), true);
  const auto otlp = Body(Get(api, "/api/v1/traces/" + tracing::ToHex(TraceNumber(1)) + "/otlp.json"));
  EXPECT_EQ(otlp["resourceSpans"][0]["scopeSpans"][0]["spans"].size(), 21u);
}

TEST_F(TraceViewApiTest, ReadsAStoreWhileItsWriterKeepsWriting) {
  WriteSharedTrace();
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  EXPECT_EQ(Body(Get(api, "/api/v1/tasks"))["total"], 2);
  Write(Operation(7, 10, 0, 10'000, "etl", "publish", "run-1", 1));
  EXPECT_EQ(Body(Get(api, "/api/v1/tasks"))["total"], 3);
}

TEST_F(TraceViewApiTest, LinksJobsAndStagesToTheHistoryServerAndTheDriverUi) {
  WriteSharedTrace();
  TraceViewApi api(
      TraceViewOptions{tracing::store::SqliteAt(path_), "http://driver:4040", "http://shs:18080/"});
  const auto body = Body(Get(api, "/api/v1/tasks/etl/load/run-1/1"));
  std::map<std::string, nlohmann::json> links_by_label;
  for (const auto& span : body["spans"]) links_by_label[span["label"].get<std::string>()] = span["links"];
  // The application id comes from the operation's lifecycle span (spark.app.id).
  EXPECT_EQ(links_by_label["job 10"]["history_server"],
            "http://shs:18080/history/app-20251125-0001/jobs/job/?id=10");
  EXPECT_EQ(links_by_label["job 10"]["spark_ui"], "http://driver:4040/jobs/job/?id=10");
  EXPECT_EQ(links_by_label["ExecutePlan"]["history_server"], nullptr);  // the client's side: no Spark page
  bool stage_linked = false;
  for (const auto& span : body["spans"]) {
    if (span["lane"] == "stage" &&
        span["links"]["history_server"] ==
            "http://shs:18080/history/app-20251125-0001/stages/stage/?id=10&attempt=0") {
      stage_linked = true;
    }
  }
  EXPECT_TRUE(stage_linked);
}

TEST_F(TraceViewApiTest, AMissingStoreIsAServiceErrorNotACrash) {
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt((dir_ / "absent.db").string())});
  EXPECT_EQ(Get(api, "/api/v1/tasks").status, 404);
}

}  // namespace
}  // namespace sparktrace::traceview
