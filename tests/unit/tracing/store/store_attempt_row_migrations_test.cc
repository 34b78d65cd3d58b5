// Two migrations of the attempt rows, on both backends:
//   - the settling queue without the attempts that have nothing to settle (SQLite schema 11,
//     PostgreSQL schema 5; tracing/store/sqlite/upkeep/sqlite_settlement.cc, kSettlesSchema): a store
//     of the version before, whose queue holds a call per trace, migrates with those rows out of the
//     queue and every other row where it was;
//   - an Airflow attempt's traces read from its parts, not kept on its row (SQLite schema 12,
//     PostgreSQL schema 6): the lists an older version kept go, and the listing names the same traces.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers
using std::chrono::hours;

// The versions before the `settles` column and before the traces were read from the parts, and the
// queue's condition before the column.
constexpr std::int64_t kSqliteBeforeSettles = 10;
constexpr std::int64_t kPostgresBeforeSettles = 4;
constexpr std::int64_t kSqliteBeforeTracesFromParts = 11;
constexpr std::int64_t kPostgresBeforeTracesFromParts = 5;
// What PostgreSQL schema 7 changed, undone (as kUndoVersionThirteenSql does for SQLite): each attempt a
// summary held gets the row version 6 wrote for it, and the `attempt` column goes.
constexpr std::string_view kUndoPostgresVersionSevenSql =
    "INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, "
    "trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, "
    "compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at, settles) "
    "SELECT 0, '', '', '', 0, -1, encode(trace_id, 'hex'), root_name, '', start_unix_nano, end_unix_nano, "
    "span_count, error_count, 0, 0, 0, 0, 0, 0, NULL, CASE WHEN error_count > 0 THEN 'failed' ELSE 'success' "
    "END, end_unix_nano, 0 FROM traces WHERE attempt; ALTER TABLE traces DROP COLUMN attempt; ";
constexpr std::string_view kOldUnsettled =
    "state <> 'running' AND (settled_version IS NULL OR settled_version <> indexed_at)";

class StoreAttemptRowMigrations : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  bool Sqlite() const { return GetParam() == StoreBackend::kSqlite; }

  void Exec(const std::string& sql) { backend_.Exec(sql); }
  std::int64_t Count(const std::string& sql) { return backend_.Count(sql); }

  // Turns the current store into the version before: no `settles` column, the queue's old index.
  void UndoSettles() {
    if (Sqlite()) {
      UndoAttributeSets(backend_.location().target);
      Exec(fmt::format("{} PRAGMA user_version = {}", kUndoVersionElevenSql, kSqliteBeforeSettles));
      return;
    }
    UndoPostgresAttributeSets();
    Exec(
        fmt::format("{}DROP INDEX task_attempts_unsettled; ALTER TABLE task_attempts DROP COLUMN settles; "
                    "CREATE INDEX task_attempts_unsettled ON task_attempts (indexed_at) WHERE {}; "
                    "UPDATE sparktrace_schema SET version = {}",
                    kUndoPostgresVersionSevenSql, kOldUnsettled, kPostgresBeforeSettles));
  }

  void UndoPostgresAttributeSets() {
    auto db = backend_.Raw();
    ASSERT_TRUE(db.ok()) << db.error().ToString();
    UndoPostgresVersionsAfterSeven(*db);
  }

  TestBackend backend_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreAttemptRowMigrations,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

TEST_P(StoreAttemptRowMigrations, CallsLeaveTheQueueAndEveryOtherRowStaysWhereItWas) {
  // Two calls without identity, an application's trace without identity, an Airflow attempt.
  std::vector<Span> spans;
  for (std::uint32_t trace : {1u, 2u}) {
    Span call = MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", kBase + trace * kMs,
                         kBase + (trace + 1) * kMs);
    call.attributes = {{"rpc.method", std::string("Config")}};
    spans.push_back(call);
  }
  Span application = MakeSpan(3, 1, 0, "spark.application", kBase, kBase + 9 * kMs);
  application.attributes = {{"spark.app.id", std::string("app-3")}, {"spark.app.name", std::string("etl")}};
  spans.push_back(application);
  Span operation = MakeSpan(4, 1, 0, "spark_connect.operation", kBase, kBase + 5 * kMs);
  operation.attributes = {{"airflow.dag_id", std::string("etl")},
                          {"airflow.task_id", std::string("load")},
                          {"airflow.run_id", std::string("r1")},
                          {"airflow.try_number", std::int64_t{1}}};
  spans.push_back(operation);
  {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(spans).ok());
  }
  UndoSettles();
  // The second call was settled already under the old version: it is not in the queue, and keeps its row.
  const std::string second_call =
      Sqlite() ? fmt::format("x'{}'", ToHex(TraceIdOf(2))) : fmt::format("'{}'", ToHex(TraceIdOf(2)));
  Exec(fmt::format(
      "UPDATE task_attempts SET settled_version = indexed_at, settled_at = 1 WHERE trace_key = {}",
      second_call));
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM task_attempts WHERE {}", kOldUnsettled)), 3);

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  auto due = store->ListDueAttempts(std::chrono::system_clock::now() + hours(2), hours(1), 10);
  ASSERT_TRUE(due.ok()) << due.error().ToString();
  EXPECT_EQ(due->backlog, 2);
  std::vector<std::string> keys;
  for (const DueAttempt& attempt : due->due)
    keys.push_back(attempt.ref.airflow ? attempt.ref.key.task_id : attempt.ref.trace_key);
  EXPECT_THAT(keys, testing::UnorderedElementsAre("load", ToHex(TraceIdOf(3))));
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts WHERE settles = 0"), 1);  // the first call only
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  EXPECT_EQ(page->total, 4);
  int settled = 0;
  for (const TaskAttemptRow& row : page->rows) settled += row.settled.has_value() ? 1 : 0;
  EXPECT_EQ(settled, 1);  // the second call's figures stay
}

// An attempt of a trace per call: the version before kept its traces on its row, comma-separated in
// ascending order; after the migration the row keeps none and the listing reads them from the parts.
TEST_P(StoreAttemptRowMigrations, AnAttemptsTracesAreReadFromItsParts) {
  std::vector<Span> spans;
  std::vector<std::string> trace_ids;
  for (std::uint32_t trace : {7u, 3u, 5u}) {
    Span call = MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", kBase + trace * kMs,
                         kBase + (trace + 1) * kMs);
    call.attributes = {{"airflow.dag_id", std::string("etl")},
                       {"airflow.task_id", std::string("load")},
                       {"airflow.run_id", std::string("r1")},
                       {"airflow.try_number", std::int64_t{1}}};
    spans.push_back(call);
    trace_ids.push_back(ToHex(TraceIdOf(trace)));
  }
  std::sort(trace_ids.begin(), trace_ids.end());
  const std::string listed = fmt::format("{}", fmt::join(trace_ids, ","));
  {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(std::vector<Span>(spans.begin(), spans.begin() + 2)).ok());
    ASSERT_TRUE(store->Write(std::vector<Span>(spans.begin() + 2, spans.end())).ok());  // added to the row
  }
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts WHERE trace_ids <> ''"), 0);
  Exec(fmt::format("UPDATE task_attempts SET trace_ids = '{}'", listed));
  if (Sqlite()) {
    UndoAttributeSets(backend_.location().target);
  } else {
    UndoPostgresAttributeSets();
  }
  Exec(Sqlite()
           ? fmt::format("{} PRAGMA user_version = {}", kUndoVersionThirteenSql, kSqliteBeforeTracesFromParts)
           : fmt::format("{} UPDATE sparktrace_schema SET version = {}", kUndoPostgresVersionSevenSql,
                         kPostgresBeforeTracesFromParts));

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts WHERE trace_ids <> ''"), 0);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].trace_ids, trace_ids);
  EXPECT_EQ(page->rows[0].span_count, 3);
}

}  // namespace
}  // namespace sparktrace::tracing::store
