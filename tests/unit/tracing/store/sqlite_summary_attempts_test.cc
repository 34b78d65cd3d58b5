// The SQLite store's attempts held by their trace's summary (schema version 13,
// index/sqlite_summary_attempts.h): a trace without identity whose summary says all its attempt would
// keeps no task_attempts row, and the task list reads it from the summary exactly as it read the row.
// The list of a store is compared, filter by filter and page by page, with the same store where every
// held attempt is turned back into the row version 12 wrote.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// Turns every held attempt into the task_attempts row version 12 wrote for it, the schema unchanged.
constexpr std::string_view kEveryAttemptARowSql =
    "INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, "
    "trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, "
    "compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at, settles) "
    "SELECT 0, '', '', '', 0, -1, trace_id, root_name, '', start_unix_nano, end_unix_nano, span_count, "
    "error_count, 0, 0, 0, 0, 0, 0, NULL, CASE WHEN error_count > 0 THEN 'failed' ELSE 'success' END, "
    "end_unix_nano, 0 FROM traces WHERE attempt = 1; UPDATE traces SET attempt = NULL";

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

class SqliteSummaryAttemptsTest : public SqliteStoreFileTest {
 protected:
  std::unique_ptr<SqliteSpanStore> Open(const std::string& path, bool read_only = false) {
    auto store = SqliteSpanStore::Open(path, {.read_only = read_only});
    EXPECT_TRUE(store.ok()) << store.error().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  std::int64_t Count(const std::string& path, std::string_view sql) {
    auto db = SqliteConnection::Open(path, SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db.ok());
    auto count = db.ok() ? db->QueryInt64(sql) : Result<std::int64_t>(db.error());
    EXPECT_TRUE(count.ok()) << sql;
    return count.ok() ? *count : -1;
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

  // A copy of the store's file (closed first) where every attempt is a row.
  std::string CopyWithEveryAttemptARow() {
    const std::string copy = (dir_ / "rows.db").string();
    std::filesystem::copy_file(path_, copy);
    auto db = SqliteConnection::Open(copy, SQLITE_OPEN_READWRITE);
    EXPECT_TRUE(db.ok());
    if (db.ok()) {
      EXPECT_TRUE(db->Exec(std::string(kEveryAttemptARowSql)).ok());
    }
    return copy;
  }
};

TEST_F(SqliteSummaryAttemptsTest, ACallPerTraceKeepsNoAttemptRow) {
  {
    auto store = Open(path_);
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
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 2);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM task_attempts"), 1);
  EXPECT_EQ(Count(path_, fmt::format("SELECT count(*) FROM task_attempts WHERE trace_key = x'{}'",
                                     ToHex(TraceIdOf(3)))),
            1);
}

TEST_F(SqliteSummaryAttemptsTest, ListsEveryFilterOrderAndPageAsTheRowsWould) {
  {
    auto store = Open(path_);
    ASSERT_NE(store, nullptr);
    std::vector<Span> spans;
    for (std::uint32_t trace = 1; trace <= 6; ++trace) spans.push_back(Call(trace, trace * 10));
    spans.push_back(Call(7, 35, /*failed=*/true));
    spans.push_back(Application(8, 1, 0, 45, /*running=*/false));
    spans.push_back(Application(9, 1, 0, 15, /*running=*/true));
    spans.push_back(WithIdentity(Call(10, 25), "load", 1));
    Span failed_operation = WithIdentity(
        MakeSpan(11, 1, 0, "spark_connect.operation", kBase + 55 * kMs, kBase + 60 * kMs), "publish", 2);
    failed_operation.status_code = StatusCode::kError;
    spans.push_back(failed_operation);
    spans.push_back(Call(12, 10));  // the same start as trace 1's call
    Span failed_without_identity =
        MakeSpan(13, 1, 0, "spark_connect.operation", kBase + 40 * kMs, kBase + 41 * kMs);
    failed_without_identity.status_code = StatusCode::kError;  // a failed attempt its summary holds
    spans.push_back(failed_without_identity);
    ASSERT_TRUE(store->Write(spans).ok());
  }
  ASSERT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 8);
  const std::string rows_path = CopyWithEveryAttemptARow();
  ASSERT_EQ(Count(rows_path, "SELECT count(*) FROM traces WHERE attempt = 1"), 0);
  auto held = Open(path_, /*read_only=*/true);
  auto rows = Open(rows_path, /*read_only=*/true);
  ASSERT_NE(held, nullptr);
  ASSERT_NE(rows, nullptr);

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

  for (std::size_t i = 0; i < filters.size(); ++i) {
    EXPECT_EQ(Lines(*held, filters[i]), Lines(*rows, filters[i])) << "filter " << i;
  }
  // The comparison is not empty-handed: the whole list holds every attempt once.
  TaskAttemptFilter all;
  all.limit = 100;
  const std::vector<std::string> every = Lines(*held, all);
  ASSERT_EQ(every.size(), 14u);
  EXPECT_EQ(every.back(), "total 13");
  TaskAttemptFilter failed;
  failed.state = "failed";
  EXPECT_EQ(Lines(*held, failed).size(), 3u);  // the held operation and the Airflow one, and the total
}

TEST_F(SqliteSummaryAttemptsTest, AHeldAttemptFollowsItsTrace) {
  auto store = Open(path_);
  ASSERT_NE(store, nullptr);
  const auto only_row = [&store]() -> std::optional<TaskAttemptRow> {
    auto page = store->ListTaskAttempts({});
    EXPECT_TRUE(page.ok());
    if (!page.ok() || page->total != 1 || page->rows.size() != 1) return std::nullopt;
    return page->rows[0];
  };
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0)}).ok());
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 1);

  // A later span of the same trace: recomputed, still all its summary says.
  Span child = MakeSpan(1, 2, 1, "child", kBase, kBase + 5 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{child}).ok());
  auto grown = only_row();
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(grown->span_count, 2);
  EXPECT_EQ(grown->end_unix_nano, kBase + 5 * kMs);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 1);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM task_attempts"), 0);

  // An application under it: the attempt is named by it and running, which only a row can say.
  ASSERT_TRUE(store->Write(std::vector<Span>{Application(1, 3, 1, 1, /*running=*/true)}).ok());
  auto running = only_row();
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->name, "nightly");
  EXPECT_EQ(running->state, "running");
  EXPECT_EQ(running->span_count, 3);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 0);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM task_attempts WHERE airflow = 0"), 1);

  // A span with Airflow identity: the trace is that attempt's; none without identity is left.
  ASSERT_TRUE(store
                  ->Write(std::vector<Span>{WithIdentity(
                      MakeSpan(1, 4, 0, "spark_connect.operation", kBase, kBase + kMs), "load", 1)})
                  .ok());
  auto airflow = only_row();
  ASSERT_TRUE(airflow.has_value());
  EXPECT_TRUE(airflow->airflow);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM task_attempts WHERE airflow = 0"), 0);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 0);
}

TEST_F(SqliteSummaryAttemptsTest, AnAttemptWithARowIsHeldOnceItsSummarySaysAll) {
  auto store = Open(path_);
  ASSERT_NE(store, nullptr);
  // The root arrives after a child that waits for it: the first batch's summary is named after the
  // child, the attempt (without a root) has no name, so it keeps a row.
  Span child = MakeSpan(1, 2, 1, "child", kBase + kMs, kBase + 2 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{child}).ok());
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM task_attempts WHERE airflow = 0"), 1);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 0);
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0)}).ok());
  // The summary and the attempt are named after the root now: the row goes, the summary holds it.
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM task_attempts"), 0);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces WHERE attempt = 1"), 1);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].name, "spark.connect.SparkConnectService/Config");
  EXPECT_EQ(page->rows[0].span_count, 2);
}

TEST_F(SqliteSummaryAttemptsTest, RetentionTakesHeldAttemptsWithTheirTraces) {
  auto store = Open(path_);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Write(std::vector<Span>{Call(1, 0), Call(2, 10), Call(3, 20, /*failed=*/true)}).ok());
  auto retained = store->EnforceRetention(std::chrono::system_clock::now());  // kBase is years ago
  ASSERT_TRUE(retained.ok()) << retained.error().ToString();
  EXPECT_EQ(retained->traces_deleted_by_age, 3u);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 0);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM task_attempts"), 0);
  EXPECT_EQ(Count(path_, "SELECT count(*) FROM traces"), 0);
}

}  // namespace
}  // namespace sparktrace::tracing::store
