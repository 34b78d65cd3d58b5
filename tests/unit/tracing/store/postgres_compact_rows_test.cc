// The PostgreSQL store's schema version 3 (tracing/store/postgres/postgres_schema.cc): a version-2
// database (hex text ids, JSON attributes, a part row for a trace without identity) migrated and read
// back exactly, its JSON rows next to new compact ones, its airflow.task span still replaced only by the
// same attempt's report, its attempts indexed and found without their redundant part rows.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

class PostgresCompactRowsTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(StoreBackend::kPostgres)) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  std::int64_t CompactRowsCount(PgConnection& db, const std::string& sql) {
    auto result = db.Exec(sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.error().ToString();
    return result.ok() ? result->Int64(0, 0) : -1;
  }

  TestBackend backend_;
};

// A span as version 2 stored it: hex ids, attributes as JSON text, the identity columns copied out.
void InsertVersionTwoSpan(PgConnection& db, const Span& span) {
  const StoredSpanRow row = ToStoredRow(span, AttributeEncoding::kJson);
  const auto text = [](const std::string* value) -> PgParam {
    return value == nullptr ? PgParam{} : PgParam{*value};
  };
  auto inserted = db.Query(
      "INSERT INTO spans (trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, "
      "status_code, status_message, trace_state, attributes, events, operation_id, session_id, dag_id, "
      "task_id, run_id, try_number) VALUES ($1, $2, $3, $4, $5::integer, $6::bigint, $7::bigint, "
      "$8::integer, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18::bigint)",
      {row.trace_id, row.span_id, row.parent_span_id, std::string(row.name), std::to_string(row.kind),
       std::to_string(row.start_unix_nano), std::to_string(row.end_unix_nano),
       std::to_string(row.status_code), std::string(row.status_message), std::string(row.trace_state),
       row.attributes, row.events_json, text(row.operation_id), text(row.session_id), text(row.dag_id),
       text(row.task_id), text(row.run_id),
       row.try_number ? PgParam{std::to_string(*row.try_number)} : PgParam{}});
  ASSERT_TRUE(inserted.ok()) << inserted.error().ToString();
}

TEST_F(PostgresCompactRowsTest, MigratesAVersionTwoDatabaseAndReadsItsRowsBackExactly) {
  Span task = MakeSpan(1, 1, 0, "airflow.task", kBase, kBase + 10 * kMs);
  task.attributes = {{"airflow.dag_id", std::string("etl")},
                     {"airflow.task_id", std::string("publish")},
                     {"airflow.run_id", std::string("scheduled__1")},
                     {"airflow.try_number", std::int64_t{2}},
                     {"airflow.map_index", std::int64_t{3}}};
  Span job = MakeSpan(1, 2, 1, "spark.job", kBase + kMs, kBase + 4 * kMs);
  job.attributes = {{"spark.job.status", std::string("running")},
                    {"spark.phase.duration_ms", 12.75},
                    {"spark.sql.job_ids", std::vector<std::string>{"4", "5"}},
                    {"spark.connect.reattachable", true},
                    {"negative", std::int64_t{-7}},
                    {"free.text", std::string("caf\xc3\xa9 \"quoted\"\ttab\\")}};
  job.events = {SpanEvent{"checkpoint", kBase + 2 * kMs, {{"rows", std::int64_t{10}}, {"ok", true}}}};
  job.status_code = StatusCode::kError;
  job.status_message = "lost executor";
  Span call = MakeSpan(2, 1, 0, "spark_connect.rpc/Config", kBase, kBase + kMs);
  call.attributes = {{"rpc.method", std::string("Config")},
                     {"spark.connect.session_id", std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")}};
  call.trace_state = "vendor=1";
  const std::vector<Span> written = {task, job, call};

  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  ASSERT_TRUE(MigratePostgresTo(*raw, "test database", 2).ok());
  for (const Span& span : written) InsertVersionTwoSpan(*raw, span);
  // The summaries and the call's attempt as version 2 indexed them (a part row and its attempt row).
  ASSERT_TRUE(
      raw->Exec(fmt::format(
                    "INSERT INTO traces VALUES ('{0}', 'airflow.task', {2}, {3}, 2, 1, 'etl', 'publish', "
                    "'scheduled__1', 2, 900), ('{1}', 'spark_connect.rpc/Config', {2}, {4}, 1, 0, NULL, "
                    "NULL, NULL, NULL, 400);"
                    "INSERT INTO attempt_parts VALUES (0, '', '', '', 0, -1, '{1}', '{1}', "
                    "'spark_connect.rpc/Config', NULL, {2}, {4}, 1, 0, 0, 0, 0, 0, 0, 0, NULL, -1);"
                    "INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, "
                    "trace_key, name, trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, "
                    "open_count, resource_wait_ms, compute_ms, io_write_ms, idle_ms, finding_count, state) "
                    "VALUES (0, '', '', '', 0, -1, '{1}', 'spark_connect.rpc/Config', '{1}', {2}, {4}, 1, 0, "
                    "0, 0, 0, 0, 0, 0, 'success')",
                    ToHex(TraceIdOf(1)), ToHex(TraceIdOf(2)), kBase, kBase + 10 * kMs, kBase + kMs))
          .ok());
  auto stale_reader = OpenSpanStore(backend_.location(), {.read_only = true});
  ASSERT_FALSE(stale_reader.ok());

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*PostgresSchemaVersion(*raw), kPostgresSchemaVersion);
  EXPECT_EQ(CompactRowsCount(*raw, "SELECT count(*) FROM attempt_parts"), 0);  // the call's part went
  EXPECT_EQ(CompactRowsCount(*raw, "SELECT count(*) FROM spans WHERE task_map_index = 3"), 1);
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
  auto listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(TraceHexes(*listed), (std::vector<std::string>{ToHex(TraceIdOf(2)), ToHex(TraceIdOf(1))}));
  auto matching = store->TracesMatching(ToHex(TraceIdOf(2)));
  ASSERT_TRUE(matching.ok()) << matching.error().ToString();
  EXPECT_EQ(*matching, std::vector<std::string>{ToHex(TraceIdOf(2))});

  // The call's attempt, with no part row left: found by its trace, refreshed when its trace grows.
  TaskAttemptFilter by_trace;
  by_trace.trace_ids = std::vector<std::string>{ToHex(TraceIdOf(2))};
  Span second_call = MakeSpan(2, 2, 1, "spark_connect.rpc/Config", kBase + kMs, kBase + 3 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{second_call}).ok());
  auto call_page = store->ListTaskAttempts(by_trace);
  ASSERT_TRUE(call_page.ok()) << call_page.error().ToString();
  ASSERT_EQ(call_page->rows.size(), 1u);
  EXPECT_FALSE(call_page->rows[0].airflow);
  EXPECT_EQ(call_page->rows[0].span_count, 2);
  EXPECT_EQ(call_page->rows[0].end_unix_nano, kBase + 3 * kMs);
  EXPECT_EQ(CompactRowsCount(*raw, "SELECT count(*) FROM attempt_parts"), 0);

  // New spans in the old trace (compact rows next to JSON ones): another attempt's report with the task
  // span's id changes nothing, the same attempt's later report replaces the JSON row.
  Span stage = MakeSpan(1, 3, 2, "spark.stage", kBase + 2 * kMs, kBase + 3 * kMs);
  stage.attributes = {{"spark.stage.id", std::int64_t{0}}};
  Span other_map = task;
  other_map.attributes.back() = {"airflow.map_index", std::int64_t{4}};
  other_map.end_time_unix_nano = kBase + 30 * kMs;
  ASSERT_TRUE(store->Write(std::vector<Span>{stage, other_map}).ok());
  Span task_later = task;
  task_later.end_time_unix_nano = kBase + 20 * kMs;
  ASSERT_TRUE(store->Write(std::vector<Span>{task_later}).ok());
  // (compact, or shared: the task span's attributes share a set from its second report on)
  EXPECT_EQ(CompactRowsCount(*raw, "SELECT count(*) FROM spans WHERE get_byte(attributes, 0) IN (1, 2)"), 3);
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
  ASSERT_TRUE(spans.ok()) << spans.error().ToString();
  ASSERT_EQ(spans->size(), 3u);
  ExpectSpanEq((*spans)[0], task_later);
  ExpectSpanEq((*spans)[1], job);
  ExpectSpanEq((*spans)[2], stage);
}

// Migration 3 rewrites spans, which takes as long as the table is large: it runs without the statement
// timeout that bounds the session's writes, and the session gets its timeout back. Its first step is
// made to wait, for longer than that timeout, on another session's transaction that creates a table of
// the same name (uncommitted, it is invisible to the migration's check for foreign tables); the timeout
// is long enough for any other statement of the session on a loaded machine (at 1 ms, the session's
// own reads were cancelled now and then under a parallel test run).
TEST_F(PostgresCompactRowsTest, AMigrationRunsWithoutTheSessionsStatementTimeout) {
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  auto blocker = backend_.Raw();
  ASSERT_TRUE(blocker.ok()) << blocker.error().ToString();
  auto watcher = backend_.Raw();
  ASSERT_TRUE(watcher.ok()) << watcher.error().ToString();
  auto pid = raw->Exec("SELECT pg_backend_pid()");
  ASSERT_TRUE(pid.ok()) << pid.error().ToString();
  const std::string migration_pid(pid->Text(0, 0));
  ASSERT_TRUE(raw->Exec("SET statement_timeout = '200ms'").ok());
  auto slow = raw->Exec("SELECT pg_sleep(1)");
  ASSERT_FALSE(slow.ok());  // the timeout bites a statement of the session
  ASSERT_TRUE(blocker->Exec("BEGIN; CREATE TABLE spans (held integer)").ok());

  std::optional<Result<void>> migrated;
  std::atomic<bool> migration_ended{false};
  std::thread migration([&] {
    migrated = MigratePostgresTo(*raw, "test database", kPostgresSchemaVersion);
    migration_ended = true;
  });
  // Until the migration has waited for the lock well past its session's timeout (bounded: a migration
  // that was cancelled, or never waits, ends the polling).
  const std::string waited_sql = fmt::format(
      "SELECT clock_timestamp() - query_start > interval '600 ms' FROM pg_stat_activity WHERE pid = {} "
      "AND wait_event_type = 'Lock'",
      migration_pid);
  bool waited_past_timeout = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!waited_past_timeout && !migration_ended && std::chrono::steady_clock::now() < deadline) {
    auto waiting = watcher->Exec(waited_sql);
    if (!waiting.ok()) break;
    waited_past_timeout = waiting->rows() == 1 && waiting->Text(0, 0) == "t";
  }
  EXPECT_TRUE(blocker->Exec("ROLLBACK").ok());
  migration.join();
  EXPECT_TRUE(waited_past_timeout);
  ASSERT_TRUE(migrated.has_value());
  ASSERT_TRUE(migrated->ok()) << migrated->error().ToString();
  auto timeout = raw->Exec("SHOW statement_timeout");
  ASSERT_TRUE(timeout.ok()) << timeout.error().ToString();
  EXPECT_EQ(timeout->Text(0, 0), "200ms");
  EXPECT_EQ(*PostgresSchemaVersion(*raw), kPostgresSchemaVersion);
}

}  // namespace
}  // namespace sparktrace::tracing::store
