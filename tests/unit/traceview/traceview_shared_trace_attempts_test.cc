// The trace view over a shared trace (traceview/trace_view_api.h), on each store backend: Airflow
// 2.10's one trace per DAG run (tests/unit/tracing/store/shared_dag_run_spans.h), with a mapped task
// and a retry, the task report arriving before, between or after the Spark spans. Every attempt is
// listed once with its own map index, and its link's API answer is 200 with its own spans only.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/url_codec.h"
#include "tests/unit/traceview/traceview_api_request.h"
#include "tests/unit/tracing/store/shared_dag_run_spans.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "traceview/attempt_reader.h"
#include "traceview/trace_view_api.h"

namespace sparktrace::traceview {
namespace {

using tracing::store::StoreBackend;
using tracing::store::TestBackend;
using tracing::store::shared_dag_run::DagRun;
using tracing::store::shared_dag_run::ExpectedAttempt;
using tracing::store::shared_dag_run::ReportArrives;

class TraceViewSharedTraceAttempts : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem();
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    std::uint32_t trace = 1;
    for (ReportArrives arrives : {ReportArrives::kBefore, ReportArrives::kBetween, ReportArrives::kAfter}) {
      runs_.push_back(tracing::store::shared_dag_run::MakeDagRun(trace++, arrives));
      for (const auto& write : runs_.back().writes) {
        auto written = store->Write(write);
        ASSERT_TRUE(written.ok()) << written.error().ToString();
      }
    }
  }
  void TearDown() override { backend_.Destroy(); }

  admin::HttpResponse Get(TraceViewApi& api, const std::string& path, const std::string& query) {
    return traceview_test::GetFrom(api, path, query);
  }

  static std::set<std::string> SpanHexes(const std::vector<std::uint32_t>& numbers) {
    std::set<std::string> hexes;
    for (std::uint32_t n : numbers) hexes.insert(tracing::ToHex(tracing::store::testing_spans::SpanIdOf(n)));
    return hexes;
  }

  static std::string Describe(const tracing::store::TaskAttemptKey& key) {
    return key.task_id + " run " + key.run_id + " try " + std::to_string(key.try_number) + " map " +
           std::to_string(key.map_index);
  }

  TestBackend backend_;
  std::vector<DagRun> runs_;
};

INSTANTIATE_TEST_SUITE_P(Backends, TraceViewSharedTraceAttempts,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return tracing::store::BackendName(param.param);
                         });

TEST_P(TraceViewSharedTraceAttempts, EveryAttemptIsListedOnceAndItsLinkAnswersWithItsOwnSpans) {
  TraceViewApi api(TraceViewOptions{backend_.location()});
  const auto listed = Get(api, "/api/v1/tasks", "dag=etl&limit=200");
  ASSERT_EQ(listed.status, 200) << listed.body;
  const auto tasks = nlohmann::json::parse(listed.body)["tasks"];
  ASSERT_EQ(tasks.size(), 12u) << listed.body;
  std::map<std::string, std::string> href_of;
  for (const auto& task : tasks) {
    const tracing::store::TaskAttemptKey key{task["dag_id"], task["task_id"], task["run_id"],
                                             task["try_number"], task["map_index"]};
    EXPECT_TRUE(href_of.emplace(Describe(key), task["href"].get<std::string>()).second)
        << "listed twice: " << Describe(key);
  }

  for (const DagRun& run : runs_) {
    for (const ExpectedAttempt& expected : run.attempts) {
      SCOPED_TRACE(Describe(expected.key));
      const auto href = href_of.find(Describe(expected.key));
      ASSERT_NE(href, href_of.end()) << "not listed";
      // The link the list (and Airflow's "Spark trace" button) gives: the page and its API answer.
      const std::string prefix = "/attempt?";
      ASSERT_EQ(href->second.rfind(prefix, 0), 0u) << href->second;
      const std::string query = href->second.substr(prefix.size());
      EXPECT_EQ(query.find("&map=") != std::string::npos, expected.key.map_index != -1) << query;
      const auto page = Get(api, "/attempt", query);
      EXPECT_EQ(page.status, 200) << page.body;
      const auto answer = Get(api, "/api/v1/attempt", query);
      ASSERT_EQ(answer.status, 200) << answer.body;
      const auto body = nlohmann::json::parse(answer.body);
      EXPECT_EQ(body["identity"]["task_id"], expected.key.task_id);
      EXPECT_EQ(body["identity"]["run_id"], expected.key.run_id);
      EXPECT_EQ(body["identity"]["try_number"], expected.key.try_number);
      EXPECT_EQ(body["identity"]["map_index"], expected.key.map_index);
      EXPECT_EQ(body["trace_ids"], nlohmann::json::array({tracing::ToHex(run.trace_id)}));
      EXPECT_EQ(body["state"], expected.state);
      std::set<std::string> spans;
      for (const auto& span : body["spans"]) spans.insert(span["id"].get<std::string>());
      EXPECT_EQ(spans, SpanHexes(expected.spans));
      EXPECT_EQ(body["airflow_task"].is_null(), !expected.reported) << body["airflow_task"].dump();
      EXPECT_NEAR(body["wall_ms"].get<double>(),
                  static_cast<double>(expected.end_unix_nano - expected.start_unix_nano) / 1e6, 1e-6);
    }
  }
}

// The attempt reader (the page's and the settler's) over the same store: each attempt's spans from the
// shared trace, none of its neighbours'.
TEST_P(TraceViewSharedTraceAttempts, TheReaderGathersOnlyTheAttemptsSpansFromTheSharedTrace) {
  tracing::store::StoreOptions reader_options;
  reader_options.read_only = true;
  auto store = backend_.Open(reader_options);
  ASSERT_NE(store, nullptr);
  AttemptReader reader;
  for (const DagRun& run : runs_) {
    for (const ExpectedAttempt& expected : run.attempts) {
      SCOPED_TRACE(Describe(expected.key));
      auto read = reader.Read(*store, expected.key);
      ASSERT_TRUE(read.ok()) << read.error().ToString();
      EXPECT_TRUE(read->row().key == expected.key);
      std::set<std::string> spans;
      for (const auto& span : read->spans) spans.insert(tracing::ToHex(span.span_id));
      EXPECT_EQ(spans, SpanHexes(expected.spans));
    }
  }
}

}  // namespace
}  // namespace sparktrace::traceview
