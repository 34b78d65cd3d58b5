// The trace stores' conformance suite, storing: round trips, rewrites, invalid ids, retention, readers, text.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tracing/store/span_store_conformance_test_support.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// The suite's one instantiation: it runs span_store_conformance_queries_test.cc's tests too.
INSTANTIATE_TEST_SUITE_P(Backends, SpanStoreConformance,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

TEST_P(SpanStoreConformance, RoundTripsEveryField) {
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
      SpanEvent{"exception",
                kBase + 700 * kMs,
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

TEST_P(SpanStoreConformance, NonFiniteDoublesComeBackAsNaN) {
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

TEST_P(SpanStoreConformance, WritesTenThousandSpansInOneBatch) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  constexpr std::uint32_t kTraces = 100;
  constexpr std::uint32_t kSpansPerTrace = 100;
  std::vector<Span> spans;
  spans.reserve(std::size_t{kTraces} * kSpansPerTrace);
  for (std::uint32_t t = 1; t <= kTraces; ++t) {
    for (std::uint32_t s = 1; s <= kSpansPerTrace; ++s) {
      const std::uint64_t start = kBase + std::uint64_t{t} * 1000 * kMs + s * kMs;
      Span span =
          MakeSpan(t, s, s == 1 ? 0 : 1, s == 1 ? "airflow.task" : "ExecutePlan", start, start + kMs / 2);
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

TEST_P(SpanStoreConformance, RewritingASpanReplacesIt) {
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

// The one span a client makes, the Airflow task report's "airflow.task" span, whose ids the client
// chooses: it replaces only its own attempt's task span, with the same start and an end no earlier
// (tracing/store/span_rows/span_table_sql.h). Whichever proxy wrote what, a report cannot take over a span
// the proxy recorded or another attempt's task span.
TEST_P(SpanStoreConformance, ATaskReportsSpanReplacesOnlyItsOwnAttemptsTaskSpan) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const auto attempt = [](std::int64_t try_number) {
    return std::vector<Attribute>{{"airflow.dag_id", std::string("etl")},
                                  {"airflow.task_id", std::string("load")},
                                  {"airflow.run_id", std::string("manual__1")},
                                  {"airflow.try_number", try_number}};
  };
  Span recorded = MakeSpan(1, 2, 1, "ExecutePlan", kBase, kBase + 10 * kMs);
  recorded.attributes = attempt(1);
  Span task = MakeSpan(1, 1, 0, "airflow.task", kBase - kMs, kBase + 20 * kMs);
  task.attributes = attempt(1);
  ASSERT_TRUE(store->Write(std::vector<Span>{recorded, task}).ok());

  Span over_recorded = MakeSpan(1, 2, 0, "airflow.task", kBase, kBase + 10 * kMs);
  over_recorded.attributes = attempt(1);
  Span other_attempt = task;
  other_attempt.attributes = attempt(2);
  other_attempt.end_time_unix_nano += kMs;
  // Airflow 2.10 gives the mapped instances of a task one task span id: another map index's report
  // names this span, with this start and a later end, and still is another attempt.
  Span other_map_index = task;
  other_map_index.attributes.push_back({"airflow.map_index", std::int64_t{4}});
  other_map_index.end_time_unix_nano += kMs;
  Span moved_start = task;
  moved_start.start_time_unix_nano -= kMs;
  Span earlier_end = task;
  earlier_end.end_time_unix_nano -= kMs;
  earlier_end.status_code = StatusCode::kError;
  for (const Span& refused : {over_recorded, other_attempt, other_map_index, moved_start, earlier_end}) {
    ASSERT_TRUE(store->Write(std::vector<Span>{refused}).ok());
  }
  auto spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 2u);
  ExpectSpanEq((*spans)[0], task);
  ExpectSpanEq((*spans)[1], recorded);

  Span finished = task;  // the attempt's own later report: same start, a later end
  finished.end_time_unix_nano += 5 * kMs;
  finished.status_code = StatusCode::kError;
  finished.status_message = "Airflow task failed";
  ASSERT_TRUE(store->Write(std::vector<Span>{finished}).ok());
  spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->size(), 2u);
  ExpectSpanEq((*spans)[0], finished);
  auto listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].error_count, 1u);
}

TEST_P(SpanStoreConformance, CountsSpansWithInvalidIdsInsteadOfStoringThem) {
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

TEST_P(SpanStoreConformance, RetentionDeletesWholeTracesByLastEnd) {
  StoreOptions options;
  options.max_age = std::chrono::hours(1);
  auto store = OpenStore(options);
  ASSERT_NE(store, nullptr);
  const auto now =
      std::chrono::system_clock::time_point(std::chrono::nanoseconds(kBase)) + std::chrono::hours(3);
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

TEST_P(SpanStoreConformance, ConcurrentReaderOnlySeesWholeBatches) {
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
        batch.push_back(MakeSpan(b, s, s == 1 ? 0 : 1, "span", kBase + std::uint64_t{b} * 1000 + s,
                                 kBase + std::uint64_t{b} * 1000 + s + 1));
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
      if (summary.span_count != kSpansPerBatch)
        return "partial summary: " + std::to_string(summary.span_count);
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

TEST_P(SpanStoreConformance, DeliveringABatchTwiceChangesNothing) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<Span> batch = {MakeSpan(1, 1, 0, "root", kBase, kBase + 10 * kMs),
                             MakeSpan(1, 2, 1, "child", kBase + kMs, kBase + 2 * kMs)};
  ASSERT_TRUE(store->Write(batch).ok());
  ASSERT_TRUE(store->Write(batch).ok());
  auto listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].span_count, 2u);
  auto attempts = store->ListTaskAttempts({});
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->total, 1);
  EXPECT_EQ(attempts->rows[0].span_count, 2);
}

// A batch that sends many of a stored trace's spans again, among new ones: the stores read the stored
// versions a batch replaces in groups (SQLite: 32 to a query), and every one of them must be taken
// back out of the summary and the index, or the trace and its attempt count it twice.
TEST_P(SpanStoreConformance, ABatchResendingManyStoredSpansCountsEachSpanOnce) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  constexpr std::uint64_t kStored = 100;
  constexpr std::uint64_t kNew = 50;
  std::vector<Span> stored;
  for (std::uint64_t span = 1; span <= kStored; ++span) {
    stored.push_back(
        MakeSpan(1, span, span == 1 ? 0 : 1, "call", kBase + span * kMs, kBase + (span + 1) * kMs));
  }
  ASSERT_TRUE(store->Write(stored).ok());

  // Every stored span again, every third of them failed now, and new spans after them.
  std::vector<Span> again = stored;
  std::uint64_t errors = 0;
  for (std::size_t at = 0; at < again.size(); at += 3, ++errors) again[at].status_code = StatusCode::kError;
  for (std::uint64_t span = kStored + 1; span <= kStored + kNew; ++span) {
    again.push_back(MakeSpan(1, span, 1, "call", kBase + span * kMs, kBase + (span + 1) * kMs));
  }
  ASSERT_TRUE(store->Write(again).ok());

  auto listed = store->ListTraces({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].span_count, kStored + kNew);
  EXPECT_EQ((*listed)[0].error_count, errors);
  EXPECT_EQ((*listed)[0].end_time_unix_nano, kBase + (kStored + kNew + 1) * kMs);
  auto attempts = store->ListTaskAttempts({});
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->total, 1);
  EXPECT_EQ(attempts->rows[0].span_count, static_cast<std::int64_t>(kStored + kNew));
}

TEST_P(SpanStoreConformance, AReaderCannotWrite) {
  { ASSERT_NE(OpenStore(), nullptr); }
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->read_only());
  auto written = reader->Write(std::vector<Span>{MakeSpan(1, 1, 0, "s", kBase, kBase + 1)});
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(reader->EnforceRetention(std::chrono::system_clock::now()).ok());
}

TEST_P(SpanStoreConformance, TextThatIsNotUtf8IsStoredNotRefused) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Span span = MakeSpan(1, 1, 0, std::string("bad\xff\0name", 9), kBase, kBase + 1);
  span.status_message = "tab\tnewline\nbackslash\\";
  ASSERT_TRUE(store->Write(std::vector<Span>{span}).ok());
  auto spans = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(spans.ok()) << spans.error().ToString();
  EXPECT_EQ((*spans)[0].status_message, span.status_message);
  EXPECT_EQ((*spans)[0].name.substr(0, 3), "bad");
}

}  // namespace
}  // namespace sparktrace::tracing::store
