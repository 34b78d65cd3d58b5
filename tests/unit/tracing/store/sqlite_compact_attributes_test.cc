// The SQLite store's compact attributes (schema version 6): rows hold a BLOB, SQL reads it through
// sparktrace_attribute as it read the JSON text, and a version-5 file's JSON rows keep reading back
// exactly next to new compact ones.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_attribute_function.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

namespace fs = std::filesystem;

class SqliteCompactAttributesTest : public SqliteStoreFileTest {
 protected:
  SqliteConnection RawCompactTestConnection() {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    EXPECT_TRUE(db.ok()) << db.error().ToString();
    return std::move(db).value();
  }
};

// Every kind of value, as a span of a mapped Airflow task's trace carries them.
std::vector<Attribute> CompactTestEveryKind() {
  return {{"airflow.map_index", std::int64_t{3}},
          {"spark.phase.duration_ms", 12.75},
          {"spark.job.status", std::string("running")},
          {"spark.sql.job_ids", std::vector<std::string>{"4", "5"}},
          {"spark.connect.reattachable", true},
          {"negative", std::int64_t{-7}},
          {"free.text", std::string("caf\xc3\xa9 \"quoted\"")}};
}

TEST_F(SqliteCompactAttributesTest, SqlReadsEitherFormAsJsonArrowArrowDid) {
  SqliteConnection db = RawCompactTestConnection();
  ASSERT_TRUE(RegisterAttributeFunction(db).ok());
  const Span span = [] {
    Span s;
    s.attributes = CompactTestEveryKind();
    return s;
  }();
  const StoredSpanRow compact = ToStoredRow(span, AttributeEncoding::kCompact);
  const StoredSpanRow json = ToStoredRow(span, AttributeEncoding::kJson);
  auto stmt = db.Prepare(
      "SELECT sparktrace_attribute(?1, ?3) IS ?2 ->> ('$.\"' || ?3 || '\"'), "
      "typeof(sparktrace_attribute(?1, ?3)) = typeof(?2 ->> ('$.\"' || ?3 || '\"')), "
      "sparktrace_attribute(?2, ?3) IS ?2 ->> ('$.\"' || ?3 || '\"'), quote(sparktrace_attribute(?1, ?3))");
  ASSERT_TRUE(stmt.ok()) << stmt.error().ToString();
  std::vector<std::string> keys;
  for (const Attribute& attribute : span.attributes) keys.push_back(attribute.key);
  keys.emplace_back("absent");
  for (const std::string& key : keys) {
    stmt->Reset();
    stmt->BindBlob(1, compact.attributes);
    stmt->BindText(2, json.attributes);
    stmt->BindText(3, key);
    auto row = stmt->Step();
    ASSERT_TRUE(row.ok() && *row) << key;
    EXPECT_EQ(stmt->ColumnInt64(0), 1) << key << ": compact gives " << stmt->ColumnText(3);
    EXPECT_EQ(stmt->ColumnInt64(1), 1) << key << ": same SQL type";
    EXPECT_EQ(stmt->ColumnInt64(2), 1) << key << ": the JSON form through the function";
  }
}

// A version-5 file holds JSON text; the writer that migrates it to version 6 leaves those rows as they
// are. They read back exactly, the task index keeps reading their attributes (a mapped attempt stays
// mapped) and a span written over a JSON row still obeys the upsert's rule for airflow.task spans.
TEST_F(SqliteCompactAttributesTest, MigratesAVersionFiveStoreAndReadsItsJsonRows) {
  Span task = MakeSpan(1, 1, 0, "airflow.task", kBase, kBase + 10 * kMs);
  task.attributes = {{"airflow.dag_id", std::string("etl")},
                     {"airflow.task_id", std::string("publish")},
                     {"airflow.run_id", std::string("scheduled__1")},
                     {"airflow.try_number", std::int64_t{2}},
                     {"airflow.map_index", std::int64_t{3}}};
  Span job = MakeSpan(1, 2, 1, "spark.job", kBase + kMs, kBase + 4 * kMs);
  job.attributes = CompactTestEveryKind();
  job.events = {SpanEvent{"checkpoint", kBase + 2 * kMs, {{"rows", std::int64_t{10}}, {"ok", true}}}};
  Span call = MakeSpan(2, 1, 0, "spark.connect.SparkConnectService/Config", kBase, kBase + kMs);
  call.attributes = {{"rpc.method", std::string("Config")},
                     {"spark.connect.session_id", std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")}};
  const std::vector<Span> written = {task, job, call};
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(written).ok());
  }
  {
    // Back to what version 5 wrote: the same tables, attributes as JSON text.
    UndoAttributeSets(path_);
    SqliteConnection raw = RawCompactTestConnection();
    ASSERT_TRUE(RegisterAttributeFunction(raw).ok());  // sparktrace_unhex: ids are BLOBs (schema 10)
    auto update = raw.Prepare(
        "UPDATE spans SET attributes = ?1 WHERE trace_id = sparktrace_unhex(?2) "
        "AND span_id = sparktrace_unhex(?3)");
    ASSERT_TRUE(update.ok());
    for (const Span& span : written) {
      const StoredSpanRow row = ToStoredRow(span, AttributeEncoding::kJson);
      update->Reset();
      update->BindText(1, row.attributes);
      update->BindText(2, row.trace_id);
      update->BindText(3, row.span_id);
      ASSERT_TRUE(update->Run().ok());
    }
    ASSERT_TRUE(raw.Exec(std::string(kDropVersionNineColumnsSql) + "PRAGMA user_version = 5").ok());
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM spans WHERE typeof(attributes) = 'text'"), 3);
  }
  auto stale_reader = SqliteSpanStore::Open(path_, {.read_only = true});
  ASSERT_FALSE(stale_reader.ok());

  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  {
    SqliteConnection raw = RawCompactTestConnection();
    EXPECT_EQ(*raw.QueryInt64("PRAGMA user_version"), SqliteSpanStore::kSchemaVersion);
  }
  for (std::uint32_t trace : {1u, 2u}) {
    auto spans = store->GetTrace(TraceIdOf(trace));
    ASSERT_TRUE(spans.ok()) << spans.error().ToString();
    std::vector<const Span*> expected;
    for (const Span& span : written) {
      if (span.trace_id == TraceIdOf(trace)) expected.push_back(&span);
    }
    ASSERT_EQ(spans->size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) ExpectSpanEq((*spans)[i], *expected[i]);
  }

  // New spans in the old trace (compact rows next to JSON ones): the task index re-reads the trace,
  // and a later version of the airflow.task span replaces the JSON row (same map index in both forms).
  Span stage = MakeSpan(1, 3, 2, "spark.stage", kBase + 2 * kMs, kBase + 3 * kMs);
  stage.attributes = {{"spark.stage.id", std::int64_t{0}}};
  Span task_later = task;
  task_later.end_time_unix_nano = kBase + 20 * kMs;
  ASSERT_TRUE(store->Write(std::vector<Span>{stage, task_later}).ok());
  {
    SqliteConnection raw = RawCompactTestConnection();
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM spans WHERE typeof(attributes) = 'text'"), 2);
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM spans WHERE typeof(attributes) = 'blob'"), 2);
  }
  TaskAttemptFilter filter;
  filter.dag_id = "etl";
  auto page = store->ListTaskAttempts(filter);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].key.task_id, "publish");
  EXPECT_EQ(page->rows[0].key.map_index, 3);
  EXPECT_EQ(page->rows[0].key.try_number, 2);
  EXPECT_EQ(page->rows[0].span_count, 3);
  EXPECT_EQ(page->rows[0].end_unix_nano, kBase + 20 * kMs);
  EXPECT_EQ(page->rows[0].state, "running");  // the job span says so, from its JSON row
  auto spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 3u);
  ExpectSpanEq((*spans)[0], task_later);
  ExpectSpanEq((*spans)[1], job);
  ExpectSpanEq((*spans)[2], stage);
}

}  // namespace
}  // namespace sparktrace::tracing::store

namespace sparktrace::tracing::store {
namespace {

// Schema version 7: a trace without Airflow identity keeps its attempt row and no part row unless the
// part names an application. A version-6 file's such parts go at migration; the attempt is still
// refreshed when its trace grows, found by trace id and dropped when its trace gains an identity.
TEST_F(SqliteCompactAttributesTest, AttemptsWithoutIdentityNeedNoPartRows) {
  const Span call = MakeSpan(2, 1, 0, "spark.connect.SparkConnectService/Config", kBase, kBase + kMs);
  Span application = MakeSpan(3, 1, 0, "spark.application", kBase, kBase + 5 * kMs);
  application.attributes = {{"spark.app.id", std::string("app-20240501-0007")}};
  const auto parts_without_identity = [this] {
    SqliteConnection raw = RawCompactTestConnection();
    return *raw.QueryInt64("SELECT count(*) FROM attempt_parts WHERE airflow = 0");
  };
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(std::vector<Span>{call, application}).ok());
  }
  EXPECT_EQ(parts_without_identity(), 1);  // the application's, for the search by app id
  {
    // Version 6 kept a part for the call's trace too.
    UndoAttributeSets(path_);
    SqliteConnection raw = RawCompactTestConnection();
    ASSERT_TRUE(raw.Exec(std::string(kDropVersionNineColumnsSql) +
                         "INSERT INTO attempt_parts SELECT airflow, dag_id, task_id, run_id, try_number, "
                         "map_index, trace_key, trace_key, name, NULL, start_unix_nano, end_unix_nano, "
                         "span_count, error_count, open_count, resource_wait_ms, compute_ms, io_write_ms, "
                         "idle_ms, finding_count, top_finding, -1 FROM task_attempts WHERE airflow = 0 AND "
                         "name LIKE 'spark.connect.%'; PRAGMA user_version = 6")
                    .ok());
  }
  EXPECT_EQ(parts_without_identity(), 2);
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(parts_without_identity(), 1);

  // The call's trace grows: its row is recomputed from the trace, still without a part row.
  ASSERT_TRUE(store->Write(std::vector<Span>{MakeSpan(2, 2, 1, "child", kBase + kMs, kBase + 9 * kMs)}).ok());
  EXPECT_EQ(parts_without_identity(), 1);
  TaskAttemptFilter by_trace;
  by_trace.trace_ids = std::vector<std::string>{ToHex(TraceIdOf(2))};
  auto page = store->ListTaskAttempts(by_trace);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_FALSE(page->rows[0].airflow);
  EXPECT_EQ(page->rows[0].span_count, 2);
  EXPECT_EQ(page->rows[0].end_unix_nano, kBase + 9 * kMs);
  auto found = store->TracesMatching("app-20240501-0007");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, std::vector<std::string>{ToHex(TraceIdOf(3))});

  // The call's trace gains an Airflow identity: its row without identity goes, the attempt's comes.
  Span task = MakeSpan(2, 3, 0, "airflow.task", kBase, kBase + 10 * kMs);
  task.attributes = {{"airflow.dag_id", std::string("etl")},
                     {"airflow.task_id", std::string("load")},
                     {"airflow.run_id", std::string("manual__1")},
                     {"airflow.try_number", std::int64_t{1}}};
  ASSERT_TRUE(store->Write(std::vector<Span>{task}).ok());
  page = store->ListTaskAttempts(by_trace);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_TRUE(page->rows[0].airflow);
  EXPECT_EQ(page->rows[0].key.task_id, "load");
  TaskAttemptFilter all;
  page = store->ListTaskAttempts(all);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 2);  // the application's trace and the Airflow attempt
}

}  // namespace
}  // namespace sparktrace::tracing::store
