// Attempts held by their trace's summary, on both backends (SQLite schema 13, PostgreSQL schema 7;
// tracing/store/task_index/task_index.h, SummaryHoldsAttempt): a trace without identity whose summary
// says all its attempt would keeps no task_attempts row, and the task list reads it from the summary
// exactly as it read the row. The list of a store is compared, filter by filter and page by page, with
// the same store after every held attempt is turned back into the row the version before wrote.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/span_table_sql.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// Turns every held attempt into the task_attempts row the version before wrote, the schema unchanged.
constexpr std::string_view kEveryAttemptARowSql =
    "INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, "
    "trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, "
    "compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at, settles) "
    "SELECT 0, '', '', '', 0, -1, {0}, {1}, '', start_unix_nano, end_unix_nano, span_count, "
    "error_count, 0, 0, 0, 0, 0, 0, NULL, CASE WHEN error_count > 0 THEN 'failed' ELSE 'success' END, "
    "end_unix_nano, 0 FROM traces WHERE {2}; UPDATE traces SET attempt = NULL WHERE {2}";

Span Call(std::uint32_t trace, std::uint64_t start_ms, bool failed = false) {
  Span call = MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", kBase + start_ms * kMs,
                       kBase + (start_ms + 1) * kMs);
  call.attributes = {{"rpc.method", std::string("Config")}};
  if (failed) call.status_code = StatusCode::kError;
  return call;
}

Span WithIdentity(Span span, std::string task, std::int64_t try_number) {
  span.attributes.push_back({"airflow.dag_id", std::string("etl")});
  span.attributes.push_back({"airflow.task_id", std::move(task)});
  span.attributes.push_back({"airflow.run_id", std::string("r1")});
  span.attributes.push_back({"airflow.try_number", try_number});
  return span;
}

Span Application(std::uint32_t trace, std::uint32_t span, std::uint32_t parent, std::uint64_t start_ms,
                 bool running) {
  Span application = MakeSpan(trace, span, parent, "spark.application", kBase + start_ms * kMs,
                              kBase + (start_ms + 9) * kMs);
  application.attributes = {{"spark.app.id", fmt::format("app-{}", trace)},
                            {"spark.app.name", std::string("nightly")},
                            {"spark.app.status", std::string(running ? "running" : "finished")}};
  return application;
}

std::string RowLine(const TaskAttemptRow& row) {
  return fmt::format("{} {}/{}/{}/{}/{} {} [{}] {}..{} spans {} errors {} open {} {} v{} settled {}",
                     row.airflow, row.key.dag_id, row.key.task_id, row.key.run_id, row.key.try_number,
                     row.key.map_index, row.name, fmt::join(row.trace_ids, ","), row.start_unix_nano,
                     row.end_unix_nano, row.span_count, row.error_count, row.open_count, row.state,
                     row.indexed_unix_nano, row.settled.has_value());
}

class StoreSummaryAttempts : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  bool Sqlite() const { return GetParam() == StoreBackend::kSqlite; }

  std::unique_ptr<SpanStore> Open() { return backend_.Open(); }

  void Exec(const std::string& sql) { backend_.Exec(sql); }
  std::int64_t Count(const std::string& sql) { return backend_.Count(sql); }

  // Attempts without identity held (attempt 1; 2 is an Airflow part held, index/sqlite_summary_attempts.h).
  std::int64_t Held() {
    return Count(Sqlite() ? "SELECT count(*) FROM traces WHERE attempt = 1"
                          : "SELECT count(*) FROM traces WHERE attempt IS NOT NULL");
  }
  std::int64_t RowsWithoutIdentity() { return Count("SELECT count(*) FROM task_attempts WHERE airflow = 0"); }
  // An id as the backend stores a trace key of an attempt without identity.
  std::string TraceKeyLiteral(std::uint32_t trace) const {
    return Sqlite() ? fmt::format("x'{}'", ToHex(TraceIdOf(trace)))
                    : fmt::format("'{}'", ToHex(TraceIdOf(trace)));
  }

  // The page as lines, its total last.
  static std::vector<std::string> Lines(SpanStore& store, const TaskAttemptFilter& filter) {
    auto page = store.ListTaskAttempts(filter);
    EXPECT_TRUE(page.ok()) << page.error().ToString();
    std::vector<std::string> lines;
    if (!page.ok()) return lines;
    for (const TaskAttemptRow& row : page->rows) lines.push_back(RowLine(row));
    lines.push_back(fmt::format("total {}", page->total));
    return lines;
  }

  TestBackend backend_;
};

TEST_P(StoreSummaryAttempts, ACallPerTraceKeepsNoAttemptRow) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0), Call(2, 10), Call(3, 20, /*failed=*/true)}).ok());
    auto page = store->ListTaskAttempts({});
    ASSERT_TRUE(page.ok()) << page.error().ToString();
    ASSERT_EQ(page->total, 3);
    ASSERT_EQ(page->rows.size(), 3u);
    const TaskAttemptRow& newest = page->rows[0];
    EXPECT_FALSE(newest.airflow);
    EXPECT_EQ(newest.trace_ids, std::vector<std::string>{ToHex(TraceIdOf(3))});
    EXPECT_EQ(newest.state, "success");  // a failed call is no failed operation (attempt_parts.cc)
    const TaskAttemptRow& oldest = page->rows[2];
    EXPECT_EQ(oldest.name, "spark.connect.SparkConnectService/Config");
    EXPECT_EQ(oldest.trace_ids, std::vector<std::string>{ToHex(TraceIdOf(1))});
    EXPECT_EQ(oldest.key.try_number, 0);
    EXPECT_EQ(oldest.key.map_index, -1);
    EXPECT_EQ(oldest.start_unix_nano, kBase);
    EXPECT_EQ(oldest.end_unix_nano, kBase + kMs);
    EXPECT_EQ(oldest.span_count, 1);
    EXPECT_EQ(oldest.state, "success");
    EXPECT_FALSE(oldest.settled.has_value());
  }
  // The two plain calls are held by their summaries; the failed one's summary counts an error its
  // attempt does not, so it keeps its row.
  EXPECT_EQ(Held(), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts"), 1);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM task_attempts WHERE trace_key = {}", TraceKeyLiteral(3))),
            1);
}

TEST_P(StoreSummaryAttempts, ListsEveryFilterOrderAndPageAsTheRowsWould) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    std::vector<Span> spans;
    for (std::uint32_t trace = 1; trace <= 6; ++trace)
      spans.push_back(Call(trace, std::uint64_t{trace} * 10));
    spans.push_back(Call(7, 35, /*failed=*/true));
    spans.push_back(Application(8, 1, 0, 45, /*running=*/false));
    spans.push_back(Application(9, 1, 0, 15, /*running=*/true));
    spans.push_back(WithIdentity(Call(10, 25), "load", 1));
    Span failed_operation = WithIdentity(
        MakeSpan(11, 1, 0, "spark_connect.operation", kBase + 55 * kMs, kBase + 60 * kMs), "publish", 2);
    failed_operation.status_code = StatusCode::kError;
    spans.push_back(failed_operation);
    spans.push_back(Call(12, 11));  // (starts are distinct: the list's order of equal ones is unspecified)
    Span failed_without_identity =
        MakeSpan(13, 1, 0, "spark_connect.operation", kBase + 40 * kMs, kBase + 41 * kMs);
    failed_without_identity.status_code = StatusCode::kError;  // a failed attempt its summary holds
    spans.push_back(failed_without_identity);
    ASSERT_TRUE(store->Write(spans).ok());
  }
  ASSERT_EQ(Held(), 8);
  auto store = Open();
  ASSERT_NE(store, nullptr);

  std::vector<TaskAttemptFilter> filters;
  for (TaskAttemptOrder order : {TaskAttemptOrder::kNewestFirst, TaskAttemptOrder::kOldestFirst,
                                 TaskAttemptOrder::kCostDescending, TaskAttemptOrder::kCostAscending}) {
    for (std::size_t offset = 0; offset < 14; offset += 3) {
      TaskAttemptFilter page;
      page.order = order;
      page.limit = 3;
      page.offset = offset;
      filters.push_back(page);
    }
  }
  for (const char* state : {"success", "failed", "running"}) {
    TaskAttemptFilter by_state;
    by_state.state = state;
    filters.push_back(by_state);
  }
  TaskAttemptFilter window;
  window.since_unix_nano = kBase + 20 * kMs;
  window.until_unix_nano = kBase + 50 * kMs;
  filters.push_back(window);
  TaskAttemptFilter airflow_only;
  airflow_only.airflow_only = true;
  filters.push_back(airflow_only);
  TaskAttemptFilter by_dag;
  by_dag.dag_id = "etl";
  filters.push_back(by_dag);
  TaskAttemptFilter empty_identity;  // what only an attempt without identity has
  empty_identity.dag_id = "";
  empty_identity.try_number = 0;
  empty_identity.map_index = -1;
  filters.push_back(empty_identity);
  TaskAttemptFilter by_traces;
  by_traces.trace_ids =
      std::vector<std::string>{ToHex(TraceIdOf(2)), ToHex(TraceIdOf(7)), ToHex(TraceIdOf(10)), "not-an-id"};
  filters.push_back(by_traces);
  TaskAttemptFilter no_traces;
  no_traces.trace_ids = std::vector<std::string>{};
  filters.push_back(no_traces);

  std::vector<std::vector<std::string>> held_pages;
  held_pages.reserve(filters.size());
  for (const TaskAttemptFilter& filter : filters) held_pages.push_back(Lines(*store, filter));
  // The comparison is not empty-handed: the whole list holds every attempt once.
  TaskAttemptFilter all;
  all.limit = 100;
  const std::vector<std::string> every = Lines(*store, all);
  ASSERT_EQ(every.size(), 14u);
  EXPECT_EQ(every.back(), "total 13");
  TaskAttemptFilter failed;
  failed.state = "failed";
  EXPECT_EQ(Lines(*store, failed).size(), 3u);  // the held operation and the Airflow one, and the total

  // A call's name is kept coded (StoredName: SQLite schema 15, PostgreSQL trace schema 10): the row
  // takes it whole.
  Exec(fmt::format(
      kEveryAttemptARowSql, Sqlite() ? std::string("trace_id") : TraceHexSql("trace_id"),
      NameOfStoredSql(Sqlite() ? SpanSqlDialect::kSqlite : SpanSqlDialect::kPostgres, "root_name"),
      // SQLite's summaries also hold Airflow parts (attempt 2, index/sqlite_summary_attempts.h): they stay.
      Sqlite() ? "attempt = 1" : "attempt IS NOT NULL"));
  ASSERT_EQ(Held(), 0);
  ASSERT_EQ(RowsWithoutIdentity(), 11);
  for (std::size_t i = 0; i < filters.size(); ++i) {
    EXPECT_EQ(held_pages[i], Lines(*store, filters[i])) << "filter " << i;
  }
}

TEST_P(StoreSummaryAttempts, AHeldAttemptFollowsItsTrace) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const auto only_row = [&store]() -> std::optional<TaskAttemptRow> {
    auto page = store->ListTaskAttempts({});
    EXPECT_TRUE(page.ok());
    if (!page.ok() || page->total != 1 || page->rows.size() != 1) return std::nullopt;
    return page->rows[0];
  };
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0)}).ok());
  EXPECT_EQ(Held(), 1);

  // A later span of the same trace: recomputed, still all its summary says.
  Span child = MakeSpan(1, 2, 1, "child", kBase, kBase + 5 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{child}).ok());
  auto grown = only_row();
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(grown->span_count, 2);
  EXPECT_EQ(grown->end_unix_nano, kBase + 5 * kMs);
  EXPECT_EQ(Held(), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts"), 0);

  // An application under it: the attempt is named by it and running, which only a row can say.
  ASSERT_TRUE(store->Write(std::vector<Span>{Application(1, 3, 1, 1, /*running=*/true)}).ok());
  auto running = only_row();
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->name, "nightly");
  EXPECT_EQ(running->state, "running");
  EXPECT_EQ(running->span_count, 3);
  EXPECT_EQ(Held(), 0);
  EXPECT_EQ(RowsWithoutIdentity(), 1);

  // A span with Airflow identity: the trace is that attempt's; none without identity is left.
  ASSERT_TRUE(store
                  ->Write(std::vector<Span>{WithIdentity(
                      MakeSpan(1, 4, 0, "spark_connect.operation", kBase, kBase + kMs), "load", 1)})
                  .ok());
  auto airflow = only_row();
  ASSERT_TRUE(airflow.has_value());
  EXPECT_TRUE(airflow->airflow);
  EXPECT_EQ(RowsWithoutIdentity(), 0);
  EXPECT_EQ(Held(), 0);
}

TEST_P(StoreSummaryAttempts, AnAttemptWithARowIsHeldOnceItsSummarySaysAll) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  // The root arrives after a child that waits for it: the first batch's summary is named after the
  // child, the attempt (without a root) has no name, so it keeps a row.
  Span child = MakeSpan(1, 2, 1, "child", kBase + kMs, kBase + 2 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{child}).ok());
  EXPECT_EQ(RowsWithoutIdentity(), 1);
  EXPECT_EQ(Held(), 0);
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0)}).ok());
  // The summary and the attempt are named after the root now: the row goes, the summary holds it.
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts"), 0);
  EXPECT_EQ(Held(), 1);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].name, "spark.connect.SparkConnectService/Config");
  EXPECT_EQ(page->rows[0].span_count, 2);
}

TEST_P(StoreSummaryAttempts, RetentionTakesHeldAttemptsWithTheirTraces) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0), Call(2, 10), Call(3, 20, /*failed=*/true)}).ok());
  auto retained = store->EnforceRetention(std::chrono::system_clock::now());  // kBase is years ago
  ASSERT_TRUE(retained.ok()) << retained.error().ToString();
  EXPECT_EQ(retained->traces_deleted_by_age, 3u);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM task_attempts"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM traces"), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreSummaryAttempts,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

}  // namespace
}  // namespace sparktrace::tracing::store
