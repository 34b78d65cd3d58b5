#pragma once
// A fixture for tests of a SQLite store file: a directory of its own per test and per process (so
// that parallel ctest runs share nothing), removed afterwards, and the file's path in it.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "tests/unit/tracing/store/stored_name_undo_sql.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"
#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"
#include "tracing/store/sqlite/rows/sqlite_attribute_sets.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::tracing::store {

// What schema version 18 changed (index/sqlite_index_schema.h, kHeldPartsSchema): each part a summary
// holds gets the attempt_parts row version 17 wrote for it (index/sqlite_summary_attempts.h), and the column
// and index go. The undo SQL of every older version starts with it.
inline const std::string kUndoVersionEighteenSql =
    HeldPartsIntoRowsSql("1") +
    "; UPDATE traces SET attempt = NULL WHERE attempt = 2; DROP INDEX traces_held_parts; "
    "ALTER TABLE traces DROP COLUMN map_index; ";

// What schema version 17 changed (index/sqlite_index_schema.h, kPartTraceIdBlobsSchema), and version
// 18: the parts' trace ids hex text again.
inline const std::string kUndoVersionSeventeenSql =
    kUndoVersionEighteenSql +
    "UPDATE attempt_parts SET trace_id = lower(hex(trace_id)) WHERE typeof(trace_id) = 'blob'; ";

// What schema versions 16 and 17 changed (sqlite_schema.cc, kWholeNamesSchema), for a test that turns a
// current file into version 15 (stored_name_undo_sql.h).
inline const std::string kUndoVersionSixteenSql = fmt::format(
    "{}{}; {}; ", kUndoVersionSeventeenSql, UndoWholeNamesSql(SpanSqlDialect::kSqlite, "spans", "name"),
    UndoWholeNamesSql(SpanSqlDialect::kSqlite, "traces", "root_name"));

// What schema versions 15 to 17 changed (sqlite_schema.cc, kStoredNamesSchema), for a test that turns a
// current file into an older version: names back as they are (StoredName undone).
inline const std::string kUndoVersionFifteenSql = fmt::format(
    "{}{}; {}; ", kUndoVersionSeventeenSql, UndoStoredNamesSql(SpanSqlDialect::kSqlite, "spans", "name"),
    UndoStoredNamesSql(SpanSqlDialect::kSqlite, "traces", "root_name"));

// What schema version 13 changed (sqlite_schema.cc, kSummaryAttemptsSchema), and version 15, for a test
// that turns a current file into version 12: each attempt a summary held gets the task_attempts row version
// 12 wrote for it (its figures are the summary's, index/sqlite_summary_attempts.h), the `attempt` column goes
// and traces_by_start is on the start alone again.
inline const std::string kUndoVersionThirteenSql =
    kUndoVersionFifteenSql +
    "INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, "
    "trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, "
    "compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at, settles) "
    "SELECT 0, '', '', '', 0, -1, trace_id, root_name, '', start_unix_nano, end_unix_nano, span_count, "
    "error_count, 0, 0, 0, 0, 0, 0, NULL, CASE WHEN error_count > 0 THEN 'failed' ELSE 'success' END, "
    "end_unix_nano, 0 FROM traces WHERE attempt = 1; "
    "DROP INDEX traces_by_start; ALTER TABLE traces DROP COLUMN attempt; "
    "CREATE INDEX traces_by_start ON traces (start_unix_nano); ";

// What schema version 11 changed (upkeep/sqlite_settlement.cc, kSettlesSchema), and version 13, for a
// test that turns a current file into an older version: the `settles` column goes and the settling
// queue's index is version 4's again; the migration makes both anew.
inline const std::string kUndoVersionElevenSql =
    kUndoVersionThirteenSql +
    "DROP INDEX task_attempts_unsettled; ALTER TABLE task_attempts DROP COLUMN settles; "
    "CREATE INDEX task_attempts_unsettled ON task_attempts (indexed_at) WHERE state <> 'running' AND "
    "(settled_version IS NULL OR settled_version <> indexed_at); ";

// What schema version 9 added (sqlite_schema.cc, kIncrementalIndexSchema), and the later versions',
// for a test that turns a current file into an older version: its migration adds the columns again.
inline const std::string kDropVersionNineColumnsSql =
    std::string(kUndoVersionElevenSql) +
    "ALTER TABLE attempt_parts DROP COLUMN operation_count; "
    "ALTER TABLE attempt_parts DROP COLUMN failed_operation_count; "
    "ALTER TABLE attempt_parts DROP COLUMN failed_job_count; ALTER TABLE traces DROP COLUMN "
    "awaited_parents; ";

// What schema version 14 changed (sqlite_schema.cc, kAttributeSetsSchema), undone in the file at
// `path` for a test that turns a current file into an older version: every span row in the shared
// form gets the compact row version 13 wrote (its set read back in), and attribute_sets goes.
// Run before the SQL that undoes the earlier versions.
inline void UndoAttributeSets(const std::string& path) {
  auto db = SqliteConnection::Open(path, SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(db.ok()) << db.error().ToString();
  SqliteAttributeSets sets(*db);
  struct Rewritten {
    std::string trace_id;  // the key's BLOBs (schema version 10)
    std::string span_id;
    std::string compact;
  };
  std::vector<Rewritten> rewritten;
  {
    auto rows = db->Prepare(
        "SELECT trace_id, span_id, attributes FROM spans WHERE typeof(attributes) = 'blob' AND "
        "substr(attributes, 1, 1) = x'02'");
    ASSERT_TRUE(rows.ok()) << rows.error().ToString();
    while (true) {
      auto step = rows->Step();
      ASSERT_TRUE(step.ok()) << step.error().ToString();
      if (!*step) break;
      auto attributes = ReadCompactOrSharedAttributes(rows->ColumnBlobView(2), &sets);
      ASSERT_TRUE(attributes.ok()) << attributes.error().ToString();
      Rewritten& row = rewritten.emplace_back();
      row.trace_id = rows->ColumnBlobView(0);
      row.span_id = rows->ColumnBlobView(1);
      AppendCompactAttributes(row.compact, *attributes);
    }
  }
  for (const Rewritten& row : rewritten) {
    auto update = db->Prepare("UPDATE spans SET attributes = ?3 WHERE trace_id = ?1 AND span_id = ?2");
    ASSERT_TRUE(update.ok()) << update.error().ToString();
    update->BindBlob(1, row.trace_id);
    update->BindBlob(2, row.span_id);
    update->BindBlob(3, row.compact);
    ASSERT_TRUE(update->Run().ok());
    ASSERT_EQ(sqlite3_changes(db->handle()), 1);
  }
  ASSERT_TRUE(db->Exec("DROP TABLE attribute_sets").ok());
}

class SqliteStoreFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) /
           ("sparktrace_store_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "traces.db").string();
  }
  // What `sql` (a count) answers in the file at path_, read on a connection of its own; -1, reported,
  // when it fails.
  std::int64_t Count(const std::string& sql) {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db.ok());
    if (!db.ok()) return -1;
    auto count = db->QueryInt64(sql);
    EXPECT_TRUE(count.ok()) << sql;
    return count.ok() ? *count : -1;
  }

  // The store at path_ (opened as a writer unless `options` say otherwise), or null with the
  // failure reported.
  std::unique_ptr<SqliteSpanStore> OpenFileStore(StoreOptions options = {}) {
    auto store = SqliteSpanStore::Open(path_, options);
    EXPECT_TRUE(store.ok()) << store.error().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::filesystem::path dir_;
  std::string path_;
};

}  // namespace sparktrace::tracing::store
