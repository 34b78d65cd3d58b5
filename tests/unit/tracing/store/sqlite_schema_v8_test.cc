// The SQLite store's schema version 8 (sqlite_schema.cc, kCompactSpansSchema): spans keyed by their ids
// without a rowid and without a session_id column, and a task_attempts_by_state index without the
// 'success' rows. A version-7 file migrates to it with every span, trace and attempt answering as before.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_attribute_function.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// What version 7 made of spans: a rowid table with a UNIQUE key, the session id in a column of its own;
// task_attempts_by_state over every row, an attempt without identity naming its trace twice, and an
// Airflow attempt naming its traces on its row (until version 12).
constexpr std::string_view kVersionSevenSpansSql = R"sql(
CREATE TABLE spans_v7 (
  trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_span_id TEXT, name TEXT NOT NULL,
  kind INTEGER NOT NULL, start_unix_nano INTEGER NOT NULL, end_unix_nano INTEGER NOT NULL,
  status_code INTEGER NOT NULL, status_message TEXT NOT NULL, trace_state TEXT NOT NULL,
  attributes TEXT NOT NULL, events TEXT NOT NULL, operation_id TEXT, session_id TEXT, dag_id TEXT,
  task_id TEXT, run_id TEXT, try_number INTEGER, UNIQUE (trace_id, span_id));
INSERT INTO spans_v7 SELECT trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano,
  status_code, status_message, trace_state, attributes, events, operation_id,
  sparktrace_attribute(attributes, 'spark.connect.session_id'), dag_id, task_id, run_id, try_number FROM spans;
DROP TABLE spans;
ALTER TABLE spans_v7 RENAME TO spans;
CREATE INDEX spans_by_operation ON spans (operation_id) WHERE operation_id IS NOT NULL;
DROP INDEX task_attempts_by_state;
CREATE INDEX task_attempts_by_state ON task_attempts (state, start_unix_nano);
UPDATE task_attempts SET trace_ids = trace_key WHERE airflow = 0;
UPDATE task_attempts SET trace_ids = (SELECT group_concat(p.trace_id, ',') FROM attempt_parts p
  WHERE p.airflow = 1 AND p.dag_id = task_attempts.dag_id AND p.task_id = task_attempts.task_id
    AND p.run_id = task_attempts.run_id AND p.try_number = task_attempts.try_number
    AND p.map_index = task_attempts.map_index AND p.trace_key = task_attempts.trace_key) WHERE airflow = 1;
PRAGMA user_version = 7;
)sql";

class SqliteSchemaV8Test : public SqliteStoreFileTest {
 protected:
  SqliteConnection RawV8TestConnection() {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    EXPECT_TRUE(db.ok()) << db.error().ToString();
    auto registered = RegisterAttributeFunction(*db);
    EXPECT_TRUE(registered.ok());
    return std::move(db).value();
  }

  std::string SchemaSqlOf(std::string_view name) {
    SqliteConnection raw = RawV8TestConnection();
    auto stmt = raw.Prepare("SELECT sql FROM sqlite_schema WHERE name = ?1");
    EXPECT_TRUE(stmt.ok());
    stmt->BindText(1, name);
    auto row = stmt->Step();
    EXPECT_TRUE(row.ok() && *row) << name;
    return row.ok() && *row ? stmt->ColumnText(0) : std::string();
  }
};

// A call per trace (with a session id), an Airflow attempt with a failed operation, and another
// Airflow attempt that succeeded.
std::vector<Span> V8TestSpans() {
  Span call = MakeSpan(1, 1, 0, "spark.connect.SparkConnectService/Config", kBase, kBase + kMs);
  call.attributes = {{"rpc.method", std::string("Config")},
                     {"spark.connect.session_id", std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")}};
  const auto task_span = [](std::uint32_t trace, std::string task) {
    Span span = MakeSpan(trace, 1, 0, "airflow.task", kBase + trace * kMs, kBase + (trace + 20) * kMs);
    span.attributes = {{"airflow.dag_id", std::string("etl")},
                       {"airflow.task_id", std::move(task)},
                       {"airflow.run_id", std::string("scheduled__1")},
                       {"airflow.try_number", std::int64_t{1}}};
    return span;
  };
  Span failing = MakeSpan(2, 2, 1, "spark_connect.operation", kBase + 3 * kMs, kBase + 9 * kMs);
  failing.attributes = {{"spark.connect.operation_id", std::string("op-2")},
                        {"spark.connect.operation.state", std::string("failed")}};
  failing.status_code = StatusCode::kError;
  Span succeeding = MakeSpan(3, 2, 1, "spark_connect.operation", kBase + 4 * kMs, kBase + 8 * kMs);
  succeeding.attributes = {{"spark.connect.operation_id", std::string("op-3")},
                           {"spark.connect.operation.state", std::string("succeeded")}};
  return {call, task_span(2, "load"), failing, task_span(3, "publish"), succeeding};
}

// An attempt list as one comparable text per row.
std::vector<std::string> V8TestAttemptLines(SqliteSpanStore& store, std::optional<std::string> state) {
  TaskAttemptFilter filter;
  filter.state = std::move(state);
  auto page = store.ListTaskAttempts(filter);
  EXPECT_TRUE(page.ok()) << page.error().ToString();
  std::vector<std::string> lines;
  if (!page.ok()) return lines;
  for (const TaskAttemptRow& row : page->rows) {
    lines.push_back(fmt::format("{} {}/{}/{} {} {} spans {} errors {} {}..{} {}", row.airflow, row.key.dag_id,
                                row.key.task_id, row.key.run_id, row.name, fmt::join(row.trace_ids, ","),
                                row.span_count, row.error_count, row.start_unix_nano, row.end_unix_nano,
                                row.state));
  }
  lines.push_back(fmt::format("total {}", page->total));
  return lines;
}

TEST_F(SqliteSchemaV8Test, NewStoreKeysSpansByTheirIdsWithoutSessionColumn) {
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Write(V8TestSpans()).ok());
  EXPECT_NE(SchemaSqlOf("spans").find("WITHOUT ROWID"), std::string::npos);
  EXPECT_NE(SchemaSqlOf("task_attempts_by_state").find("WHERE state <> 'success'"), std::string::npos);
  SqliteConnection raw = RawV8TestConnection();
  EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM pragma_table_info('spans') WHERE name = 'session_id'"), 0);
  EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlite_autoindex_spans%'"),
            0);
  // The call's attempt names its trace once: since version 13 its summary row holds it (no task_attempts
  // row at all, sqlite_summary_attempts.h); the listing gives it as its trace.
  EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM task_attempts WHERE airflow = 0"), 0);
  EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM traces WHERE attempt = 1"), 1);
  auto all = V8TestAttemptLines(*store, std::nullopt);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_NE(all[2].find(ToHex(TraceIdOf(1))), std::string::npos)
      << all[2];  // newest first: the call is oldest

  // The listing by a state other than success reads the partial index; by success, the whole table.
  auto failed = V8TestAttemptLines(*store, "failed");
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_NE(failed[0].find("etl/load/"), std::string::npos) << failed[0];
  auto succeeded = V8TestAttemptLines(*store, "success");
  ASSERT_EQ(succeeded.size(), 3u);  // the call's trace and the publish attempt
  EXPECT_EQ(succeeded.back(), "total 2");
  EXPECT_EQ(V8TestAttemptLines(*store, "running"), std::vector<std::string>{"total 0"});
}

TEST_F(SqliteSchemaV8Test, MigratesAVersionSevenStoreAnsweringAsBefore) {
  const std::vector<Span> written = V8TestSpans();
  std::vector<std::string> attempts_before;
  std::vector<std::string> failed_before;
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(written).ok());
    attempts_before = V8TestAttemptLines(*store, std::nullopt);
    failed_before = V8TestAttemptLines(*store, "failed");
  }
  {
    UndoAttributeSets(path_);
    SqliteConnection raw = RawV8TestConnection();
    ASSERT_TRUE(raw.Exec(std::string(kDropVersionNineColumnsSql) + std::string(kVersionSevenSpansSql)).ok());
    EXPECT_EQ(SchemaSqlOf("spans").find("WITHOUT ROWID"), std::string::npos);
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM spans WHERE session_id IS NOT NULL"), 1);
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM task_attempts WHERE trace_ids = ''"), 0);
  }
  auto stale_reader = SqliteSpanStore::Open(path_, {.read_only = true});
  ASSERT_FALSE(stale_reader.ok());  // a reader asks for the writer's migration first

  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  {
    SqliteConnection raw = RawV8TestConnection();
    EXPECT_EQ(*raw.QueryInt64("PRAGMA user_version"), SqliteSpanStore::kSchemaVersion);
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM spans"), static_cast<std::int64_t>(written.size()));
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM task_attempts WHERE airflow = 0 AND trace_ids = ''"), 1);
    // Version 12: no row keeps its traces; the listing reads them from the parts.
    EXPECT_EQ(*raw.QueryInt64("SELECT count(*) FROM task_attempts WHERE trace_ids <> ''"), 0);
  }
  EXPECT_NE(SchemaSqlOf("spans").find("WITHOUT ROWID"), std::string::npos);
  EXPECT_NE(SchemaSqlOf("task_attempts_by_state").find("WHERE state <> 'success'"), std::string::npos);

  for (std::uint32_t trace : {1u, 2u, 3u}) {
    auto spans = store->GetTrace(TraceIdOf(trace));
    ASSERT_TRUE(spans.ok()) << spans.error().ToString();
    std::vector<const Span*> expected;
    for (const Span& span : written) {
      if (span.trace_id == TraceIdOf(trace)) expected.push_back(&span);
    }
    ASSERT_EQ(spans->size(), expected.size()) << trace;
    for (std::size_t i = 0; i < expected.size(); ++i) ExpectSpanEq((*spans)[i], *expected[i]);
  }
  EXPECT_EQ(V8TestAttemptLines(*store, std::nullopt), attempts_before);
  EXPECT_EQ(V8TestAttemptLines(*store, "failed"), failed_before);
  auto by_operation = store->FindTraceByOperation("op-3");
  ASSERT_TRUE(by_operation.ok()) << by_operation.error().ToString();
  EXPECT_EQ(ToHex(*by_operation), ToHex(TraceIdOf(3)));

  // A span written again after the migration still replaces the copied row.
  Span longer = written[0];
  longer.end_time_unix_nano += 5 * kMs;
  ASSERT_TRUE(store->Write(std::vector<Span>{longer}).ok());
  auto call = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(call.ok());
  ASSERT_EQ(call->size(), 1u);
  ExpectSpanEq(call->front(), longer);
}

}  // namespace
}  // namespace sparktrace::tracing::store
