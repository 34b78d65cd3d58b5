#include "tracing/sqlite_span_store.h"

#include <gtest/gtest.h>
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

#include "tracing/sqlite_connection.h"

namespace sparktrace::tracing {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kBase = 1'714'564'800'000'000'000ULL;  // 2024-05-01T12:00:00Z
constexpr std::uint64_t kMs = 1'000'000;

TraceId TraceIdOf(std::uint32_t n) {
  TraceId id{};
  id[0] = 0xab;
  for (int i = 0; i < 4; ++i) id[15 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

SpanId SpanIdOf(std::uint32_t n) {
  SpanId id{};
  id[0] = 0xcd;
  for (int i = 0; i < 4; ++i) id[7 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

// span `span` of trace `trace`; parent 0 means a root.
Span MakeSpan(std::uint32_t trace, std::uint32_t span, std::uint32_t parent, std::string name,
              std::uint64_t start, std::uint64_t end) {
  Span result;
  result.trace_id = TraceIdOf(trace);
  result.span_id = SpanIdOf(span);
  if (parent != 0) result.parent_span_id = SpanIdOf(parent);
  result.name = std::move(name);
  result.start_time_unix_nano = start;
  result.end_time_unix_nano = end;
  return result;
}

void ExpectAttributesEq(const std::vector<Attribute>& actual, const std::vector<Attribute>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].key, expected[i].key) << "attribute " << i;
    EXPECT_EQ(actual[i].value.index(), expected[i].value.index()) << expected[i].key << ": value kind";
    EXPECT_TRUE(actual[i].value == expected[i].value) << expected[i].key << ": value";
  }
}

void ExpectSpanEq(const Span& actual, const Span& expected) {
  EXPECT_EQ(ToHex(actual.trace_id), ToHex(expected.trace_id));
  EXPECT_EQ(ToHex(actual.span_id), ToHex(expected.span_id));
  EXPECT_EQ(ToHex(actual.parent_span_id), ToHex(expected.parent_span_id));
  EXPECT_EQ(actual.trace_state, expected.trace_state);
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.kind, expected.kind);
  EXPECT_EQ(actual.start_time_unix_nano, expected.start_time_unix_nano);
  EXPECT_EQ(actual.end_time_unix_nano, expected.end_time_unix_nano);
  EXPECT_EQ(actual.status_code, expected.status_code);
  EXPECT_EQ(actual.status_message, expected.status_message);
  ExpectAttributesEq(actual.attributes, expected.attributes);
  ASSERT_EQ(actual.events.size(), expected.events.size());
  for (std::size_t i = 0; i < expected.events.size(); ++i) {
    EXPECT_EQ(actual.events[i].name, expected.events[i].name);
    EXPECT_EQ(actual.events[i].time_unix_nano, expected.events[i].time_unix_nano);
    ExpectAttributesEq(actual.events[i].attributes, expected.events[i].attributes);
  }
}

std::vector<std::string> TraceHexes(const std::vector<TraceSummary>& summaries) {
  std::vector<std::string> hexes;
  hexes.reserve(summaries.size());
  for (const auto& summary : summaries) hexes.push_back(ToHex(summary.trace_id));
  return hexes;
}

class SqliteSpanStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    // Unique per test and per process, so parallel ctest runs do not share files.
    dir_ = fs::path(testing::TempDir()) /
           ("sparktrace_store_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "traces.db").string();
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::unique_ptr<SqliteSpanStore> OpenStore(SqliteSpanStoreOptions options = {}) {
    auto store = SqliteSpanStore::Open(path_, options);
    EXPECT_TRUE(store.ok()) << store.error().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  std::unique_ptr<SqliteSpanStore> OpenReader() {
    SqliteSpanStoreOptions options;
    options.read_only = true;
    return OpenStore(options);
  }

  // A plain connection, to look at or tamper with the file the way another program would.
  SqliteConnection Raw() {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    EXPECT_TRUE(db.ok());
    return std::move(db).value();
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(SqliteSpanStoreTest, RoundTripsEveryField) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);

  Span root = MakeSpan(1, 1, 0, "airflow.task", kBase, kBase + 900 * kMs);
  root.kind = SpanKind::kServer;
  root.trace_state = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";
  root.status_code = StatusCode::kOk;
  root.attributes = {{"airflow.dag_id", std::string("etl")}, {"airflow.try_number", std::int64_t{2}}};

  Span child = MakeSpan(1, 2, 1, "ExecutePlan ✓", kBase + 10 * kMs, kBase + 800 * kMs);
  child.kind = SpanKind::kClient;
  child.status_code = StatusCode::kError;
  child.status_message = "AnalysisException: [TABLE_OR_VIEW_NOT_FOUND] \"x\"";
  child.attributes = {
      {"spark.connect.operation_id", std::string("0b9a5e2c-op")},
      {"text.unicode", std::string("zürich \xe2\x86\x92 東京")},
      {"text.empty", std::string()},
      {"text.nul", std::string("a\0b", 3)},
      {"int.max", std::numeric_limits<std::int64_t>::max()},
      {"int.min", std::numeric_limits<std::int64_t>::min()},
      {"int.zero", std::int64_t{0}},
      {"double.whole", 3.0},
      {"double.fraction", 0.1},
      {"double.tiny", -2.5e-300},
      {"bool.true", true},
      {"bool.false", false},
      {"list", std::vector<std::string>{"a", "b c", ""}},
      {"list.empty", std::vector<std::string>{}},
  };
  child.events = {
      SpanEvent{"exception", kBase + 700 * kMs,
                {{"exception.type", std::string("AnalysisException")}, {"exception.escaped", false}}},
      SpanEvent{"first_response", kBase + 20 * kMs, {}},
  };

  auto written = store->Write(std::vector<Span>{root, child});
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  EXPECT_EQ(written->spans_written, 2u);
  EXPECT_EQ(written->traces_touched, 1u);

  auto spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok()) << spans.error().ToString();
  ASSERT_EQ(spans->size(), 2u);
  ExpectSpanEq((*spans)[0], root);
  ExpectSpanEq((*spans)[1], child);
}

TEST_F(SqliteSpanStoreTest, NonFiniteDoublesComeBackAsNaN) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Span span = MakeSpan(1, 1, 0, "s", kBase, kBase + 1);
  span.attributes = {{"nan", std::numeric_limits<double>::quiet_NaN()},
                     {"inf", std::numeric_limits<double>::infinity()}};
  ASSERT_TRUE(store->Write(std::vector<Span>{span}).ok());
  auto spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ((*spans)[0].attributes.size(), 2u);
  for (const auto& attribute : (*spans)[0].attributes) {
    const auto* value = std::get_if<double>(&attribute.value);
    ASSERT_NE(value, nullptr) << attribute.key;
    EXPECT_TRUE(std::isnan(*value)) << attribute.key;
  }
}

TEST_F(SqliteSpanStoreTest, StoresWellKnownAttributesInQueryableColumns) {
  auto store = OpenStore();
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
  auto stmt = raw.Prepare(
      "SELECT operation_id, session_id, dag_id, task_id, run_id, try_number, typeof(try_number), "
      "json_extract(attributes, '$.\"airflow.dag_id\"') FROM spans");
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
  EXPECT_EQ(stmt->ColumnText(7), "etl");
}

TEST_F(SqliteSpanStoreTest, WritesTenThousandSpansInOneBatch) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  constexpr std::uint32_t kTraces = 100;
  constexpr std::uint32_t kSpansPerTrace = 100;
  std::vector<Span> spans;
  spans.reserve(std::size_t{kTraces} * kSpansPerTrace);
  for (std::uint32_t t = 1; t <= kTraces; ++t) {
    for (std::uint32_t s = 1; s <= kSpansPerTrace; ++s) {
      const std::uint64_t start = kBase + std::uint64_t{t} * 1000 * kMs + s * kMs;
      Span span = MakeSpan(t, s, s == 1 ? 0 : 1, s == 1 ? "airflow.task" : "ExecutePlan", start, start + kMs / 2);
      // Attributes the size of a real operation span.
      span.attributes = {{"spark.connect.operation_id", "op-" + std::to_string(t) + "-" + std::to_string(s)},
                         {"spark.connect.session_id", std::string("8c7d2c1e-5b7f-4b7e-9e0a-3c1d2e4f5a6b")},
                         {"airflow.dag_id", std::string("etl_daily")},
                         {"airflow.task_id", std::string("load_orders")},
                         {"airflow.run_id", std::string("scheduled__2024-05-01T00:00:00+00:00")},
                         {"airflow.try_number", std::int64_t{1}},
                         {"rpc.method", std::string("ExecutePlan")},
                         {"spark.connect.response.rows", std::int64_t{s} * 10}};
      spans.push_back(std::move(span));
    }
  }

  const auto started = std::chrono::steady_clock::now();
  auto written = store->Write(spans);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  const double seconds = std::chrono::duration<double>(elapsed).count();
  std::cout << "[ perf     ] wrote " << spans.size() << " spans in " << seconds * 1000 << " ms ("
            << static_cast<std::uint64_t>(static_cast<double>(spans.size()) / seconds) << " spans/s)\n";
  RecordProperty("spans_per_second", static_cast<int>(static_cast<double>(spans.size()) / seconds));
  EXPECT_EQ(written->spans_written, spans.size());
  EXPECT_EQ(written->traces_touched, kTraces);

  TraceFilter all;
  all.limit = 0;
  auto listed = store->ListTraces(all);
  ASSERT_TRUE(listed.ok()) << listed.error().ToString();
  ASSERT_EQ(listed->size(), kTraces);
  for (const auto& summary : *listed) {
    EXPECT_EQ(summary.span_count, kSpansPerTrace);
    EXPECT_EQ(summary.root_name, "airflow.task");
  }
  auto trace = store->GetTrace(TraceIdOf(42));
  ASSERT_TRUE(trace.ok());
  ASSERT_EQ(trace->size(), kSpansPerTrace);
  for (std::size_t i = 1; i < trace->size(); ++i) {
    EXPECT_LT((*trace)[i - 1].start_time_unix_nano, (*trace)[i].start_time_unix_nano);
  }
  auto found = store->FindTraceByOperation("op-77-50");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(ToHex(*found), ToHex(TraceIdOf(77)));
}

TEST_F(SqliteSpanStoreTest, ListsNewestFirstWithEachFilter) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  struct Row {
    std::uint32_t trace;
    const char* dag;
    const char* task;
    const char* run;
    std::uint64_t start_ms;
  };
  const Row rows[] = {
      {1, "etl", "extract", "r1", 100}, {2, "etl", "load", "r1", 200},  {3, "etl", "load", "r2", 300},
      {4, "ml", "train", "r1", 400},    {5, nullptr, nullptr, nullptr, 500},
  };
  std::vector<Span> spans;
  for (const Row& row : rows) {
    Span span = MakeSpan(row.trace, 1, 0, "task", kBase + row.start_ms * kMs, kBase + (row.start_ms + 50) * kMs);
    if (row.dag != nullptr) {
      span.attributes = {{"airflow.dag_id", std::string(row.dag)},
                         {"airflow.task_id", std::string(row.task)},
                         {"airflow.run_id", std::string(row.run)}};
    }
    spans.push_back(span);
  }
  ASSERT_TRUE(store->Write(spans).ok());

  const auto list = [&](const TraceFilter& filter) {
    auto listed = store->ListTraces(filter);
    EXPECT_TRUE(listed.ok()) << listed.error().ToString();
    return listed.ok() ? TraceHexes(*listed) : std::vector<std::string>{};
  };
  const auto ids = [](std::initializer_list<std::uint32_t> traces) {
    std::vector<std::string> hexes;
    for (auto t : traces) hexes.push_back(ToHex(TraceIdOf(t)));
    return hexes;
  };

  EXPECT_EQ(list({}), ids({5, 4, 3, 2, 1}));
  EXPECT_EQ(list({.dag_id = "etl"}), ids({3, 2, 1}));
  EXPECT_EQ(list({.dag_id = "etl", .task_id = "load"}), ids({3, 2}));
  EXPECT_EQ(list({.dag_id = "etl", .task_id = "load", .run_id = "r1"}), ids({2}));
  EXPECT_EQ(list({.task_id = "train"}), ids({4}));
  EXPECT_EQ(list({.run_id = "r1"}), ids({4, 2, 1}));
  EXPECT_EQ(list({.since_unix_nano = kBase + 300 * kMs}), ids({5, 4, 3}));
  EXPECT_EQ(list({.limit = 2}), ids({5, 4}));
  EXPECT_EQ(list({.dag_id = "etl", .since_unix_nano = kBase + 150 * kMs, .limit = 1}), ids({3}));
  EXPECT_EQ(list({.dag_id = "nope"}), ids({}));

  auto etl = store->ListTraces({.dag_id = "etl", .task_id = "load", .run_id = "r2"});
  ASSERT_TRUE(etl.ok());
  ASSERT_EQ(etl->size(), 1u);
  EXPECT_EQ((*etl)[0].dag_id, "etl");
  EXPECT_EQ((*etl)[0].task_id, "load");
  EXPECT_EQ((*etl)[0].run_id, "r2");
  EXPECT_FALSE((*etl)[0].try_number.has_value());
}

TEST_F(SqliteSpanStoreTest, SummaryFollowsLateRootErrorsAndIdentity) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  // An Airflow task's children end, and are exported, before its root.
  Span child_ok = MakeSpan(1, 2, 1, "ExecutePlan", kBase + 10 * kMs, kBase + 20 * kMs);
  Span child_error = MakeSpan(1, 3, 1, "AnalyzePlan", kBase + 5 * kMs, kBase + 8 * kMs);
  child_error.status_code = StatusCode::kError;
  ASSERT_TRUE(store->Write(std::vector<Span>{child_ok, child_error}).ok());

  auto listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].root_name, "AnalyzePlan");  // the earliest span until the root arrives
  EXPECT_EQ((*listed)[0].span_count, 2u);
  EXPECT_EQ((*listed)[0].error_count, 1u);
  EXPECT_EQ((*listed)[0].start_time_unix_nano, kBase + 5 * kMs);
  EXPECT_EQ((*listed)[0].end_time_unix_nano, kBase + 20 * kMs);
  EXPECT_TRUE((*listed)[0].dag_id.empty());

  Span root = MakeSpan(1, 1, 0, "airflow.task", kBase, kBase + 30 * kMs);
  root.attributes = {{"airflow.dag_id", std::string("etl")},
                     {"airflow.task_id", std::string("load")},
                     {"airflow.run_id", std::string("r1")},
                     {"airflow.try_number", std::int64_t{2}}};
  ASSERT_TRUE(store->Write(std::vector<Span>{root}).ok());

  listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  const TraceSummary& summary = (*listed)[0];
  EXPECT_EQ(ToHex(summary.trace_id), ToHex(TraceIdOf(1)));
  EXPECT_EQ(summary.root_name, "airflow.task");
  EXPECT_EQ(summary.span_count, 3u);
  EXPECT_EQ(summary.error_count, 1u);
  EXPECT_EQ(summary.start_time_unix_nano, kBase);
  EXPECT_EQ(summary.end_time_unix_nano, kBase + 30 * kMs);
  EXPECT_EQ(summary.dag_id, "etl");
  EXPECT_EQ(summary.task_id, "load");
  EXPECT_EQ(summary.run_id, "r1");
  EXPECT_EQ(summary.try_number, 2);
}

TEST_F(SqliteSpanStoreTest, RewritingASpanReplacesIt) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Span first = MakeSpan(1, 1, 0, "ExecutePlan", kBase, kBase + 10 * kMs);
  first.attributes = {{"spark.connect.operation_id", std::string("op-old")}, {"rows", std::int64_t{1}}};
  ASSERT_TRUE(store->Write(std::vector<Span>{first}).ok());

  Span late = first;
  late.end_time_unix_nano = kBase + 99 * kMs;
  late.status_code = StatusCode::kError;
  late.status_message = "cancelled";
  late.attributes = {{"spark.connect.operation_id", std::string("op-new")}};
  late.events = {SpanEvent{"cancel", kBase + 98 * kMs, {}}};
  ASSERT_TRUE(store->Write(std::vector<Span>{late}).ok());

  auto spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 1u);
  ExpectSpanEq((*spans)[0], late);

  auto listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].span_count, 1u);
  EXPECT_EQ((*listed)[0].error_count, 1u);
  EXPECT_EQ((*listed)[0].end_time_unix_nano, kBase + 99 * kMs);

  // The operation column follows the replacement too.
  EXPECT_EQ(store->FindTraceByOperation("op-old").error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(store->FindTraceByOperation("op-new").ok());

  // Within one batch the last copy wins.
  Span twice = late;
  twice.name = "renamed";
  ASSERT_TRUE(store->Write(std::vector<Span>{late, twice}).ok());
  spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 1u);
  EXPECT_EQ((*spans)[0].name, "renamed");
}

TEST_F(SqliteSpanStoreTest, FindsTraceByOperationNewestFirst) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Span older = MakeSpan(1, 1, 0, "ExecutePlan", kBase, kBase + kMs);
  older.attributes = {{"spark.connect.operation_id", std::string("op-shared")}};
  Span newer = MakeSpan(2, 1, 0, "ExecutePlan", kBase + 10 * kMs, kBase + 11 * kMs);
  newer.attributes = older.attributes;
  Span other = MakeSpan(3, 1, 0, "ExecutePlan", kBase, kBase + kMs);
  other.attributes = {{"spark.connect.operation_id", std::string("op-3")}};
  ASSERT_TRUE(store->Write(std::vector<Span>{older, newer, other}).ok());

  auto shared = store->FindTraceByOperation("op-shared");
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(ToHex(*shared), ToHex(TraceIdOf(2)));
  auto three = store->FindTraceByOperation("op-3");
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(ToHex(*three), ToHex(TraceIdOf(3)));
  auto missing = store->FindTraceByOperation("op-unknown");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  // The lookup goes through the operation index, not a scan of every span.
  SqliteConnection raw = Raw();
  auto plan = raw.Prepare("EXPLAIN QUERY PLAN SELECT trace_id FROM spans WHERE operation_id = 'x'");
  ASSERT_TRUE(plan.ok());
  auto row = plan->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_NE(plan->ColumnText(3).find("spans_by_operation"), std::string::npos) << plan->ColumnText(3);
}

TEST_F(SqliteSpanStoreTest, UnknownTraceIsNotFound) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto spans = store->GetTrace(TraceIdOf(404));
  ASSERT_FALSE(spans.ok());
  EXPECT_EQ(spans.error().code, ErrorCode::kNotFound);
  EXPECT_NE(spans.error().message.find(ToHex(TraceIdOf(404))), std::string::npos);
}

TEST_F(SqliteSpanStoreTest, CountsSpansWithInvalidIdsInsteadOfStoringThem) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Span no_trace = MakeSpan(1, 1, 0, "a", kBase, kBase + 1);
  no_trace.trace_id = TraceId{};
  Span no_span = MakeSpan(1, 2, 0, "b", kBase, kBase + 1);
  no_span.span_id = SpanId{};
  Span good = MakeSpan(1, 3, 0, "c", kBase, kBase + 1);
  auto written = store->Write(std::vector<Span>{no_trace, no_span, good});
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->spans_written, 1u);
  EXPECT_EQ(written->spans_rejected, 2u);
  auto spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  EXPECT_EQ(spans->size(), 1u);
}

TEST_F(SqliteSpanStoreTest, RetentionDeletesWholeTracesByLastEnd) {
  SqliteSpanStoreOptions options;
  options.max_age = std::chrono::hours(1);
  auto store = OpenStore(options);
  ASSERT_NE(store, nullptr);
  const auto now = std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase)) + std::chrono::hours(3);
  const std::uint64_t now_ns = kBase + 3ULL * 3600 * 1000 * kMs;
  const std::uint64_t hour = 3600ULL * 1000 * kMs;
  std::vector<Span> spans = {
      MakeSpan(1, 1, 0, "old", now_ns - 2 * hour, now_ns - 2 * hour + kMs),
      MakeSpan(1, 2, 1, "old child", now_ns - 2 * hour, now_ns - 2 * hour + kMs),
      // Started long ago, but its last span ended recently: kept whole.
      MakeSpan(2, 1, 0, "long", now_ns - 2 * hour, now_ns - hour / 2),
      MakeSpan(2, 2, 1, "long early child", now_ns - 2 * hour, now_ns - 2 * hour + kMs),
      MakeSpan(3, 1, 0, "recent", now_ns - kMs, now_ns),
  };
  ASSERT_TRUE(store->Write(spans).ok());

  auto retention = store->EnforceRetention(now);
  ASSERT_TRUE(retention.ok()) << retention.error().ToString();
  EXPECT_EQ(retention->traces_deleted_by_age, 1u);
  EXPECT_EQ(retention->traces_deleted_by_size, 0u);
  EXPECT_EQ(retention->spans_deleted, 2u);

  EXPECT_EQ(store->GetTrace(TraceIdOf(1)).error().code, ErrorCode::kNotFound);
  auto kept = store->GetTrace(TraceIdOf(2));
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 2u);
  auto listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(TraceHexes(*listed), (std::vector<std::string>{ToHex(TraceIdOf(3)), ToHex(TraceIdOf(2))}));
}

TEST_F(SqliteSpanStoreTest, RetentionBySizeDeletesOldestAndShrinksTheFile) {
  const std::string payload(4000, 'x');  // about one page of attributes per span
  {
    auto store = OpenStore();
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
    auto retention = store->EnforceRetention(std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase)));
    ASSERT_TRUE(retention.ok()) << retention.error().ToString();
    EXPECT_EQ(retention->traces_deleted_by_age + retention->traces_deleted_by_size, 0u);
  }
  const std::uint64_t size_before = fs::file_size(path_);
  ASSERT_GT(size_before, 4u << 20) << "the test needs a database well above the budget";

  constexpr std::uint64_t kBudget = 1u << 20;
  SqliteSpanStoreOptions options;
  options.max_bytes = kBudget;
  auto store = OpenStore(options);
  ASSERT_NE(store, nullptr);
  auto retention = store->EnforceRetention(std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase)));
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
  EXPECT_EQ(ToHex(listed->back().trace_id), ToHex(TraceIdOf(static_cast<std::uint32_t>(201 - listed->size()))));
  EXPECT_EQ(store->GetTrace(TraceIdOf(1)).error().code, ErrorCode::kNotFound);

  // Still a healthy database that takes writes.
  ASSERT_TRUE(store->Write(std::vector<Span>{MakeSpan(999, 1, 0, "after", kBase, kBase + 1)}).ok());
  EXPECT_TRUE(store->GetTrace(TraceIdOf(999)).ok());
}

TEST_F(SqliteSpanStoreTest, ReopensAfterClose) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(std::vector<Span>{MakeSpan(1, 1, 0, "first", kBase, kBase + kMs)}).ok());
  }
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(std::vector<Span>{MakeSpan(2, 1, 0, "second", kBase + kMs, kBase + 2 * kMs)}).ok());
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
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Write(std::vector<Span>{MakeSpan(1, 1, 0, "s", kBase, kBase + 1)}).ok());
}

TEST_F(SqliteSpanStoreTest, CreatesMissingParentDirectories) {
  path_ = (dir_ / "a" / "b" / "traces.db").string();
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(fs::exists(path_));
}

TEST_F(SqliteSpanStoreTest, RefusesANewerSchemaVersion) {
  { ASSERT_NE(OpenStore(), nullptr); }
  {
    SqliteConnection raw = Raw();
    ASSERT_TRUE(raw.Exec("PRAGMA user_version = 3").ok());
  }
  for (const bool read_only : {false, true}) {
    SqliteSpanStoreOptions options;
    options.read_only = read_only;
    auto store = SqliteSpanStore::Open(path_, options);
    ASSERT_FALSE(store.ok()) << "read_only=" << read_only;
    EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(store.error().message.find("newer sparktrace (schema version 3"), std::string::npos)
        << store.error().message;
    EXPECT_NE(store.error().message.find(path_), std::string::npos) << store.error().message;
  }
}

TEST_F(SqliteSpanStoreTest, ReaderRefusesAnUnmigratedDatabase) {
  { SqliteConnection raw = std::move(SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)).value(); }
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
  EXPECT_NE(store.error().message.find((dir_ / "blocker").string()), std::string::npos) << store.error().message;
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

  { ASSERT_NE(OpenStore(), nullptr); }
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  auto written = reader->Write(std::vector<Span>{MakeSpan(1, 1, 0, "s", kBase, kBase + 1)});
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(reader->EnforceRetention(std::chrono::system_clock::now()).ok());
}

TEST_F(SqliteSpanStoreTest, ReaderKeepsItsSnapshotWhileTheWriterCommits) {
  // A short busy timeout: without WAL the writer's commit would wait for the reader and fail fast.
  SqliteSpanStoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(100);
  auto writer = OpenStore(options);
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

TEST_F(SqliteSpanStoreTest, ConcurrentReaderOnlySeesWholeBatches) {
  auto writer = OpenStore();
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Write(std::vector<Span>{MakeSpan(1000, 1, 0, "seed", kBase, kBase + 1)}).ok());
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);

  constexpr std::uint32_t kBatches = 40;
  constexpr std::uint32_t kSpansPerBatch = 50;
  std::atomic<bool> done{false};
  std::atomic<bool> write_failed{false};
  std::thread writing([&] {
    for (std::uint32_t b = 1; b <= kBatches; ++b) {
      std::vector<Span> batch;
      for (std::uint32_t s = 1; s <= kSpansPerBatch; ++s) {
        batch.push_back(MakeSpan(b, s, s == 1 ? 0 : 1, "span", kBase + std::uint64_t{b} * 1000 + s, kBase + std::uint64_t{b} * 1000 + s + 1));
      }
      if (!writer->Write(batch).ok()) write_failed = true;
    }
    done = true;
  });

  // Each batch is one trace: a reader must never see part of one. Failures are collected rather than
  // asserted here, so that the writer thread is always joined.
  const auto check = [&]() -> std::string {
    auto listed = reader->ListTraces({.limit = 0});
    if (!listed.ok()) return listed.error().ToString();
    for (const auto& summary : *listed) {
      if (ToHex(summary.trace_id) == ToHex(TraceIdOf(1000))) continue;
      if (summary.span_count != kSpansPerBatch) return "partial summary: " + std::to_string(summary.span_count);
      auto spans = reader->GetTrace(summary.trace_id);
      if (!spans.ok()) return spans.error().ToString();
      if (spans->size() != kSpansPerBatch) return "partial trace: " + std::to_string(spans->size());
    }
    return "";
  };
  int reads = 0;
  std::string failure;
  bool finished = false;
  do {
    finished = done.load();
    failure = check();
    ++reads;
  } while (!finished && failure.empty());
  writing.join();
  EXPECT_EQ(failure, "");
  EXPECT_FALSE(write_failed);
  EXPECT_GE(reads, 1);
  auto listed = reader->ListTraces({.limit = 0});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), kBatches + 1);
}

}  // namespace
}  // namespace sparktrace::tracing
