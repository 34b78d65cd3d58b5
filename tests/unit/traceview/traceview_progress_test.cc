// A Spark 4 operation's live progress in the trace view's attempt JSON (docs/trace-view-api.md,
// "Live progress of a running operation") and the task list, over a real SQLite store: the proxy's
// live snapshot of the running operation, then its final span written over it with the same ids.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/traceview/sqlite_store_fixture.h"
#include "tests/unit/traceview/traceview_api_request.h"
#include "tests/unit/traceview/traceview_test_spans.h"
#include "traceview/trace_view_api.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::traceview {
namespace {

using namespace sparktrace::traceview_test;  // NOLINT(google-build-using-namespace): the shared test spans
using tracing::Span;

// The operation span as the proxy writes it: running (a snapshot) or ended, with its progress.
Span ProgressOperationSpan(bool running, std::int64_t tasks_done) {
  Span span = NewSpan(7, 70, 0, "spark_connect.operation", 0, running ? 400 : 1000);
  AddIdentity(span, "etl", "live", "run-1", 1);
  if (running) {
    span.attributes.push_back({"spark.connect.operation.state", std::string("running")});
  } else {
    span.attributes.push_back({"spark.connect.operation.outcome", std::string("completed")});
  }
  span.attributes.push_back({"spark.connect.progress.stages_done", std::int64_t{running ? 0 : 2}});
  span.attributes.push_back({"spark.connect.progress.stages_total", std::int64_t{2}});
  span.attributes.push_back({"spark.connect.progress.tasks_done", tasks_done});
  span.attributes.push_back({"spark.connect.progress.tasks_total", std::int64_t{10}});
  span.attributes.push_back({"spark.connect.progress.input_bytes_read", tasks_done * 1024});
  span.attributes.push_back({"spark.connect.progress.inflight_tasks", std::int64_t{running ? 4 : 0}});
  span.attributes.push_back({"spark.connect.progress.updates", std::int64_t{running ? 1 : 4}});
  return span;
}

class TraceViewProgressTest : public traceview_test::SqliteStoreFixture {
 protected:
  TraceViewProgressTest() : SqliteStoreFixture("sparktrace-traceview-progress-") {}

  nlohmann::json Attempt(TraceViewApi& api, const std::string& task) {
    return nlohmann::json::parse(GetFrom(api, "/api/v1/tasks/etl/" + task + "/run-1/1").body);
  }

  // The attempt's state in the task list (the store's task index).
  std::string ListedState(TraceViewApi& api, const std::string& task) {
    const auto listed = nlohmann::json::parse(GetFrom(api, "/api/v1/tasks").body);
    for (const auto& row : listed["tasks"]) {
      if (row["task_id"] == task) return row["state"];
    }
    return "(not listed)";
  }

};

TEST_F(TraceViewProgressTest, ARunningSnapshotIsOpenWithItsProgressUntilTheFinalSpanReplacesIt) {
  Write({ProgressOperationSpan(true, 3)});
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto running = Attempt(api, "live");
  EXPECT_EQ(running["in_progress"], true);
  EXPECT_EQ(running["state"], "running");
  ASSERT_EQ(running["spans"].size(), 1u);
  const auto& open = running["spans"][0];
  EXPECT_EQ(open["open"], true);
  EXPECT_EQ(open["progress"], (nlohmann::json{{"stages_done", 0},
                                              {"stages_total", 2},
                                              {"tasks_done", 3},
                                              {"tasks_total", 10},
                                              {"input_bytes_read", 3072},
                                              {"inflight_tasks", 4},
                                              {"updates", 1}}));
  EXPECT_EQ(ListedState(api, "live"), "running");

  Write({ProgressOperationSpan(false, 10)});
  const auto ended = Attempt(api, "live");
  EXPECT_EQ(ended["in_progress"], false);
  EXPECT_NE(ended["state"], "running");
  ASSERT_EQ(ended["spans"].size(), 1u) << "the final span replaced the snapshot";
  EXPECT_EQ(ended["spans"][0]["open"], false);
  EXPECT_EQ(ended["spans"][0]["progress"]["tasks_done"], 10);
  EXPECT_EQ(ended["spans"][0]["progress"]["updates"], 4);
  EXPECT_EQ(ListedState(api, "live"), "success");
}

TEST_F(TraceViewProgressTest, SpansWithoutProgressSaySo) {
  Write(traceview_test::Operation(1, 10, 0, 0, "etl", "load", "run-1", 1));
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path_)});
  const auto attempt = Attempt(api, "load");
  ASSERT_FALSE(attempt["spans"].empty());
  for (const auto& span : attempt["spans"]) EXPECT_TRUE(span["progress"].is_null()) << span["name"];
}

}  // namespace
}  // namespace sparktrace::traceview
