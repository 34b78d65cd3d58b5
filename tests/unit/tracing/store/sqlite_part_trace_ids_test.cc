// The SQLite store's schema version 17 (index/sqlite_index_schema.h, kPartTraceIdBlobsSchema): an attempt
// part's trace id is a BLOB. Every part a store writes keeps one (Airflow parts, and the part of a trace
// without identity that names an application, whose trace key stays hex text), every read of the parts
// answers in hex as before (an attempt's trace list, the list filtered by trace, the search by app id,
// a part replaced when its trace gets more spans), and a version-16 file migrates with every answer
// unchanged.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/tracing/store/shared_dag_run_spans.h"
#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

constexpr std::string_view kAppId = "app-20261202-0007";

// Calls of one Airflow attempt, each its own trace (no traceparent), traces 200 on.
std::vector<Span> AttemptOfCalls() {
  std::vector<Span> calls;
  for (std::uint32_t n = 0; n < 3; ++n) {
    Span call = MakeSpan(200 + n, 1, 0, "spark.connect.SparkConnectService/Config", kBase + n * kMs,
                         kBase + (n + 1) * kMs);
    call.attributes = {{std::string(tracing::kAirflowDagIdKey), std::string("etl")},
                       {std::string(tracing::kAirflowTaskIdKey), std::string("configure")},
                       {std::string(tracing::kAirflowRunIdKey), std::string("manual__1")},
                       {std::string(tracing::kAirflowTryNumberKey), std::int64_t{1}},
                       {std::string(tracing::kAirflowMapIndexKey), std::int64_t{-1}}};
    calls.push_back(std::move(call));
  }
  return calls;
}

// A Spark application no Airflow task submitted (trace 300): its part names the application.
Span Application(std::uint64_t end) {
  Span app = MakeSpan(300, 1, 0, std::string(tracing::kSparkApplicationSpanName), kBase, end);
  app.attributes = {{std::string(tracing::kSparkAppIdKey), std::string(kAppId)},
                    {std::string(tracing::kSparkAppNameKey), std::string("nightly")}};
  return app;
}

class SqlitePartTraceIdsTest : public SqliteStoreFileTest {
 protected:
  // Every attempt as a line: its task (or name), map index, spans and traces (hex, as the list gives them).
  static std::vector<std::string> Lines(SqliteSpanStore& store) {
    TaskAttemptFilter all;
    all.limit = 100;
    auto page = store.ListTaskAttempts(all);
    EXPECT_TRUE(page.ok());
    std::vector<std::string> lines;
    for (const TaskAttemptRow& row : page.ok() ? page->rows : std::vector<TaskAttemptRow>{}) {
      lines.push_back(fmt::format("{} {} {} {}", row.airflow ? row.key.task_id : row.name, row.key.map_index,
                                  row.span_count, fmt::join(row.trace_ids, ",")));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  // The attempts the list finds for these trace ids, and what the search by app id finds.
  static std::string Found(SqliteSpanStore& store, const std::vector<std::string>& trace_ids) {
    TaskAttemptFilter of_traces;
    of_traces.trace_ids = trace_ids;
    auto page = store.ListTaskAttempts(of_traces);
    EXPECT_TRUE(page.ok());
    auto matching = store.TracesMatching(kAppId);
    EXPECT_TRUE(matching.ok());
    return fmt::format("{} attempts; app {}", page.ok() ? page->total : -1,
                       matching.ok() ? fmt::format("{}", fmt::join(*matching, ",")) : "?");
  }
};

TEST_F(SqlitePartTraceIdsTest, PartsKeepTraceIdsAsBlobsAndEveryReadAnswersInHex) {
  const shared_dag_run::DagRun run = shared_dag_run::MakeDagRun(3, shared_dag_run::ReportArrives::kBetween);
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  for (const std::vector<Span>& write : run.writes) ASSERT_TRUE(store->Write(write).ok());
  ASSERT_TRUE(store->Write(AttemptOfCalls()).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>{Application(kBase + kMs)}).ok());

  // Four parts of the DAG run's trace and the application's as rows, all BLOB ids; the three of the
  // calls' attempt held by their summaries (index/sqlite_summary_attempts.h).
  EXPECT_EQ(
      Count("SELECT count(*) FROM attempt_parts WHERE typeof(trace_id) = 'blob' AND length(trace_id) = 16"),
      5);
  EXPECT_EQ(Count("SELECT count(*) FROM attempt_parts"), 5);
  EXPECT_EQ(Count("SELECT count(*) FROM traces WHERE attempt = 2"), 3);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM attempt_parts WHERE airflow = 0 AND trace_key = '{}'",
                              ToHex(TraceIdOf(300)))),
            1);

  const std::vector<std::string> lines = Lines(*store);
  const std::string run_hex = ToHex(run.trace_id);
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [&](const std::string& line) { return line.ends_with(" " + run_hex); }),
            static_cast<std::ptrdiff_t>(run.attempts.size()))
      << fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      fmt::format("configure -1 3 {},{},{}", ToHex(TraceIdOf(200)), ToHex(TraceIdOf(201)),
                                  ToHex(TraceIdOf(202)))),
            lines.end())
      << fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_EQ(Found(*store, {run_hex, ToHex(TraceIdOf(201)), "not an id"}),
            fmt::format("{} attempts; app {}", run.attempts.size() + 1, ToHex(TraceIdOf(300))));

  // The application's trace gets a new version of its span: its part is replaced, not doubled.
  ASSERT_TRUE(store->Write(std::vector<Span>{Application(kBase + 5 * kMs)}).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM attempt_parts WHERE airflow = 0"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM attempt_parts WHERE airflow = 0 AND end_unix_nano = " +
                  std::to_string(kBase + 5 * kMs)),
            1);
}

TEST_F(SqlitePartTraceIdsTest, AVersionSixteenFileMigratesWithEveryAnswerUnchanged) {
  const shared_dag_run::DagRun run = shared_dag_run::MakeDagRun(4, shared_dag_run::ReportArrives::kAfter);
  std::vector<std::string> lines_before;
  std::string found_before;
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(run.writes[0]).ok());
    ASSERT_TRUE(store->Write(AttemptOfCalls()).ok());
    ASSERT_TRUE(store->Write(std::vector<Span>{Application(kBase + kMs)}).ok());
    lines_before = Lines(*store);
    found_before = Found(*store, {ToHex(run.trace_id), ToHex(TraceIdOf(202))});
  }
  {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec(fmt::format("{} PRAGMA user_version = 16;", kUndoVersionSeventeenSql)).ok());
  }
  const std::int64_t parts = Count("SELECT count(*) FROM attempt_parts");
  ASSERT_GE(parts, 5);  // the DAG run's first write's, the three calls', the application's
  ASSERT_EQ(Count("SELECT count(*) FROM attempt_parts WHERE typeof(trace_id) = 'text'"), parts);

  auto store = OpenFileStore();  // migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Count("PRAGMA user_version"), SqliteSpanStore::kSchemaVersion);
  EXPECT_EQ(Count("SELECT count(*) FROM attempt_parts WHERE typeof(trace_id) = 'blob'"), parts);
  EXPECT_EQ(Lines(*store), lines_before);
  EXPECT_EQ(Found(*store, {ToHex(run.trace_id), ToHex(TraceIdOf(202))}), found_before);

  // The DAG run's other writes go into its migrated parts: each attempt as the run expects it.
  for (std::size_t i = 1; i < run.writes.size(); ++i) ASSERT_TRUE(store->Write(run.writes[i]).ok());
  TaskAttemptFilter all;
  all.limit = 100;
  auto page = store->ListTaskAttempts(all);
  ASSERT_TRUE(page.ok());
  for (const shared_dag_run::ExpectedAttempt& expected : run.attempts) {
    const auto found = std::find_if(page->rows.begin(), page->rows.end(), [&](const TaskAttemptRow& row) {
      return row.airflow && row.key == expected.key;
    });
    ASSERT_NE(found, page->rows.end()) << expected.key.task_id;
    EXPECT_EQ(found->span_count, expected.span_count) << expected.key.task_id;
    EXPECT_EQ(found->trace_ids, std::vector<std::string>{ToHex(run.trace_id)}) << expected.key.task_id;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM attempt_parts WHERE typeof(trace_id) <> 'blob'"), 0);
}

}  // namespace
}  // namespace sparktrace::tracing::store
