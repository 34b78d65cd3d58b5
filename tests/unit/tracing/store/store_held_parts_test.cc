// Parts held by summaries (task_index.h, SummaryMayHoldPart; SQLite schema 18,
// sqlite/index/sqlite_summary_attempts.h; PostgreSQL schema 15, postgres/held/postgres_held_parts.h), on
// both backends: a trace whose one part is an Airflow attempt's, and says nothing its summary does not,
// keeps the part in its summary row instead of an attempt_parts row. Held parts answer every read as the rows
// would (the list, its trace filter, each attempt's traces and figures), are released when their trace grows
// a span the summary cannot say, held again when it no longer has one, and leave their attempt with their
// trace. A list bounded to a few trace ids a row merges held parts and rows in id order.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/postgres/held/postgres_held_parts.h"
#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// A span of task `task`'s attempt (try 1 of run manual__1, map index `map_index`).
Span OfTask(Span span, const std::string& task, std::int64_t map_index) {
  span.attributes = {{std::string(tracing::kAirflowDagIdKey), std::string("etl")},
                     {std::string(tracing::kAirflowTaskIdKey), task},
                     {std::string(tracing::kAirflowRunIdKey), std::string("manual__1")},
                     {std::string(tracing::kAirflowTryNumberKey), std::int64_t{1}},
                     {std::string(tracing::kAirflowMapIndexKey), map_index}};
  return span;
}

// A Config call of that attempt, its own trace (no traceparent), `start` after kBase.
Span Call(std::uint32_t trace, std::uint64_t start, const std::string& task, std::int64_t map_index) {
  return OfTask(
      MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", kBase + start, kBase + start + kMs),
      task, map_index);
}

class StoreHeldParts : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  bool Sqlite() const { return GetParam() == StoreBackend::kSqlite; }
  std::unique_ptr<SpanStore> Open() { return backend_.Open(); }
  std::int64_t Count(const std::string& sql) { return backend_.Count(sql); }
  // The summaries that hold a part.
  std::string HeldSql() const { return Sqlite() ? "attempt = 2" : "held_map_index IS NOT NULL"; }
  std::int64_t Held() { return Count("SELECT count(*) FROM traces WHERE " + HeldSql()); }
  std::int64_t PartRows() { return Count("SELECT count(*) FROM attempt_parts"); }

  // What the list answers for `filter`, a line an attempt: its identity, figures, state and traces.
  static std::vector<std::string> Lines(SpanStore& store, TaskAttemptFilter filter) {
    filter.limit = 100;
    auto page = store.ListTaskAttempts(filter);
    EXPECT_TRUE(page.ok());
    std::vector<std::string> lines;
    if (!page.ok()) return lines;
    for (const TaskAttemptRow& row : page->rows) {
      lines.push_back(fmt::format("{} {} {} {} {}..{} spans={} errors={} {} [{}]", row.airflow,
                                  row.key.task_id, row.key.try_number, row.key.map_index, row.start_unix_nano,
                                  row.end_unix_nano, row.span_count, row.error_count, row.state,
                                  fmt::join(row.trace_ids, ",")));
    }
    std::sort(lines.begin(), lines.end());
    lines.push_back(fmt::format("total {}", page->total));
    return lines;
  }

  // Every held part as the attempt_parts row the version before wrote (the tests' undo SQL without its
  // schema changes): what the reads must answer the same for.
  void HeldPartsToRows() {
    backend_.Exec(Sqlite()
                      ? HeldPartsIntoRowsSql("1") +
                            "; UPDATE traces SET attempt = NULL, map_index = NULL WHERE attempt = 2"
                      : fmt::format("INSERT INTO attempt_parts ({}) {}; UPDATE traces SET held_map_index "
                                    "= NULL WHERE held_map_index IS NOT NULL",
                                    kAttemptPartColumns, PostgresHeldPartRowsSql("true")));
  }

  TestBackend backend_;
};

TEST_P(StoreHeldParts, HeldPartsAnswerEveryReadAsTheirRowsWould) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    // A mapped task's two attempts (map indexes 3 and 4), a call per trace, in two batches; a failed
    // call (its summary counts the error span, its part has no failed operation); an operation, which
    // its summary cannot say (a part row); a trace of two calls.
    std::vector<Span> first;
    for (std::uint32_t n = 0; n < 5; ++n) first.push_back(Call(10 + n, n * kMs, "publish", 3));
    first.push_back(Call(20, 7 * kMs, "publish", 4));
    Span failed = Call(21, 8 * kMs, "publish", 4);
    failed.status_code = StatusCode::kError;
    first.push_back(failed);
    ASSERT_TRUE(store->Write(first).ok());
    std::vector<Span> second;
    for (std::uint32_t n = 5; n < 8; ++n) second.push_back(Call(10 + n, n * kMs, "publish", 3));
    second.push_back(OfTask(MakeSpan(30, 1, 0, "spark_connect.operation", kBase + 9 * kMs, kBase + 12 * kMs),
                            "publish", 3));
    second.push_back(Call(31, 13 * kMs, "publish", 4));
    Span child = Call(31, 14 * kMs, "publish", 4);
    child.span_id = SpanIdOf(2);
    child.parent_span_id = SpanIdOf(1);
    second.push_back(child);
    ASSERT_TRUE(store->Write(second).ok());
  }
  // Every call trace holds its part; the operation's is a row.
  EXPECT_EQ(Held(), 11);
  EXPECT_EQ(PartRows(), 1);

  std::vector<TaskAttemptFilter> filters(1);  // everything
  TaskAttemptFilter mapped;
  mapped.map_index = 4;
  filters.push_back(mapped);
  TaskAttemptFilter by_traces;
  by_traces.trace_ids = std::vector<std::string>{ToHex(TraceIdOf(12)), ToHex(TraceIdOf(31)), "not-an-id"};
  filters.push_back(by_traces);
  TaskAttemptFilter by_held_trace;
  by_held_trace.trace_ids = std::vector<std::string>{ToHex(TraceIdOf(21))};
  filters.push_back(by_held_trace);
  TaskAttemptFilter by_task;
  by_task.dag_id = "etl";
  by_task.task_id = "publish";
  filters.push_back(by_task);
  std::vector<std::vector<std::string>> held_answers;
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    for (const TaskAttemptFilter& filter : filters) held_answers.push_back(Lines(*store, filter));
  }
  // The comparison is not empty-handed: both attempts, all their traces.
  ASSERT_EQ(held_answers[0].size(), 3u);
  EXPECT_EQ(held_answers[0][0],
            fmt::format("true publish 1 3 {}..{} spans=9 errors=0 success [{}]", kBase, kBase + 12 * kMs,
                        fmt::join(std::vector<std::string>{ToHex(TraceIdOf(10)), ToHex(TraceIdOf(11)),
                                                           ToHex(TraceIdOf(12)), ToHex(TraceIdOf(13)),
                                                           ToHex(TraceIdOf(14)), ToHex(TraceIdOf(15)),
                                                           ToHex(TraceIdOf(16)), ToHex(TraceIdOf(17)),
                                                           ToHex(TraceIdOf(30))},
                                  ",")));
  EXPECT_EQ(held_answers[2].back(), "total 2");
  EXPECT_EQ(held_answers[3].back(), "total 1");

  HeldPartsToRows();
  EXPECT_EQ(Held(), 0);
  EXPECT_EQ(PartRows(), 12);
  auto store = Open();
  ASSERT_NE(store, nullptr);
  for (std::size_t i = 0; i < filters.size(); ++i) EXPECT_EQ(held_answers[i], Lines(*store, filters[i])) << i;
}

TEST_P(StoreHeldParts, AHeldPartIsReleasedWhenItsTraceGrowsASpanItsSummaryCannotSay) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const auto only_attempt = [&store]() {
    auto page = store->ListTaskAttempts({});
    EXPECT_TRUE(page.ok());
    EXPECT_EQ(page.ok() ? page->total : -1, 1);
    return page.ok() && !page->rows.empty() ? page->rows[0] : TaskAttemptRow{};
  };
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0, "load", -1)}).ok());
  EXPECT_EQ(Held(), 1);
  EXPECT_EQ(PartRows(), 0);
  EXPECT_EQ(only_attempt().span_count, 1);

  // Another call in the trace: still one part the summary says, held again.
  Span second = Call(1, 2 * kMs, "load", -1);
  second.span_id = SpanIdOf(2);
  second.parent_span_id = SpanIdOf(1);
  ASSERT_TRUE(store->Write(std::vector<Span>{second}).ok());
  EXPECT_EQ(Held(), 1);
  EXPECT_EQ(PartRows(), 0);
  TaskAttemptRow row = only_attempt();
  EXPECT_EQ(row.span_count, 2);
  EXPECT_EQ(row.end_unix_nano, kBase + 3 * kMs);

  // A failed operation: the part counts it, the summary cannot; the part is a row from now on.
  Span operation =
      OfTask(MakeSpan(1, 3, 1, "spark_connect.operation", kBase + 4 * kMs, kBase + 6 * kMs), "load", -1);
  operation.status_code = StatusCode::kError;
  operation.attributes.push_back(
      {std::string(tracing::kSparkConnectOperationStateKey), std::string("failed")});
  ASSERT_TRUE(store->Write(std::vector<Span>{operation}).ok());
  EXPECT_EQ(Held(), 0);
  EXPECT_EQ(PartRows(), 1);
  row = only_attempt();
  EXPECT_EQ(row.span_count, 3);
  EXPECT_EQ(row.end_unix_nano, kBase + 6 * kMs);
  EXPECT_EQ(row.trace_ids, std::vector<std::string>{ToHex(TraceIdOf(1))});
  EXPECT_EQ(Count(Sqlite() ? "SELECT count(*) FROM traces WHERE map_index IS NOT NULL"
                           : "SELECT count(*) FROM traces WHERE held_map_index IS NOT NULL"),
            0);
}

TEST_P(StoreHeldParts, RetentionTakesHeldPartsOutOfTheirAttempt) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  // Two calls years ago (kBase), two now, of one attempt.
  const auto now = std::chrono::system_clock::now();
  const auto now_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  std::vector<Span> calls = {Call(1, 0, "load", -1), Call(2, kMs, "load", -1)};
  for (std::uint32_t trace : {3u, 4u}) {
    Span recent = Call(trace, 0, "load", -1);
    recent.start_time_unix_nano = now_ns - (5 - trace) * kMs;
    recent.end_time_unix_nano = recent.start_time_unix_nano + kMs;
    calls.push_back(recent);
  }
  ASSERT_TRUE(store->Write(calls).ok());
  ASSERT_EQ(Held(), 4);
  auto retained = store->EnforceRetention(now);
  ASSERT_TRUE(retained.ok()) << retained.error().ToString();
  EXPECT_EQ(retained->traces_deleted_by_age, 2u);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->total, 1);
  EXPECT_EQ(page->rows[0].span_count, 2);
  EXPECT_EQ(page->rows[0].trace_ids, (std::vector<std::string>{ToHex(TraceIdOf(3)), ToHex(TraceIdOf(4))}));
  EXPECT_EQ(page->rows[0].start_unix_nano, now_ns - 2 * kMs);

  // The last two go: no parts, no attempt.
  retained = store->EnforceRetention(now + std::chrono::hours(24 * 365));
  ASSERT_TRUE(retained.ok()) << retained.error().ToString();
  page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts"), 0);
}

TEST_P(StoreHeldParts, AStoreOfTheVersionBeforeMigratesAndKeepsItsPartRowsUntilTheirTraceChanges) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store
                    ->Write(std::vector<Span>{Call(1, 0, "load", 2), Call(2, kMs, "load", 2),
                                              Call(3, 2 * kMs, "load", 2)})
                    .ok());
  }
  ASSERT_EQ(Held(), 3);
  std::vector<std::string> before;
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    before = Lines(*store, {});
  }
  // What the version before wrote: the parts as rows, no column or index of held parts.
  if (Sqlite()) {
    backend_.Exec(kUndoVersionEighteenSql + "PRAGMA user_version = 17");
  } else {
    auto raw = backend_.Raw();
    ASSERT_TRUE(raw.ok()) << raw.error().ToString();
    UndoPostgresVersionFifteen(*raw);
    ASSERT_TRUE(raw->Exec("UPDATE sparktrace_schema SET version = 14").ok());
  }
  ASSERT_EQ(PartRows(), 3);

  auto store = Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Lines(*store, {}), before);
  EXPECT_EQ(Held(), 0);  // the migration rewrites nothing
  EXPECT_EQ(PartRows(), 3);
  // A new trace of the attempt is held; the rows stay.
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(4, 3 * kMs, "load", 2)}).ok());
  EXPECT_EQ(Held(), 1);
  EXPECT_EQ(PartRows(), 3);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->total, 1);
  EXPECT_EQ(page->rows[0].span_count, 4);
  EXPECT_EQ(page->rows[0].key.map_index, 2);
  EXPECT_EQ(page->rows[0].trace_ids, (std::vector<std::string>{ToHex(TraceIdOf(1)), ToHex(TraceIdOf(2)),
                                                               ToHex(TraceIdOf(3)), ToHex(TraceIdOf(4))}));
}

TEST_P(StoreHeldParts, AListNamesAtMostTheTraceIdsItIsAskedForAndSaysWhenThereAreMore) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  // Calls each their own trace (held parts) and an operation's trace (a part row) between them in id
  // order: the bound takes the first ids of both kinds, merged.
  std::vector<Span> spans;
  for (const std::uint32_t trace : {10u, 11u, 13u, 14u, 15u})
    spans.push_back(Call(trace, trace * kMs, "load", -1));
  spans.push_back(OfTask(MakeSpan(12, 1, 0, "spark_connect.operation", kBase, kBase + 2 * kMs), "load", -1));
  ASSERT_TRUE(store->Write(spans).ok());
  ASSERT_EQ(Held(), 5);
  ASSERT_EQ(PartRows(), 1);
  std::vector<std::string> all;
  for (const std::uint32_t trace : {10u, 11u, 12u, 13u, 14u, 15u}) all.push_back(ToHex(TraceIdOf(trace)));

  const auto listed = [&store](std::size_t max_trace_ids) {
    TaskAttemptFilter filter;
    filter.max_trace_ids = max_trace_ids;
    auto page = store->ListTaskAttempts(filter);
    EXPECT_TRUE(page.ok());
    EXPECT_EQ(page.ok() ? page->rows.size() : 0u, 1u);
    return page.ok() && !page->rows.empty() ? page->rows[0] : TaskAttemptRow{};
  };
  const TaskAttemptRow three = listed(3);
  EXPECT_EQ(three.trace_ids, std::vector<std::string>(all.begin(), all.begin() + 3));
  EXPECT_TRUE(three.trace_ids_truncated);
  EXPECT_EQ(three.span_count, 6);  // the figures are the whole attempt's
  for (const std::size_t bound : {std::size_t{6}, std::size_t{7}, std::size_t{0}}) {
    const TaskAttemptRow row = listed(bound);
    EXPECT_EQ(row.trace_ids, all) << bound;
    EXPECT_FALSE(row.trace_ids_truncated) << bound;
  }
  // The same with every part a row.
  HeldPartsToRows();
  ASSERT_EQ(PartRows(), 6);
  EXPECT_EQ(listed(3).trace_ids, std::vector<std::string>(all.begin(), all.begin() + 3));
  EXPECT_TRUE(listed(5).trace_ids_truncated);
  EXPECT_FALSE(listed(6).trace_ids_truncated);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreHeldParts,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

}  // namespace
}  // namespace sparktrace::tracing::store
