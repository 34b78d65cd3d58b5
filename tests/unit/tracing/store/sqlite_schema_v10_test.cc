// The SQLite store's schema version 10 (sqlite_schema.cc, kBinaryIdsSchema): trace and span ids as BLOBs
// in spans and traces, and no index on a trace's end (retention reads traces_by_start). A version-9 file
// migrates to it with every read answering as before, and retention's selections pick exactly the
// traces the plain ones on the end picked.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_attribute_function.h"
#include "tracing/store/sqlite/sqlite_span_store.h"
#include "tracing/store/sqlite/upkeep/sqlite_retention.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// What version 9 made of spans, traces and the trace key of an attempt without identity: ids as
// lower-case hex text; and traces_by_end.
constexpr std::string_view kVersionNineIdsSql = R"sql(
CREATE TABLE spans_v9 (
  trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_span_id TEXT, name TEXT NOT NULL,
  kind INTEGER NOT NULL, start_unix_nano INTEGER NOT NULL, end_unix_nano INTEGER NOT NULL,
  status_code INTEGER NOT NULL, status_message TEXT NOT NULL, trace_state TEXT NOT NULL,
  attributes TEXT NOT NULL, events TEXT NOT NULL, operation_id TEXT, dag_id TEXT, task_id TEXT,
  run_id TEXT, try_number INTEGER, PRIMARY KEY (trace_id, span_id)) WITHOUT ROWID;
INSERT INTO spans_v9 SELECT lower(hex(trace_id)), lower(hex(span_id)),
  CASE WHEN parent_span_id IS NOT NULL THEN lower(hex(parent_span_id)) END, name, kind, start_unix_nano,
  end_unix_nano, status_code, status_message, trace_state, attributes, events, operation_id, dag_id, task_id,
  run_id, try_number FROM spans;
DROP TABLE spans;
ALTER TABLE spans_v9 RENAME TO spans;
CREATE INDEX spans_by_operation ON spans (operation_id) WHERE operation_id IS NOT NULL;
CREATE TABLE traces_v9 (
  trace_id TEXT NOT NULL PRIMARY KEY, root_name TEXT NOT NULL, start_unix_nano INTEGER NOT NULL,
  end_unix_nano INTEGER NOT NULL, span_count INTEGER NOT NULL, error_count INTEGER NOT NULL, dag_id TEXT,
  task_id TEXT, run_id TEXT, try_number INTEGER, awaited_parents TEXT) WITHOUT ROWID;
INSERT INTO traces_v9 SELECT lower(hex(trace_id)), root_name, start_unix_nano, end_unix_nano, span_count,
  error_count, dag_id, task_id, run_id, try_number, awaited_parents FROM traces;
DROP TABLE traces;
ALTER TABLE traces_v9 RENAME TO traces;
CREATE INDEX traces_by_start ON traces (start_unix_nano);
CREATE INDEX traces_by_end ON traces (end_unix_nano);
UPDATE task_attempts SET trace_key = lower(hex(trace_key)) WHERE airflow = 0;
PRAGMA user_version = 9;
)sql";

class SqliteSchemaV10Test : public SqliteStoreFileTest {
 protected:
  SqliteConnection RawV10TestConnection() {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    EXPECT_TRUE(db.ok()) << db.error().ToString();
    EXPECT_TRUE(RegisterAttributeFunction(*db).ok());
    return std::move(db).value();
  }

  std::int64_t CountOf(std::string_view sql) {
    SqliteConnection raw = RawV10TestConnection();
    auto count = raw.QueryInt64(sql);
    EXPECT_TRUE(count.ok()) << sql;
    return count.ok() ? *count : -1;
  }

  // The trace ids (hex) a retention selection picks for ?1 = `parameter`, in its order.
  std::vector<std::string> Selected(std::string_view selection, std::int64_t parameter) {
    SqliteConnection raw = RawV10TestConnection();
    auto stmt = raw.Prepare(fmt::format("SELECT lower(hex(trace_id)) FROM ({})", selection));
    EXPECT_TRUE(stmt.ok()) << selection;
    if (!stmt.ok()) return {};
    stmt->BindInt64(1, parameter);
    auto ids = stmt->CollectText();
    EXPECT_TRUE(ids.ok());
    return ids.ok() ? std::move(ids).value() : std::vector<std::string>{};
  }

  // The query plan's details of `sql`, one line each.
  std::string PlanOf(std::string_view sql) {
    SqliteConnection raw = RawV10TestConnection();
    auto stmt = raw.Prepare(fmt::format("EXPLAIN QUERY PLAN {}", sql));
    EXPECT_TRUE(stmt.ok()) << sql;
    if (!stmt.ok()) return {};
    stmt->BindInt64(1, 1);
    auto details = stmt->CollectText(3);
    EXPECT_TRUE(details.ok());
    return details.ok() ? fmt::format("{}", fmt::join(*details, "\n")) : std::string();
  }
};

// A call per trace, an Airflow attempt with a failed operation and an application, and another that
// succeeded.
std::vector<Span> V10TestSpans() {
  Span call = MakeSpan(1, 1, 0, "spark.connect.SparkConnectService/Config", kBase, kBase + kMs);
  call.attributes = {{"rpc.method", std::string("Config")}};
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
  Span app = MakeSpan(2, 3, 1, "spark.application", kBase + 3 * kMs, kBase + 10 * kMs);
  app.attributes = {{"spark.app.id", std::string("app-20240501-0001")},
                    {"spark.app.name", std::string("load")}};
  Span succeeding = MakeSpan(3, 2, 1, "spark_connect.operation", kBase + 4 * kMs, kBase + 8 * kMs);
  succeeding.attributes = {{"spark.connect.operation_id", std::string("op-3")},
                           {"spark.connect.operation.state", std::string("succeeded")}};
  return {call, task_span(2, "load"), failing, app, task_span(3, "publish"), succeeding};
}

// Every read of the store as comparable text: the traces list (with and without a filter), each trace
// and all of them at once, the task list (all, by state, by trace), operation lookup and search.
std::vector<std::string> V10TestReads(SqliteSpanStore& store) {
  std::vector<std::string> lines;
  const auto list = [&](const TraceFilter& filter) {
    auto traces = store.ListTraces(filter);
    EXPECT_TRUE(traces.ok()) << traces.error().ToString();
    if (!traces.ok()) return;
    for (const TraceSummary& trace : *traces) {
      lines.push_back(fmt::format("trace {} {} {}..{} spans {} errors {} {}/{}/{} {}", ToHex(trace.trace_id),
                                  trace.root_name, trace.start_time_unix_nano, trace.end_time_unix_nano,
                                  trace.span_count, trace.error_count, trace.dag_id, trace.task_id,
                                  trace.run_id, trace.try_number.value_or(-1)));
    }
  };
  list(TraceFilter{});
  list(TraceFilter{.dag_id = "etl", .task_id = "load"});
  std::vector<TraceId> ids;
  for (std::uint32_t trace : {1u, 2u, 3u}) ids.push_back(TraceIdOf(trace));
  const auto spans_of = [&lines](const Result<std::vector<Span>>& spans) {
    EXPECT_TRUE(spans.ok()) << spans.error().ToString();
    if (!spans.ok()) return;
    for (const Span& span : *spans) {
      lines.push_back(fmt::format("span {} {} {} {} {}..{} attributes {}", ToHex(span.trace_id),
                                  ToHex(span.span_id), ToHex(span.parent_span_id), span.name,
                                  span.start_time_unix_nano, span.end_time_unix_nano,
                                  span.attributes.size()));
    }
  };
  for (const TraceId& id : ids) spans_of(store.GetTrace(id));
  spans_of(store.GetTraces(ids));
  const auto attempts = [&](const TaskAttemptFilter& filter) {
    auto page = store.ListTaskAttempts(filter);
    EXPECT_TRUE(page.ok()) << page.error().ToString();
    if (!page.ok()) return;
    for (const TaskAttemptRow& row : page->rows) {
      lines.push_back(fmt::format("attempt {} {}/{}/{} {} {} spans {} errors {} {}..{} {}", row.airflow,
                                  row.key.dag_id, row.key.task_id, row.key.run_id, row.name,
                                  fmt::join(row.trace_ids, ","), row.span_count, row.error_count,
                                  row.start_unix_nano, row.end_unix_nano, row.state));
    }
    lines.push_back(fmt::format("total {}", page->total));
  };
  attempts(TaskAttemptFilter{});
  TaskAttemptFilter failed;
  failed.state = "failed";
  attempts(failed);
  TaskAttemptFilter by_trace;
  by_trace.trace_ids = std::vector<std::string>{ToHex(TraceIdOf(1)), ToHex(TraceIdOf(3))};
  attempts(by_trace);
  for (std::string_view operation : {"op-2", "op-3", "op-4"}) {
    auto found = store.FindTraceByOperation(operation);
    lines.push_back(fmt::format("operation {} {}", operation, found.ok() ? ToHex(*found) : "none"));
  }
  std::string upper = ToHex(TraceIdOf(3));
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](char c) { return static_cast<char>(std::toupper(c)); });
  for (const std::string& text : {upper, std::string("op-2"), std::string("app-20240501-0001"),
                                  std::string("not hex"), ToHex(TraceIdOf(3)).substr(0, 30)}) {
    auto found = store.TracesMatching(text);
    EXPECT_TRUE(found.ok()) << found.error().ToString();
    if (found.ok()) lines.push_back(fmt::format("search {}: {}", text, fmt::join(*found, ",")));
  }
  return lines;
}

TEST_F(SqliteSchemaV10Test, NewStoreKeepsIdsAsBlobsWithoutAnIndexOnTheEnd) {
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Write(V10TestSpans()).ok());
  EXPECT_EQ(CountOf("SELECT count(*) FROM spans WHERE typeof(trace_id) = 'blob' AND length(trace_id) = 16 "
                    "AND typeof(span_id) = 'blob' AND length(span_id) = 8"),
            6);
  EXPECT_EQ(CountOf("SELECT count(*) FROM spans WHERE typeof(parent_span_id) = 'blob'"), 3);
  // The call's attempt is held by its summary (schema version 13), keyed by its trace id, a BLOB too; the
  // Airflow attempts by ''.
  EXPECT_EQ(CountOf(fmt::format("SELECT count(*) FROM traces WHERE attempt = 1 AND trace_id = x'{}'",
                                ToHex(TraceIdOf(1)))),
            1);
  EXPECT_EQ(CountOf("SELECT count(*) FROM task_attempts WHERE airflow = 0"), 0);
  EXPECT_EQ(CountOf("SELECT count(*) FROM task_attempts WHERE airflow = 1 AND trace_key = ''"), 2);
  EXPECT_EQ(CountOf("SELECT count(*) FROM traces WHERE typeof(trace_id) = 'blob'"), 3);
  EXPECT_EQ(CountOf("SELECT count(*) FROM sqlite_schema WHERE name = 'traces_by_end'"), 0);
  // What a sqlite3 shell user writes now.
  EXPECT_EQ(CountOf(fmt::format("SELECT count(*) FROM spans WHERE trace_id = x'{}'", ToHex(TraceIdOf(2)))),
            3);
  const std::vector<std::string> reads = V10TestReads(*store);
  EXPECT_NE(
      std::find(reads.begin(), reads.end(), fmt::format("search app-20240501-0001: {}", ToHex(TraceIdOf(2)))),
      reads.end());
  EXPECT_NE(std::find(reads.begin(), reads.end(), fmt::format("operation op-3 {}", ToHex(TraceIdOf(3)))),
            reads.end());
}

// sparktrace_unhex: hex of either case to its bytes, a BLOB unchanged, anything else NULL (so that a
// search text that is no id matches nothing, and the migration can run over ids already converted).
TEST_F(SqliteSchemaV10Test, UnhexConvertsHexTextOnly) {
  ASSERT_NE(OpenFileStore(), nullptr);
  EXPECT_EQ(
      CountOf("SELECT sparktrace_unhex('0aFF') = x'0aff' AND typeof(sparktrace_unhex('0aFF')) = 'blob'"), 1);
  EXPECT_EQ(CountOf("SELECT length(sparktrace_unhex('')) = 0 AND typeof(sparktrace_unhex('')) = 'blob'"), 1);
  EXPECT_EQ(CountOf("SELECT sparktrace_unhex(x'01ab') = x'01ab'"), 1);
  for (std::string_view not_hex : {"'abc'", "'zz'", "'0g'", "' 1'", "NULL", "12", "1.5"}) {
    EXPECT_EQ(CountOf(fmt::format("SELECT sparktrace_unhex({}) IS NULL", not_hex)), 1) << not_hex;
  }
}

TEST_F(SqliteSchemaV10Test, MigratesAVersionNineStoreAnsweringAsBefore) {
  const std::vector<Span> written = V10TestSpans();
  std::vector<std::string> before;
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(written).ok());
    before = V10TestReads(*store);
  }
  {
    UndoAttributeSets(path_);
    SqliteConnection raw = RawV10TestConnection();
    auto converted = raw.Exec(std::string(kUndoVersionElevenSql) + std::string(kVersionNineIdsSql));
    ASSERT_TRUE(converted.ok()) << converted.error().ToString();
  }
  EXPECT_EQ(CountOf("SELECT count(*) FROM spans WHERE typeof(trace_id) = 'text'"), 6);
  EXPECT_EQ(CountOf("SELECT count(*) FROM traces WHERE typeof(trace_id) = 'text'"), 3);
  EXPECT_EQ(CountOf("SELECT count(*) FROM task_attempts WHERE typeof(trace_key) = 'text'"), 3);
  auto stale_reader = SqliteSpanStore::Open(path_, {.read_only = true});
  ASSERT_FALSE(stale_reader.ok());  // a reader asks for the writer's migration first

  // Retention by age after the migration: the call's trace (ended at kBase + 1 ms) goes, the rest stay.
  StoreOptions options;
  options.max_age = std::chrono::hours(1);
  auto store = OpenFileStore(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(CountOf("PRAGMA user_version"), SqliteSpanStore::kSchemaVersion);
  EXPECT_EQ(CountOf("SELECT count(*) FROM spans WHERE typeof(trace_id) = 'blob' AND typeof(span_id) = 'blob' "
                    "AND (parent_span_id IS NULL OR typeof(parent_span_id) = 'blob')"),
            static_cast<std::int64_t>(written.size()));
  EXPECT_EQ(CountOf("SELECT count(*) FROM traces WHERE typeof(trace_id) = 'blob'"), 3);
  EXPECT_EQ(CountOf("SELECT count(*) FROM task_attempts WHERE airflow = 0 AND typeof(trace_key) = 'blob' "
                    "AND length(trace_key) = 16"),
            1);
  EXPECT_EQ(CountOf("SELECT count(*) FROM sqlite_schema WHERE name = 'traces_by_end'"), 0);
  EXPECT_EQ(CountOf("SELECT count(*) FROM sqlite_schema WHERE name = 'traces_inverted'"), 1);
  EXPECT_EQ(V10TestReads(*store), before);

  // A span written again after the migration replaces the converted row.
  Span longer = written[0];
  longer.end_time_unix_nano += 5 * kMs;
  ASSERT_TRUE(store->Write(std::vector<Span>{longer}).ok());
  auto call = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(call.ok());
  ASSERT_EQ(call->size(), 1u);
  ExpectSpanEq(call->front(), longer);

  const auto now = std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase + 7 * kMs) +
                                                         std::chrono::hours(1));
  auto retention = store->EnforceRetention(now);
  ASSERT_TRUE(retention.ok()) << retention.error().ToString();
  EXPECT_EQ(retention->traces_deleted_by_age, 1u);
  EXPECT_EQ(retention->spans_deleted, 1u);
  EXPECT_FALSE(store->GetTrace(TraceIdOf(1)).ok());
  EXPECT_TRUE(store->GetTrace(TraceIdOf(2)).ok());
  EXPECT_EQ(CountOf("SELECT count(*) FROM task_attempts"), 2);  // the call's attempt went with it
}

// Traces of random starts and lengths (some long, a few ending before they start): each retention
// selection gives exactly what the plain query on the end gives, and neither scans the whole table.
TEST_F(SqliteSchemaV10Test, RetentionSelectionsPickWhatOrderingByTheEndPicks) {
  std::mt19937 random(10);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible
  std::vector<Span> spans;
  for (std::uint32_t trace = 1; trace <= 300; ++trace) {
    const std::uint64_t start = kBase + (random() % 1000) * kMs;
    std::uint64_t end = start + (random() % 5) * kMs;
    if (trace % 17 == 0) end = start + (random() % 400) * kMs;  // long
    if (trace % 29 == 0) end = start - (random() % 300) * kMs;  // an inverted clock
    spans.push_back(MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", start, end));
  }
  {
    auto store = OpenFileStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(spans).ok());
  }
  ASSERT_GT(CountOf("SELECT count(*) FROM traces WHERE end_unix_nano < start_unix_nano"), 5);
  for (std::int64_t limit : {1, 2, 3, 10, 17, 100, 250, 299, 300, 400}) {
    EXPECT_EQ(Selected(kSqliteTracesEndedFirstSql, limit),
              Selected("SELECT trace_id FROM traces ORDER BY end_unix_nano, trace_id LIMIT ?1", limit))
        << limit;
  }
  for (std::uint64_t cutoff_ms : {0, 1, 5, 100, 333, 500, 999, 1200, 2000}) {
    const auto cutoff = static_cast<std::int64_t>(kBase + cutoff_ms * kMs);
    std::vector<std::string> picked = Selected(kSqliteTracesEndedBeforeSql, cutoff);
    std::sort(picked.begin(), picked.end());
    EXPECT_EQ(picked,
              Selected("SELECT trace_id FROM traces WHERE end_unix_nano < ?1 ORDER BY trace_id", cutoff))
        << cutoff_ms;
  }
  for (std::string_view selection :
       {std::string_view(kSqliteTracesEndedFirstSql), std::string_view(kSqliteTracesEndedBeforeSql)}) {
    const std::string plan = PlanOf(selection);
    EXPECT_EQ(plan.find("SCAN traces\n"), std::string::npos) << plan;
    EXPECT_FALSE(plan.ends_with("SCAN traces")) << plan;
    EXPECT_NE(plan.find("traces_by_start"), std::string::npos) << plan;
    EXPECT_NE(plan.find("traces_inverted"), std::string::npos) << plan;
  }
}

}  // namespace
}  // namespace sparktrace::tracing::store
