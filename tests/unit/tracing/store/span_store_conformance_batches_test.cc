// The trace stores' conformance suite, batches: a store that updates a trace's summary and task index
// from each batch (summary_increment.h, increment/part_increment.h) ends where a store given the same
// spans at once ends. Random Airflow-shaped traces (shared traces with several attempts, spans before
// their parents, parents that never come, running snapshots replaced by their final form, spans whose
// end moves in, findings, a trace without identity) are written in random batches to one store and in
// one batch to another; every attempt row and every trace summary must be the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tests/unit/tracing/store/span_store_conformance_test_support.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/finding_event.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// Every version of every span of a few random traces, in the order they arrive; a span's versions
// arrive in their own order, the last one is what a store keeps.
class RandomBatchTraces {
 public:
  explicit RandomBatchTraces(std::uint32_t seed) : random_(seed) {}

  std::vector<Span> Make(std::uint32_t traces) {
    std::vector<std::vector<Span>> versions;  // per span, in order
    for (std::uint32_t trace = 1; trace <= traces; ++trace) AddTrace(trace, versions);
    // One attempt of a call per trace (calls carrying the task's identity without a traceparent):
    // its row gathers a part from each trace.
    for (std::uint32_t call = 1; call <= 3 * traces; ++call) AddCallTrace(traces + call, versions);
    // Interleave: the spans in a random order, each span's versions in theirs.
    std::vector<std::size_t> order;
    for (std::size_t span = 0; span < versions.size(); ++span)
      order.insert(order.end(), versions[span].size(), span);
    std::shuffle(order.begin(), order.end(), random_);
    std::vector<std::size_t> next(versions.size(), 0);
    std::vector<Span> arrivals;
    for (std::size_t span : order) arrivals.push_back(versions[span][next[span]++]);
    return arrivals;
  }

 private:
  std::uint32_t Pick(std::uint32_t below) {
    return std::uniform_int_distribution<std::uint32_t>(0, below - 1)(random_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(random_); }

  static std::vector<Attribute> Identity(const std::string& task, std::int64_t try_number, std::int64_t map) {
    return {{std::string(kAirflowDagIdKey), std::string("etl")},
            {std::string(kAirflowTaskIdKey), task},
            {std::string(kAirflowRunIdKey), std::string("scheduled__1")},
            {std::string(kAirflowTryNumberKey), try_number},
            {std::string(kAirflowMapIndexKey), map}};
  }

  // The kinds of span below an attempt, with what the index reads of each.
  Span Child(std::uint32_t trace, std::uint32_t id, std::uint32_t parent, std::uint64_t start_ms) {
    const std::uint64_t start = kBase + start_ms * kMs;
    const std::uint64_t end = start + (1 + Pick(50)) * kMs;
    switch (Pick(6)) {
      case 0: {
        Span job = MakeSpan(trace, id, parent, std::string(kSparkJobSpanName), start, end);
        job.attributes = {
            {std::string(kSparkJobStatusKey), std::string(Chance(0.3) ? "failed" : "succeeded")}};
        if (job.attributes[0].value == AttributeValue(std::string("failed")))
          job.status_code = StatusCode::kError;
        return job;
      }
      case 1: {
        Span phase = MakeSpan(trace, id, parent,
                              std::string(kSparkPhasePrefix) + (Chance(0.5) ? "compute" : "resource_wait"),
                              start, end);
        phase.attributes = {
            {std::string(kSparkPhaseDurationMsKey), static_cast<std::int64_t>((end - start) / kMs)}};
        return phase;
      }
      case 2: {
        Span lifecycle = MakeSpan(trace, id, parent, std::string(kSparkConnectLifecycleSpanName), start, end);
        lifecycle.attributes = {{std::string(kSparkAppIdKey), "app-" + std::to_string(trace)}};
        return lifecycle;
      }
      case 3: {
        Span stage = MakeSpan(trace, id, parent, std::string(kSparkStageSpanName), start, end);
        if (Chance(0.1)) {
          FindingEvent finding;
          finding.id = "data-skew";
          finding.key = "data-skew@" + std::to_string(trace) + ":" + std::to_string(id);
          finding.severity = "warning";
          finding.title = "skew";
          finding.impact_seconds = 1.0 + id;
          stage.events.push_back(EncodeFindingEvent(finding, end));
        }
        return stage;
      }
      default:
        return MakeSpan(trace, id, parent, std::string(kSparkConnectRpcSpanPrefix) + "ExecutePlan", start,
                        end);
    }
  }

  // Earlier versions of `span`: a running snapshot, an end later or earlier than the final one, a
  // different status.
  void AddVersions(const Span& span, std::vector<std::vector<Span>>& versions, double earlier_chance = 0.25) {
    std::vector<Span> mine;
    if (Chance(earlier_chance)) {
      Span earlier = span;
      if (Chance(0.5)) {
        earlier.end_time_unix_nano = span.end_time_unix_nano - kMs / 2;  // the end grows
      } else {
        earlier.end_time_unix_nano = span.end_time_unix_nano + 5 * kMs;  // the end moves in
      }
      earlier.status_code = Chance(0.5) ? StatusCode::kError : StatusCode::kUnset;
      for (Attribute& attribute : earlier.attributes) {
        if (attribute.key == kSparkJobStatusKey || attribute.key == kSparkConnectOperationStateKey)
          attribute.value = std::string("running");
        if (attribute.key == kSparkPhaseDurationMsKey) attribute.value = std::int64_t{1};
      }
      if (span.name == kSparkConnectOperationSpanName && Chance(0.7))
        earlier.attributes.push_back({std::string(kSparkConnectOperationStateKey), std::string("running")});
      mine.push_back(std::move(earlier));
    }
    mine.push_back(span);
    versions.push_back(std::move(mine));
  }

  void AddCallTrace(std::uint32_t trace, std::vector<std::vector<Span>>& versions) {
    Span call = MakeSpan(trace, 1, 0, std::string(kSparkConnectOperationSpanName), kBase + trace * kMs,
                         kBase + (trace + 1 + Pick(20)) * kMs);
    call.attributes = Identity("calls", 1, -1);
    if (Chance(0.2)) call.status_code = StatusCode::kError;
    AddVersions(call, versions, 0.6);
  }

  void AddTrace(std::uint32_t trace, std::vector<std::vector<Span>>& versions) {
    std::uint32_t id = 1;
    const bool airflow = !Chance(0.2);
    const std::uint32_t root = id++;
    if (Chance(0.8)) {
      AddVersions(
          MakeSpan(trace, root, 0, airflow ? "airflow.dag_run" : std::string(kSparkApplicationSpanName),
                   kBase, kBase + 900 * kMs),
          versions);
    }
    const std::uint32_t attempts = 1 + Pick(4);
    for (std::uint32_t attempt = 0; attempt < attempts; ++attempt) {
      const std::uint32_t operation = id++;
      // An operation under the root, or under a parent that never comes (the Airflow task's span).
      const std::uint32_t parent = Chance(0.7) ? root : 900 + attempt;
      Span op = MakeSpan(trace, operation, parent, std::string(kSparkConnectOperationSpanName),
                         kBase + (10 + attempt * 100) * kMs, kBase + (90 + attempt * 100) * kMs);
      if (airflow)
        op.attributes =
            Identity(attempt < 2 ? "load" : "publish", 1 + attempt % 2, attempt < 2 ? -1 : attempt);
      if (Chance(0.2)) op.status_code = StatusCode::kError;
      AddVersions(op, versions);
      // Spans below it, some below each other, a few below a span that never comes.
      std::vector<std::uint32_t> below = {operation};
      const std::uint32_t children = 2 + Pick(12);
      for (std::uint32_t child = 0; child < children; ++child) {
        const std::uint32_t own = id++;
        std::uint32_t under = below[Pick(static_cast<std::uint32_t>(below.size()))];
        if (Chance(0.05)) under = 800 + own;  // an orphan for good
        AddVersions(Child(trace, own, under, 12 + attempt * 100 + child), versions);
        below.push_back(own);
      }
    }
  }

  std::mt19937 random_;
};

std::vector<std::tuple<std::string, std::string>> AttemptRowsOf(SpanStore& store) {
  TaskAttemptFilter every;
  every.limit = 10'000;
  auto page = store.ListTaskAttempts(every);
  EXPECT_TRUE(page.ok()) << page.error().ToString();
  std::vector<std::tuple<std::string, std::string>> rows;
  if (!page.ok()) return rows;
  for (const TaskAttemptRow& row : page->rows) {
    std::string traces;
    for (const std::string& trace : row.trace_ids) traces += trace + ",";
    std::string phases;
    for (std::int64_t ms : row.phase_ms) phases += std::to_string(ms) + ",";
    const std::string key = std::to_string(row.airflow) + " " + row.key.dag_id + "." + row.key.task_id + " " +
                            row.key.run_id + " try " + std::to_string(row.key.try_number) + " map " +
                            std::to_string(row.key.map_index) + " " + traces;
    rows.emplace_back(key, row.name + " start " + std::to_string(row.start_unix_nano) + " end " +
                               std::to_string(row.end_unix_nano) + " spans " +
                               std::to_string(row.span_count) + " errors " + std::to_string(row.error_count) +
                               " open " + std::to_string(row.open_count) + " phases " + phases +
                               " findings " + std::to_string(row.finding_count) + " top " +
                               (row.top_finding_json.empty() ? "-" : row.top_finding_json) + " " + row.state);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<std::string> SummaryLinesOf(SpanStore& store) {
  TraceFilter every;
  every.limit = 10'000;
  auto summaries = store.ListTraces(every);
  EXPECT_TRUE(summaries.ok()) << summaries.error().ToString();
  std::vector<std::string> lines;
  if (!summaries.ok()) return lines;
  for (const TraceSummary& summary : *summaries) {
    lines.push_back(ToHex(summary.trace_id) + " " + summary.root_name + " " +
                    std::to_string(summary.start_time_unix_nano) + "-" +
                    std::to_string(summary.end_time_unix_nano) + " spans " +
                    std::to_string(summary.span_count) + " errors " + std::to_string(summary.error_count) +
                    " " + summary.dag_id + "/" + summary.task_id + "/" + summary.run_id + "/" +
                    std::to_string(summary.try_number.value_or(-9)));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST_P(SpanStoreConformance, SpansInManyBatchesIndexAsTheSameSpansInOne) {
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomBatchTraces traces(seed);
    const std::vector<Span> arrivals = traces.Make(6);

    TestBackend batched_backend;
    ASSERT_TRUE(batched_backend.Create(GetParam())) << batched_backend.problem();
    TestBackend whole_backend;
    ASSERT_TRUE(whole_backend.Create(GetParam())) << whole_backend.problem();
    {
      auto batched = batched_backend.Open();
      auto whole = whole_backend.Open();
      ASSERT_NE(batched, nullptr);
      ASSERT_NE(whole, nullptr);
      std::mt19937 sizes(seed);
      for (std::size_t at = 0; at < arrivals.size();) {
        const std::size_t size = std::min(
            arrivals.size() - at, std::size_t{1} + std::uniform_int_distribution<std::size_t>(0, 7)(sizes));
        auto written = batched->Write(std::span<const Span>(arrivals).subspan(at, size));
        ASSERT_TRUE(written.ok()) << written.error().ToString();
        at += size;
      }
      auto written = whole->Write(arrivals);
      ASSERT_TRUE(written.ok()) << written.error().ToString();

      const auto rows = AttemptRowsOf(*whole);
      ASSERT_FALSE(rows.empty());
      EXPECT_EQ(AttemptRowsOf(*batched), rows);
      EXPECT_EQ(SummaryLinesOf(*batched), SummaryLinesOf(*whole));
    }
    batched_backend.Destroy();
    whole_backend.Destroy();
  }
}

// A batch of more traces than a statement writes summaries for (the SQLite writer looks up and inserts
// 32 at a time, rows/sqlite_new_summaries.h), some stored already, in and at the edges of the chunks:
// the new ones are created from the batch and the stored ones updated, as when each trace comes alone.
TEST_P(SpanStoreConformance, AWideBatchOfNewAndStoredTracesIndexesAsTracesOneByOne) {
  using testing_spans::kBase;
  using testing_spans::kMs;
  constexpr std::uint32_t kTraces = 75;
  const std::vector<std::uint32_t> stored_first = {1, 2, 32, 33, 40, 64, 65, 75};
  const auto call = [](std::uint32_t trace, std::uint32_t span) {
    Span made = testing_spans::MakeSpan(trace, span, span == 1 ? 0 : 1, std::string(kSparkConnectOperationSpanName),
                                        kBase + (trace * 10 + span) * kMs, kBase + (trace * 10 + span + 4) * kMs);
    if (trace % 3 != 0) {  // two in three carry a task's identity, the rest none
      made.attributes = {{std::string(kAirflowDagIdKey), std::string("etl")},
                         {std::string(kAirflowTaskIdKey), std::string("wide")},
                         {std::string(kAirflowRunIdKey), std::string("manual__1")},
                         {std::string(kAirflowTryNumberKey), std::int64_t{1}}};
    }
    if (trace % 7 == 0) made.status_code = StatusCode::kError;
    return made;
  };
  std::vector<Span> first;
  first.reserve(stored_first.size());
  for (std::uint32_t trace : stored_first) first.push_back(call(trace, 1));
  std::vector<Span> wide;
  wide.reserve(kTraces);
  for (std::uint32_t trace = 1; trace <= kTraces; ++trace) {
    const bool stored = std::find(stored_first.begin(), stored_first.end(), trace) != stored_first.end();
    wide.push_back(call(trace, stored ? 2 : 1));
  }

  TestBackend wide_backend;
  ASSERT_TRUE(wide_backend.Create(GetParam())) << wide_backend.problem();
  TestBackend alone_backend;
  ASSERT_TRUE(alone_backend.Create(GetParam())) << alone_backend.problem();
  {
    auto wide_store = wide_backend.Open();
    auto alone_store = alone_backend.Open();
    ASSERT_NE(wide_store, nullptr);
    ASSERT_NE(alone_store, nullptr);
    ASSERT_TRUE(wide_store->Write(first).ok());
    auto written = wide_store->Write(wide);
    ASSERT_TRUE(written.ok()) << written.error().ToString();
    EXPECT_EQ(written->spans_written, kTraces);
    for (const Span& span : first) ASSERT_TRUE(alone_store->Write(std::vector<Span>{span}).ok());
    for (const Span& span : wide) ASSERT_TRUE(alone_store->Write(std::vector<Span>{span}).ok());

    const std::vector<std::string> summaries = SummaryLinesOf(*alone_store);
    ASSERT_EQ(summaries.size(), kTraces);
    EXPECT_EQ(std::count_if(summaries.begin(), summaries.end(),
                            [](const std::string& line) { return line.find(" spans 2 ") != std::string::npos; }),
              static_cast<std::ptrdiff_t>(stored_first.size()));
    EXPECT_EQ(SummaryLinesOf(*wide_store), summaries);
    const auto rows = AttemptRowsOf(*alone_store);
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(AttemptRowsOf(*wide_store), rows);
  }
  wide_backend.Destroy();
  alone_backend.Destroy();
}

}  // namespace
}  // namespace sparktrace::tracing::store

namespace sparktrace::tracing::store {
namespace {

// An attempt of a call per trace, its calls arriving one batch at a time, one of them first as the
// running snapshot: the row counts it running, then done.
TEST_P(SpanStoreConformance, AnAttemptOfACallPerTraceFollowsEachCallAsItArrives) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const auto call = [](std::uint32_t trace, bool running) {
    Span span = testing_spans::MakeSpan(trace, 1, 0, std::string(kSparkConnectOperationSpanName),
                                        testing_spans::kBase + trace * testing_spans::kMs,
                                        testing_spans::kBase + (trace + 5) * testing_spans::kMs);
    span.attributes = {{std::string(kAirflowDagIdKey), std::string("etl")},
                       {std::string(kAirflowTaskIdKey), std::string("calls")},
                       {std::string(kAirflowRunIdKey), std::string("manual__1")},
                       {std::string(kAirflowTryNumberKey), std::int64_t{1}}};
    if (running)
      span.attributes.push_back({std::string(kSparkConnectOperationStateKey), std::string("running")});
    return span;
  };
  const auto row = [&store]() -> TaskAttemptRow {
    TaskAttemptFilter filter;
    filter.task_id = "calls";
    auto page = store->ListTaskAttempts(filter);
    EXPECT_TRUE(page.ok() && page->rows.size() == 1);
    return page.ok() && page->rows.size() == 1 ? page->rows.front() : TaskAttemptRow{};
  };
  ASSERT_TRUE(store->Write(std::vector<Span>{call(3, false)}).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>{call(1, true)}).ok());
  EXPECT_EQ(row().open_count, 1);
  EXPECT_EQ(row().state, "running");
  ASSERT_TRUE(store->Write(std::vector<Span>{call(2, false), call(1, false)}).ok());
  const TaskAttemptRow done = row();
  EXPECT_EQ(done.open_count, 0);
  EXPECT_EQ(done.state, "success");
  EXPECT_EQ(done.span_count, 3);
  EXPECT_EQ(done.trace_ids,
            (std::vector<std::string>{ToHex(testing_spans::TraceIdOf(1)), ToHex(testing_spans::TraceIdOf(2)),
                                      ToHex(testing_spans::TraceIdOf(3))}));
  EXPECT_EQ(done.start_unix_nano, testing_spans::kBase + testing_spans::kMs);
  EXPECT_EQ(done.end_unix_nano, testing_spans::kBase + 8 * testing_spans::kMs);
}

}  // namespace
}  // namespace sparktrace::tracing::store

namespace sparktrace::tracing::store {
namespace {

// An Airflow task span sent again with another start is kept as stored (the upsert's rule): a later
// batch that carries it changes neither the trace's summary nor its attempt.
TEST_P(SpanStoreConformance, AnAirflowTaskSpanTheStoreKeepsIsNotCountedAgain) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  using testing_spans::kBase;
  using testing_spans::kMs;
  Span task = testing_spans::MakeSpan(7, 1, 0, std::string(kAirflowTaskSpanName), kBase + 10 * kMs,
                                      kBase + 100 * kMs);
  task.attributes = {{std::string(kAirflowDagIdKey), std::string("etl")},
                     {std::string(kAirflowTaskIdKey), std::string("load")},
                     {std::string(kAirflowRunIdKey), std::string("manual__1")},
                     {std::string(kAirflowTryNumberKey), std::int64_t{1}}};
  const Span child = testing_spans::MakeSpan(7, 2, 1, "rpc", kBase + 20 * kMs, kBase + 30 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{task, child}).ok());
  Span moved = task;  // another start: not a newer version of the same report
  moved.start_time_unix_nano = kBase + 5 * kMs;
  moved.end_time_unix_nano = kBase + 300 * kMs;
  moved.status_code = StatusCode::kError;
  const Span later = testing_spans::MakeSpan(7, 3, 1, "rpc", kBase + 40 * kMs, kBase + 50 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{moved, later}).ok());

  TraceFilter every;
  auto summaries = store->ListTraces(every);
  ASSERT_TRUE(summaries.ok());
  ASSERT_EQ(summaries->size(), 1u);
  EXPECT_EQ(summaries->front().span_count, 3u);
  EXPECT_EQ(summaries->front().error_count, 0u);
  EXPECT_EQ(summaries->front().start_time_unix_nano, kBase + 10 * kMs);
  EXPECT_EQ(summaries->front().end_time_unix_nano, kBase + 100 * kMs);
  TaskAttemptFilter filter;
  filter.task_id = "load";
  auto page = store->ListTaskAttempts(filter);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows.front().span_count, 3);
  EXPECT_EQ(page->rows.front().start_unix_nano, kBase + 10 * kMs);
  EXPECT_EQ(page->rows.front().end_unix_nano, kBase + 100 * kMs);
}

}  // namespace
}  // namespace sparktrace::tracing::store
