#include "tracing/store/sqlite/sqlite_span_store.h"

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_attribute_function.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

namespace fs = std::filesystem;

class SqliteSpanStoreTest : public SqliteStoreFileTest {
 protected:
  std::unique_ptr<SqliteSpanStore> OpenReader() {
    StoreOptions options;
    options.read_only = true;
    return OpenFileStore(options);
  }

  // A plain connection, to look at or tamper with the file the way another program would.
  SqliteConnection Raw() {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    EXPECT_TRUE(db.ok());
    return std::move(db).value();
  }
};

TEST_F(SqliteSpanStoreTest, StoresWellKnownAttributesInQueryableColumns) {
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  Span span = MakeSpan(7, 1, 0, "op", kBase, kBase + kMs);
  span.attributes = {{"spark.connect.operation_id", std::string("op-7")},
                     {"spark.connect.session_id", std::string("session-1")},
                     {"airflow.dag_id", std::string("etl")},
                     {"airflow.task_id", std::string("load")},
                     {"airflow.run_id", std::string("manual__2024")},
                     {"airflow.try_number", std::string("3")}};  // as text: still a number column
  ASSERT_TRUE(store->Write(std::vector<Span>{span}).ok());

  SqliteConnection raw = Raw();
  ASSERT_TRUE(RegisterAttributeFunction(raw).ok());
  // The session id has no column since schema version 8: it stays in the attributes only.
  auto stmt = raw.Prepare(
      "SELECT operation_id, sparktrace_attribute(attributes, 'spark.connect.session_id'), dag_id, task_id, "
      "run_id, try_number, typeof(try_number), typeof(attributes) FROM spans");
  ASSERT_TRUE(stmt.ok()) << stmt.error().ToString();
  auto row = stmt->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(stmt->ColumnText(0), "op-7");
  EXPECT_EQ(stmt->ColumnText(1), "session-1");
  EXPECT_EQ(stmt->ColumnText(2), "etl");
  EXPECT_EQ(stmt->ColumnText(3), "load");
  EXPECT_EQ(stmt->ColumnText(4), "manual__2024");
  EXPECT_EQ(stmt->ColumnInt64(5), 3);
  EXPECT_EQ(stmt->ColumnText(6), "integer");
  EXPECT_EQ(stmt->ColumnText(7), "blob");  // compact (schema version 6): sqlite_compact_attributes_test.cc
  EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM pragma_table_info('spans') WHERE name = 'session_id'"), 0);
}

TEST_F(SqliteSpanStoreTest, LooksUpOperationsThroughTheirIndex) {
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  // The lookup goes through the operation index, not a scan of every span.
  SqliteConnection raw = Raw();
  auto plan = raw.Prepare("EXPLAIN QUERY PLAN SELECT trace_id FROM spans WHERE operation_id = 'x'");
  ASSERT_TRUE(plan.ok());
  auto row = plan->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_NE(plan->ColumnText(3).find("spans_by_operation"), std::string::npos) << plan->ColumnText(3);
}

TEST_F(SqliteSpanStoreTest, RetentionBySizeDeletesOldestAndShrinksTheFile) {
  const std::string payload(4000, 'x');  // about one page of attributes per span
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    std::vector<Span> spans;
    for (std::uint32_t t = 1; t <= 200; ++t) {
      for (std::uint32_t s = 1; s <= 5; ++s) {
        const std::uint64_t start = kBase + std::uint64_t{t} * 1000 * kMs + s * kMs;
        Span span = MakeSpan(t, s, s == 1 ? 0 : 1, "span", start, start + kMs);
        span.attributes = {{"payload", payload}};
        spans.push_back(std::move(span));
      }
    }
    ASSERT_TRUE(store->Write(spans).ok());
    // Within budget: nothing deleted, but the WAL is checkpointed into the file, so the file size
    // below is the full database size.
    auto retention =
        store->EnforceRetention(std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase)));
    ASSERT_TRUE(retention.ok()) << retention.error().ToString();
    EXPECT_EQ(retention->traces_deleted_by_age + retention->traces_deleted_by_size, 0u);
  }
  const std::uint64_t size_before = fs::file_size(path_);
  ASSERT_GT(size_before, 4u << 20) << "the test needs a database well above the budget";

  constexpr std::uint64_t kBudget = 1u << 20;
  StoreOptions options;
  options.max_bytes = kBudget;
  auto store = OpenFileStore(options);
  ASSERT_NE(store, nullptr);
  auto retention =
      store->EnforceRetention(std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase)));
  ASSERT_TRUE(retention.ok()) << retention.error().ToString();
  EXPECT_EQ(retention->traces_deleted_by_age, 0u);
  EXPECT_GT(retention->traces_deleted_by_size, 100u);
  EXPECT_GT(retention->bytes_before, kBudget);
  EXPECT_LE(retention->bytes_after, kBudget);

  const std::uint64_t size_after = fs::file_size(path_);
  EXPECT_LE(size_after, kBudget);
  EXPECT_LT(size_after, size_before / 4);
  const fs::path wal = path_ + "-wal";
  if (fs::exists(wal)) {
    EXPECT_EQ(fs::file_size(wal), 0u);
  }

  // What is left is the newest traces, contiguous up to the newest.
  auto listed = store->ListTraces({.limit = 0});
  ASSERT_TRUE(listed.ok());
  ASSERT_FALSE(listed->empty());
  EXPECT_EQ(listed->size() + retention->traces_deleted_by_size, 200u);
  EXPECT_EQ(ToHex(listed->front().trace_id), ToHex(TraceIdOf(200)));
  EXPECT_EQ(ToHex(listed->back().trace_id),
            ToHex(TraceIdOf(static_cast<std::uint32_t>(201 - listed->size()))));
  EXPECT_EQ(store->GetTrace(TraceIdOf(1)).error().code, ErrorCode::kNotFound);

  // Still a healthy database that takes writes.
  ASSERT_TRUE(store->Write(std::vector<Span>{MakeSpan(999, 1, 0, "after", kBase, kBase + 1)}).ok());
  EXPECT_TRUE(store->GetTrace(TraceIdOf(999)).ok());
}

TEST_F(SqliteSpanStoreTest, ReopensAfterClose) {
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(std::vector<Span>{MakeSpan(1, 1, 0, "first", kBase, kBase + kMs)}).ok());
  }
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(
        store->Write(std::vector<Span>{MakeSpan(2, 1, 0, "second", kBase + kMs, kBase + 2 * kMs)}).ok());
  }
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  auto listed = reader->ListTraces({});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(TraceHexes(*listed), (std::vector<std::string>{ToHex(TraceIdOf(2)), ToHex(TraceIdOf(1))}));

  SqliteConnection raw = Raw();
  EXPECT_EQ(*raw.QueryInt64("PRAGMA user_version"), SqliteSpanStore::kSchemaVersion);
  EXPECT_EQ(*raw.QueryInt64("PRAGMA auto_vacuum"), 2);  // INCREMENTAL
  auto mode = raw.Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  ASSERT_TRUE(*mode->Step());
  EXPECT_EQ(mode->ColumnText(0), "wal");
}

TEST_F(SqliteSpanStoreTest, OpensAnEmptyExistingFile) {
  std::ofstream(path_).close();
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Write(std::vector<Span>{MakeSpan(1, 1, 0, "s", kBase, kBase + 1)}).ok());
}

TEST_F(SqliteSpanStoreTest, CreatesMissingParentDirectories) {
  path_ = (dir_ / "a" / "b" / "traces.db").string();
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(fs::exists(path_));
}

TEST_F(SqliteSpanStoreTest, RefusesANewerSchemaVersion) {
  { ASSERT_NE(OpenFileStore(), nullptr); }
  {
    SqliteConnection raw = Raw();
    ASSERT_TRUE(raw.Exec(fmt::format("PRAGMA user_version = {}", SqliteSpanStore::kSchemaVersion + 1)).ok());
  }
  for (const bool read_only : {false, true}) {
    StoreOptions options;
    options.read_only = read_only;
    auto store = SqliteSpanStore::Open(path_, options);
    ASSERT_FALSE(store.ok()) << "read_only=" << read_only;
    EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(store.error().message.find(
                  fmt::format("newer sparktrace (schema version {}", SqliteSpanStore::kSchemaVersion + 1)),
              std::string::npos)
        << store.error().message;
    EXPECT_NE(store.error().message.find(path_), std::string::npos) << store.error().message;
  }
}

// Version 3 dropped the summary's Airflow index and version 4 added the settled figures: a version-2
// file is migrated by the first writer, its data kept.
TEST_F(SqliteSpanStoreTest, MigratesAVersionTwoStore) {
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    // An application's trace: something to settle (upkeep/sqlite_settlement.cc, kSettlesSchema).
    Span kept = MakeSpan(1, 1, 0, "spark.application", kBase, kBase + kMs);
    kept.attributes = {{"spark.app.id", std::string("app-1")}};
    ASSERT_TRUE(store->Write(std::vector<Span>{kept}).ok());
  }
  {
    UndoAttributeSets(path_);
    SqliteConnection raw = Raw();
    // What version 4 added goes too, so that its columns are added again.
    ASSERT_TRUE(
        raw.Exec(std::string(kDropVersionNineColumnsSql) +
                 "CREATE INDEX traces_by_airflow ON traces (dag_id, task_id, run_id, start_unix_nano); "
                 "DROP INDEX task_attempts_unsettled; ALTER TABLE task_attempts DROP COLUMN indexed_at; "
                 "ALTER TABLE task_attempts DROP COLUMN settled_version; "
                 "ALTER TABLE task_attempts DROP COLUMN settled_at; "
                 "ALTER TABLE task_attempts DROP COLUMN core_seconds; "
                 "ALTER TABLE task_attempts DROP COLUMN gib_seconds; ALTER TABLE task_attempts DROP COLUMN "
                 "money; "
                 "ALTER TABLE task_attempts DROP COLUMN idle_fraction; "
                 "ALTER TABLE task_attempts DROP COLUMN regression; PRAGMA user_version = 2")
            .ok());
  }
  auto stale_reader = SqliteSpanStore::Open(path_, {.read_only = true});
  ASSERT_FALSE(stale_reader.ok());
  EXPECT_NE(stale_reader.error().message.find("start the proxy once"), std::string::npos);

  auto migrated = OpenFileStore();
  ASSERT_NE(migrated, nullptr);
  SqliteConnection raw = Raw();
  EXPECT_EQ(*raw.QueryInt64("PRAGMA user_version"), SqliteSpanStore::kSchemaVersion);
  EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM sqlite_schema WHERE name = 'traces_by_airflow'"), 0);
  auto spans = migrated->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  EXPECT_EQ((*spans)[0].name, "spark.application");
  // Version 4: the row indexed before is unsettled, and quiet since long (indexed_at 0).
  auto due = migrated->ListDueAttempts(std::chrono::system_clock::now(), std::chrono::hours(1), 10);
  ASSERT_TRUE(due.ok()) << due.error().ToString();
  ASSERT_EQ(due->due.size(), 1u);
  EXPECT_EQ(due->due[0].indexed_unix_nano, 0u);
}

// Version 5 keeps the rows without Airflow identity out of the task index's by-trace and by-task
// indexes: a version-4 file (both indexes whole) is migrated, and both kinds of attempt are still
// found, listed and re-indexed when a trace grows.
TEST_F(SqliteSpanStoreTest, MigratesAVersionFourStoreToAirflowOnlyIndexes) {
  Span task = MakeSpan(1, 1, 0, "airflow.task", kBase, kBase + kMs);
  task.attributes = {{"airflow.dag_id", std::string("etl")},
                     {"airflow.task_id", std::string("load")},
                     {"airflow.run_id", std::string("manual__1")},
                     {"airflow.try_number", std::int64_t{1}}};
  const Span call = MakeSpan(2, 1, 0, "spark.connect.SparkConnectService/Config", kBase, kBase + kMs);
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(std::vector<Span>{task, call}).ok());
  }
  {
    UndoAttributeSets(path_);
    SqliteConnection raw = Raw();
    ASSERT_TRUE(
        raw.Exec(std::string(kDropVersionNineColumnsSql) +
                 "DROP INDEX attempt_parts_by_trace; DROP INDEX task_attempts_by_task; "
                 "CREATE INDEX attempt_parts_by_trace ON attempt_parts (trace_id); "
                 "CREATE INDEX task_attempts_by_task ON task_attempts (dag_id, task_id, start_unix_nano); "
                 "PRAGMA user_version = 4")
            .ok());
  }
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  {
    SqliteConnection raw = Raw();
    EXPECT_EQ(*raw.QueryInt64("PRAGMA user_version"), SqliteSpanStore::kSchemaVersion);
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM sqlite_schema WHERE name IN ('attempt_parts_by_trace', "
                              "'task_attempts_by_task') AND sql LIKE '%WHERE airflow = 1'"),
              2);
  }
  // Each trace grows by a span: the index re-reads both (KeysOfTraces, DeleteParts by trace).
  Span task_child = MakeSpan(1, 2, 1, "spark.job", kBase + kMs, kBase + 3 * kMs);
  const Span call_again = MakeSpan(2, 2, 1, "child", kBase + kMs, kBase + 2 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{task_child, call_again}).ok());

  TaskAttemptFilter all;
  auto page = store->ListTaskAttempts(all);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->total, 2);  // one row each, no part left behind twice
  for (const TaskAttemptRow& row : page->rows) {
    EXPECT_EQ(row.span_count, 2) << row.name;
    EXPECT_EQ(row.end_unix_nano, row.airflow ? kBase + 3 * kMs : kBase + 2 * kMs) << row.name;
  }
  TaskAttemptFilter by_task;
  by_task.dag_id = "etl";
  by_task.task_id = "load";
  auto tasks = store->ListTaskAttempts(by_task);
  ASSERT_TRUE(tasks.ok());
  ASSERT_EQ(tasks->total, 1);
  EXPECT_TRUE(tasks->rows[0].airflow);
  TaskAttemptFilter no_dag;  // an empty name is no Airflow name: both kinds of row may match
  no_dag.dag_id = "";
  auto unnamed = store->ListTaskAttempts(no_dag);
  ASSERT_TRUE(unnamed.ok());
  ASSERT_EQ(unnamed->total, 1);
  EXPECT_FALSE(unnamed->rows[0].airflow);
  TaskAttemptFilter by_trace;
  by_trace.trace_ids = std::vector<std::string>{ToHex(TraceIdOf(2))};
  auto found = store->ListTaskAttempts(by_trace);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->total, 1);
  EXPECT_FALSE(found->rows[0].airflow);
}

TEST_F(SqliteSpanStoreTest, ReaderRefusesAnUnmigratedDatabase) {
  {
    SqliteConnection raw =
        std::move(SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)).value();
  }
  auto store = SqliteSpanStore::Open(path_, {.read_only = true});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(store.error().message.find("schema version 0"), std::string::npos) << store.error().message;
}

TEST_F(SqliteSpanStoreTest, ReportsAnUnwritablePath) {
  // A regular file where a directory should be: fails for root too, unlike permission bits.
  std::ofstream(dir_ / "blocker") << "not a directory";
  path_ = (dir_ / "blocker" / "traces.db").string();
  auto store = SqliteSpanStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kIo);
  EXPECT_NE(store.error().message.find((dir_ / "blocker").string()), std::string::npos)
      << store.error().message;
  EXPECT_NE(store.error().message.find("Not a directory"), std::string::npos) << store.error().message;
}

TEST_F(SqliteSpanStoreTest, ReportsACorruptFile) {
  std::ofstream(path_) << std::string(8192, 'Z');
  auto store = SqliteSpanStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kIo);
  EXPECT_NE(store.error().message.find("file is not a database"), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find(path_), std::string::npos) << store.error().message;
}

TEST_F(SqliteSpanStoreTest, RefusesSomeoneElsesDatabase) {
  {
    auto raw = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(raw->Exec("CREATE TABLE customers (id INTEGER)").ok());
  }
  auto store = SqliteSpanStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(store.error().message.find("not sparktrace's"), std::string::npos) << store.error().message;

  {
    auto raw = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(raw->Exec("PRAGMA application_id = 1234").ok());
  }
  store = SqliteSpanStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("not a sparktrace trace database"), std::string::npos)
      << store.error().message;
}

TEST_F(SqliteSpanStoreTest, ReaderNeedsAnExistingFileAndCannotWrite) {
  auto missing = SqliteSpanStore::Open(path_, {.read_only = true});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(fs::exists(path_));

  { ASSERT_NE(OpenFileStore(), nullptr); }
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  auto written = reader->Write(std::vector<Span>{MakeSpan(1, 1, 0, "s", kBase, kBase + 1)});
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(reader->EnforceRetention(std::chrono::system_clock::now()).ok());
}

TEST_F(SqliteSpanStoreTest, ReaderKeepsItsSnapshotWhileTheWriterCommits) {
  // A short busy timeout: without WAL the writer's commit would wait for the reader and fail fast.
  StoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(100);
  auto writer = OpenFileStore(options);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Write(std::vector<Span>{MakeSpan(1, 1, 0, "first", kBase, kBase + 1)}).ok());

  SqliteConnection reader = Raw();
  ASSERT_TRUE(reader.Exec("BEGIN").ok());
  ASSERT_EQ(*reader.QueryInt64("SELECT count(*) FROM spans"), 1);  // the snapshot starts here

  auto written = writer->Write(std::vector<Span>{MakeSpan(2, 1, 0, "second", kBase + 5, kBase + 6)});
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  EXPECT_EQ(*reader.QueryInt64("SELECT count(*) FROM spans"), 1);
  ASSERT_TRUE(reader.Exec("COMMIT").ok());
  EXPECT_EQ(*reader.QueryInt64("SELECT count(*) FROM spans"), 2);

  auto store_reader = OpenReader();
  ASSERT_NE(store_reader, nullptr);
  auto listed = store_reader->ListTraces({});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);
}

}  // namespace
}  // namespace sparktrace::tracing::store
