// The trace stores' conformance suite, shared traces: an attempt is (dag, task, run, try, map) wherever
// its spans sit. Airflow 2.10's one trace per DAG run (shared_dag_run_spans.h), written in three
// writes with the Airflow task report before, between or after the Spark spans: every attempt is one
// row of the task index with its own identity, times, counts, phases and state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/shared_dag_run_spans.h"
#include "tests/unit/tracing/store/span_store_conformance_test_support.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers
using shared_dag_run::DagRun;
using shared_dag_run::ExpectedAttempt;
using shared_dag_run::ReportArrives;

// Instantiated for each backend in span_store_conformance_test.cc.

std::string Describe(const TaskAttemptKey& key) {
  return key.task_id + " run " + key.run_id + " try " + std::to_string(key.try_number) + " map " +
         std::to_string(key.map_index);
}

void ExpectRow(const TaskAttemptRow& row, const ExpectedAttempt& expected, const DagRun& run) {
  SCOPED_TRACE(Describe(expected.key));
  EXPECT_TRUE(row.airflow);
  EXPECT_EQ(Describe(row.key), Describe(expected.key));
  EXPECT_EQ(row.name, "etl." + expected.key.task_id);
  EXPECT_EQ(row.trace_ids, std::vector<std::string>{ToHex(run.trace_id)});
  EXPECT_EQ(row.start_unix_nano, expected.start_unix_nano);
  EXPECT_EQ(row.end_unix_nano, expected.end_unix_nano);
  EXPECT_EQ(row.span_count, expected.span_count);
  EXPECT_EQ(row.error_count, expected.error_count);
  EXPECT_EQ(row.open_count, expected.open_count);
  EXPECT_EQ(row.state, expected.state);
  EXPECT_EQ(row.phase_ms[static_cast<std::size_t>(tracing::SparkPhase::kResourceWait)], expected.resource_wait_ms);
  EXPECT_EQ(row.phase_ms[static_cast<std::size_t>(tracing::SparkPhase::kCompute)], expected.compute_ms);
}

TEST_P(SpanStoreConformance, EveryAttemptOfASharedDagRunTraceIsItsOwnRowWhereverItsReportArrives) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<DagRun> runs;
  std::uint32_t trace = 1;
  for (ReportArrives arrives : {ReportArrives::kBefore, ReportArrives::kBetween, ReportArrives::kAfter}) {
    runs.push_back(shared_dag_run::MakeDagRun(trace++, arrives));
    for (const std::vector<Span>& write : runs.back().writes) {
      auto written = store->Write(write);
      ASSERT_TRUE(written.ok()) << written.error().ToString();
    }
  }

  // Four attempts per run and nothing else: the DAG run's own span belongs to no attempt, and a trace
  // with Airflow spans has no row of its own.
  TaskAttemptFilter every;
  every.limit = 200;
  auto all = store->ListTaskAttempts(every);
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  EXPECT_EQ(all->total, 12);
  std::set<std::string> listed;
  for (const TaskAttemptRow& row : all->rows) {
    EXPECT_TRUE(row.airflow) << row.name;
    EXPECT_TRUE(listed.insert(Describe(row.key)).second) << "listed twice: " << Describe(row.key);
  }

  for (const DagRun& run : runs) {
    SCOPED_TRACE("report " + run.run_id);
    for (const ExpectedAttempt& expected : run.attempts) {
      // Found by its whole identity, as the attempt page and its API look it up.
      TaskAttemptFilter exact;
      exact.airflow_only = true;
      exact.dag_id = expected.key.dag_id;
      exact.task_id = expected.key.task_id;
      exact.run_id = expected.key.run_id;
      exact.try_number = expected.key.try_number;
      exact.map_index = expected.key.map_index;
      auto page = store->ListTaskAttempts(exact);
      ASSERT_TRUE(page.ok()) << page.error().ToString();
      ASSERT_EQ(page->total, 1) << Describe(expected.key);
      ASSERT_EQ(page->rows.size(), 1u);
      ExpectRow(page->rows[0], expected, run);
    }
    // The mapped task: one row per map index, none unmapped.
    TaskAttemptFilter publish;
    publish.task_id = "publish";
    publish.run_id = run.run_id;
    auto mapped = store->ListTaskAttempts(publish);
    ASSERT_TRUE(mapped.ok());
    std::vector<std::int64_t> maps;
    for (const TaskAttemptRow& row : mapped->rows) maps.push_back(row.key.map_index);
    std::sort(maps.begin(), maps.end());
    EXPECT_EQ(maps, (std::vector<std::int64_t>{3, 4}));
    publish.map_index = -1;
    auto unmapped = store->ListTaskAttempts(publish);
    ASSERT_TRUE(unmapped.ok());
    EXPECT_EQ(unmapped->total, 0);

    // The report's span is map 3's, whichever write it came in.
    auto spans = store->GetTrace(run.trace_id);
    ASSERT_TRUE(spans.ok());
    EXPECT_EQ(spans->size(), 17u);
    const auto report = std::find_if(spans->begin(), spans->end(),
                                     [](const Span& span) { return span.name == kAirflowTaskSpanName; });
    ASSERT_NE(report, spans->end());
    EXPECT_EQ(ToHex(report->span_id), ToHex(SpanIdOf(shared_dag_run::kAirflowTaskSpanOfPublish)));
    const auto* map_index = AttributeValueOf<std::int64_t>(report->attributes, kAirflowMapIndexKey);
    ASSERT_NE(map_index, nullptr);
    EXPECT_EQ(*map_index, 3);
  }

  // Map 3's application id (on its lifecycle span, written after the trace was created) finds the runs.
  auto by_app = store->TracesMatching("app-20240501-0001");
  ASSERT_TRUE(by_app.ok()) << by_app.error().ToString();
  std::vector<std::string> found = *by_app;
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<std::string>{ToHex(runs[0].trace_id), ToHex(runs[1].trace_id),
                                             ToHex(runs[2].trace_id)}));
}

// A trace without Airflow identity (a plain Spark application) is one row of its own; what the index
// reads of its spans is the same whether they came in one write or several.
TEST_P(SpanStoreConformance, ATraceWithoutIdentityWrittenInTwoWritesKeepsWhatItsSpansSay) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Span application = MakeSpan(5, 1, 0, std::string(kSparkApplicationSpanName), kBase, kBase + 900 * kMs);
  application.attributes = {{std::string(kSparkAppIdKey), std::string("app-plain-1")},
                            {std::string(kSparkAppNameKey), std::string("nightly rollup")},
                            {std::string(kSparkAppStatusKey), std::string("running")}};
  ASSERT_TRUE(store->Write(std::vector<Span>{MakeSpan(5, 2, 1, "spark.job", kBase, kBase + 10 * kMs)}).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>{application}).ok());
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->total, 1);
  EXPECT_FALSE(page->rows[0].airflow);
  EXPECT_EQ(page->rows[0].name, "nightly rollup");
  EXPECT_EQ(page->rows[0].state, "running");
  EXPECT_EQ(page->rows[0].span_count, 2);
  auto by_app = store->TracesMatching("app-plain-1");
  ASSERT_TRUE(by_app.ok());
  EXPECT_EQ(*by_app, std::vector<std::string>{ToHex(TraceIdOf(5))});
}

// The proxy's live snapshot of a running Spark 4 operation keeps its attempt running until the
// operation's final span, written over it with the same ids, ends it (docs/tracing.md, "Live progress").
TEST_P(SpanStoreConformance, ARunningOperationSnapshotKeepsItsAttemptRunningUntilTheFinalSpan) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Span operation = MakeSpan(6, 1, 0, std::string(kSparkConnectOperationSpanName), kBase, kBase + 200 * kMs);
  operation.attributes = {
      {std::string(kSparkConnectOperationStateKey), std::string(kSparkConnectOperationRunning)}};
  ASSERT_TRUE(store->Write(std::vector<Span>{operation}).ok());
  auto running = store->ListTaskAttempts({});
  ASSERT_TRUE(running.ok()) << running.error().ToString();
  ASSERT_EQ(running->total, 1);
  EXPECT_EQ(running->rows[0].state, "running");

  operation.end_time_unix_nano = kBase + 900 * kMs;
  operation.attributes = {{std::string(kSparkConnectOperationOutcomeKey), std::string("completed")}};
  ASSERT_TRUE(store->Write(std::vector<Span>{operation}).ok());
  auto ended = store->ListTaskAttempts({});
  ASSERT_TRUE(ended.ok()) << ended.error().ToString();
  ASSERT_EQ(ended->total, 1);
  EXPECT_EQ(ended->rows[0].state, "success");
  EXPECT_EQ(ended->rows[0].span_count, 1);
}

// A later write that changes nothing of an attempt leaves its row as it is: written again (a spool
// replay), each attempt of the shared trace keeps its identity and figures.
TEST_P(SpanStoreConformance, ASharedDagRunTraceWrittenAgainKeepsEachAttempt) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const DagRun run = shared_dag_run::MakeDagRun(7, ReportArrives::kAfter);
  for (int round = 0; round < 2; ++round) {
    for (const std::vector<Span>& write : run.writes) ASSERT_TRUE(store->Write(write).ok());
  }
  auto all = store->ListTaskAttempts({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->total, 4);
  for (const ExpectedAttempt& expected : run.attempts) {
    const auto row = std::find_if(all->rows.begin(), all->rows.end(),
                                  [&](const TaskAttemptRow& r) { return r.key == expected.key; });
    ASSERT_NE(row, all->rows.end()) << Describe(expected.key);
    ExpectRow(*row, expected, run);
  }
}

}  // namespace
}  // namespace sparktrace::tracing::store
