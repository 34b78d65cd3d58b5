// The trace stores' conformance suite, finding: lists by filter, summaries, lookups, Airflow attempts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tracing/store/span_store_conformance_test_support.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// Instantiated for each backend in span_store_conformance_test.cc.

TEST_P(SpanStoreConformance, ListsNewestFirstWithEachFilter) {
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
      {1, "etl", "extract", "r1", 100}, {2, "etl", "load", "r1", 200},       {3, "etl", "load", "r2", 300},
      {4, "ml", "train", "r1", 400},    {5, nullptr, nullptr, nullptr, 500},
  };
  std::vector<Span> spans;
  for (const Row& row : rows) {
    Span span =
        MakeSpan(row.trace, 1, 0, "task", kBase + row.start_ms * kMs, kBase + (row.start_ms + 50) * kMs);
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

TEST_P(SpanStoreConformance, SummaryFollowsLateRootErrorsAndIdentity) {
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

TEST_P(SpanStoreConformance, FindsTraceByOperationNewestFirst) {
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
}

TEST_P(SpanStoreConformance, UnknownTraceIsNotFound) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto spans = store->GetTrace(TraceIdOf(404));
  ASSERT_FALSE(spans.ok());
  EXPECT_EQ(spans.error().code, ErrorCode::kNotFound);
  EXPECT_NE(spans.error().message.find(ToHex(TraceIdOf(404))), std::string::npos);
}

// An Airflow attempt whose calls went through two proxies (a retry on another replica) lands in two
// traces written by two writers; it is one attempt, with both traces, on both backends.
// An attempt of a call per trace is read in one query (traceview/attempt_reader.h): every span of
// the traces asked for, grouped by trace and ordered as GetTrace orders them; unknown traces are absent.
TEST_P(SpanStoreConformance, ReadsManyTracesInOneCall) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<Span> written;
  for (std::uint32_t trace = 1; trace <= 300; ++trace) {
    // Written in reverse start order within each trace: the read orders them.
    written.push_back(MakeSpan(trace, 2, 1, "child", kBase + (trace * 10 + 5) * kMs, kBase + (trace * 10 + 6) * kMs));
    written.push_back(MakeSpan(trace, 1, 0, "Config", kBase + trace * 10 * kMs, kBase + (trace * 10 + 9) * kMs));
  }
  written.back().attributes = {{"airflow.dag_id", std::string("calls")}, {"n", std::int64_t{300}}};
  ASSERT_TRUE(store->Write(written).ok());

  std::vector<TraceId> asked;
  for (std::uint32_t trace = 300; trace >= 101; --trace) asked.push_back(TraceIdOf(trace));
  asked.push_back(TraceIdOf(9999));  // never written
  auto read = store->GetTraces(asked);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 400u);
  for (std::size_t i = 0; i < read->size(); i += 2) {
    const Span& first = (*read)[i];
    const Span& second = (*read)[i + 1];
    EXPECT_EQ(first.trace_id, second.trace_id);
    EXPECT_EQ(first.name, "Config");
    EXPECT_EQ(second.name, "child");
    if (i > 0) {
      EXPECT_LT(ToHex((*read)[i - 1].trace_id), ToHex(first.trace_id));  // grouped by trace
    }
  }
  // Every field comes back as GetTrace gives it.
  auto one = store->GetTrace(TraceIdOf(300));
  ASSERT_TRUE(one.ok());
  const auto of_300 = std::find_if(read->begin(), read->end(),
                                   [](const Span& span) { return span.trace_id == TraceIdOf(300); });
  ASSERT_NE(of_300, read->end());
  ExpectSpanEq(*of_300, (*one)[0]);
  ExpectSpanEq(*(of_300 + 1), (*one)[1]);

  auto none = store->GetTraces(std::vector<TraceId>{TraceIdOf(9998)});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto empty = store->GetTraces({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST_P(SpanStoreConformance, AnAttemptWrittenByTwoWritersIsOneAttempt) {
  auto first = OpenStore();
  auto second = OpenStore();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const auto attempt_span = [](std::uint32_t trace, std::uint64_t start_ms) {
    Span span = MakeSpan(trace, 1, 0, "spark_connect.operation", kBase + start_ms * kMs,
                         kBase + (start_ms + 10) * kMs);
    span.attributes = {{"airflow.dag_id", std::string("etl")},
                       {"airflow.task_id", std::string("load")},
                       {"airflow.run_id", std::string("r1")},
                       {"airflow.try_number", std::int64_t{1}}};
    return span;
  };
  std::atomic<bool> failed{false};
  std::thread other([&] {
    for (std::uint32_t i = 0; i < 20; ++i) {
      if (!second->Write(std::vector<Span>{attempt_span(200 + i, 100 + i)}).ok()) failed = true;
    }
  });
  for (std::uint32_t i = 0; i < 20; ++i) {
    EXPECT_TRUE(first->Write(std::vector<Span>{attempt_span(100 + i, i)}).ok());
  }
  other.join();
  EXPECT_FALSE(failed);
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  TaskAttemptFilter filter;
  filter.airflow_only = true;
  auto page = reader->ListTaskAttempts(filter);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->total, 1);
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].trace_ids.size(), 40u);
  EXPECT_EQ(page->rows[0].span_count, 40);
  EXPECT_EQ(page->rows[0].start_unix_nano, kBase);
  EXPECT_EQ(page->rows[0].end_unix_nano, kBase + 129 * kMs);
  EXPECT_EQ(page->rows[0].state, "success");
}

// Airflow 2.10's per-DAG-run trace ids: two tasks (and two tries) in one trace are separate rows,
// each found by its own filter, try number included.
TEST_P(SpanStoreConformance, AttemptsSharingATraceAreFoundByEachFilter) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const auto task_span = [](std::uint32_t span, const char* task, std::int64_t attempt,
                            std::uint64_t start_ms) {
    Span result =
        MakeSpan(9, span, 0, "spark_connect.operation", kBase + start_ms * kMs, kBase + (start_ms + 5) * kMs);
    result.attributes = {{"airflow.dag_id", std::string("etl")},
                         {"airflow.task_id", std::string(task)},
                         {"airflow.run_id", std::string("r1")},
                         {"airflow.try_number", attempt}};
    return result;
  };
  Span failed_job = MakeSpan(9, 10, 2, "spark.job", kBase + 30 * kMs, kBase + 31 * kMs);
  failed_job.status_code = StatusCode::kError;
  ASSERT_TRUE(store
                  ->Write(std::vector<Span>{task_span(1, "extract", 1, 0), task_span(2, "load", 1, 20),
                                            task_span(3, "load", 2, 40), failed_job})
                  .ok());
  TaskAttemptFilter by_task;
  by_task.task_id = "load";
  auto loads = store->ListTaskAttempts(by_task);
  ASSERT_TRUE(loads.ok()) << loads.error().ToString();
  ASSERT_EQ(loads->total, 2);
  EXPECT_EQ(loads->rows[0].key.try_number, 2);  // newest first
  EXPECT_EQ(loads->rows[1].key.try_number, 1);
  EXPECT_EQ(loads->rows[1].span_count, 2);  // its operation and the job below it
  for (const auto& row : loads->rows) EXPECT_EQ(row.trace_ids, std::vector<std::string>{ToHex(TraceIdOf(9))});

  TaskAttemptFilter by_try = by_task;
  by_try.try_number = 1;
  auto first_try = store->ListTaskAttempts(by_try);
  ASSERT_TRUE(first_try.ok());
  ASSERT_EQ(first_try->total, 1);
  EXPECT_EQ(first_try->rows[0].key.task_id, "load");
  EXPECT_EQ(first_try->rows[0].key.try_number, 1);

  TaskAttemptFilter extract;
  extract.task_id = "extract";
  auto extracts = store->ListTaskAttempts(extract);
  ASSERT_TRUE(extracts.ok());
  ASSERT_EQ(extracts->total, 1);
  EXPECT_EQ(extracts->rows[0].span_count, 1);

  auto matching = store->TracesMatching(ToHex(TraceIdOf(9)));
  ASSERT_TRUE(matching.ok());
  EXPECT_EQ(*matching, std::vector<std::string>{ToHex(TraceIdOf(9))});
}

}  // namespace
}  // namespace sparktrace::tracing::store
