// The settler (traceview/attempt_settler.h) over a real SQLite store: an ended attempt is settled
// once with the figures its page shows, counted by (dag, task) by the settler that claimed it only,
// re-settled after a late span with only the growth counted; and the bounded label sets of
// traceview/settler_metrics.h.

#include "traceview/attempt_settler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/traceview/sqlite_store_fixture.h"
#include "tests/unit/traceview/traceview_span_builders.h"
#include "traceview/settler_metrics.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::traceview {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;
using traceview_test::At;
using traceview_test::MakeSpan;
using tracing::Span;

constexpr std::int64_t kGiB = 1024LL * 1024 * 1024;

tracing::TraceId TraceOf(std::uint8_t n) {
  tracing::TraceId id{};
  id[15] = n;
  return id;
}

// etl.<task> run <run> try 1 over 0..100 s in trace `trace`: an operation whose driver had one
// executor of 4 cores at the start, a second from 20 s, one removed at 60 s, and a stage with 280 s of
// task time. Its cost (traceview_attempt_cost_test.cc, the dedicated attempt): 660 core-seconds, 900
// GiB-seconds, idle 0.5. `running` leaves its job running.
std::vector<Span> Attempt(std::uint8_t trace, const std::string& task, const std::string& run,
                          bool running = false) {
  Span operation = MakeSpan("spark_connect.operation", 1, 0, 0, 100'000,
                            {{"airflow.dag_id", std::string("etl")},
                             {"airflow.task_id", task},
                             {"airflow.run_id", run},
                             {"airflow.try_number", std::int64_t{1}}});
  Span lifecycle = MakeSpan("spark.connect.operation.lifecycle", 2, 1, 0, 100'000,
                            {{"spark.connect.operation_id", std::string("op")},
                             {std::string(tracing::kExecutorsActiveAtStart), std::int64_t{1}},
                             {std::string(tracing::kExecutorCoresAtStart), std::int64_t{4}},
                             {std::string(tracing::kExecutorMemoryBytes), 4 * kGiB},
                             {std::string(tracing::kExecutorMemoryOverheadBytes), 1 * kGiB},
                             {std::string(tracing::kDriverCores), std::int64_t{1}},
                             {std::string(tracing::kDriverMemoryBytes), 1 * kGiB},
                             {std::string(tracing::kDriverMemoryOverheadBytes), 1 * kGiB}});
  const auto change = [&lifecycle](bool added, double at, std::int64_t active, std::int64_t cores) {
    lifecycle.events.push_back(
        {std::string(added ? tracing::kExecutorAddedEvent : tracing::kExecutorRemovedEvent),
         At(at),
         {{"spark.executor.id", std::string("x")},
          {std::string(tracing::kExecutorCores), std::int64_t{4}},
          {std::string(tracing::kExecutorsActive), active},
          {std::string(tracing::kExecutorCoresActive), cores}}});
  };
  change(true, 20'000, 2, 8);
  change(false, 60'000, 1, 4);
  Span job = MakeSpan("spark.job", 3, 1, 10'000, 90'000,
                      {{"spark.job.id", std::int64_t{3}},
                       {"spark.connect.operation_id", std::string("op")},
                       {"spark.job.status", std::string(running ? "running" : "succeeded")}});
  Span stage = MakeSpan("spark.stage", 4, 3, 10'000, 90'000,
                        {{"spark.stage.id", std::int64_t{4}},
                         {std::string(tracing::kStageExecutorRunTimeMs), std::int64_t{280'000}}});
  std::vector<Span> spans = {operation, lifecycle, job, stage};
  for (Span& span : spans) span.trace_id = TraceOf(trace);
  return spans;
}

// The value of `name`'s sample with these labels, or nullopt.
std::optional<double> Sample(const SettlerMetrics& metrics, const std::string& name,
                             const std::map<std::string, std::string>& labels = {}) {
  for (const auto& family : metrics.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      std::map<std::string, std::string> have;
      for (const auto& label : metric.label) have[label.name] = label.value;
      if (have != labels) continue;
      return family.type == prometheus::MetricType::Gauge ? metric.gauge.value : metric.counter.value;
    }
  }
  return std::nullopt;
}

const std::map<std::string, std::string> kLoad = {{"dag", "etl"}, {"task", "load"}};

class AttemptSettlerTest : public traceview_test::SqliteStoreFixture {
 protected:
  AttemptSettlerTest() : SqliteStoreFixture("sparktrace-settler-") {}

  static SettlerOptions Options() {
    SettlerOptions options;
    options.quiet = seconds(0);
    options.prices.core_hour = 3.6;  // 660 core-seconds: 0.66
    options.prices.gib_hour = 0.36;  // 900 GiB-seconds: 0.09
    return options;
  }

  // A moment after every write so far, past the quiet period of zero.
  static system_clock::time_point Now() { return system_clock::now() + seconds(1); }

};

TEST_F(AttemptSettlerTest, SettlesAnEndedAttemptWithThePagesFiguresAndCountsItByTask) {
  Write(Attempt(1, "load", "r1"));
  auto metrics = std::make_shared<SettlerMetrics>(100, true);
  AttemptSettler settler(Options(), metrics);
  auto pass = settler.RunPass(*writer_, Now());
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->settled, 1u);
  EXPECT_EQ(pass->backlog, 1);

  auto page = writer_->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  ASSERT_TRUE(page->rows[0].settled.has_value());
  const tracing::store::SettledFigures& figures = *page->rows[0].settled;
  EXPECT_DOUBLE_EQ(*figures.core_seconds, 660);
  EXPECT_DOUBLE_EQ(*figures.gib_seconds, 900);
  EXPECT_NEAR(*figures.money, 0.75, 1e-9);
  EXPECT_DOUBLE_EQ(*figures.idle_fraction, 0.5);
  EXPECT_FALSE(figures.regression);

  EXPECT_EQ(Sample(*metrics, "sparktrace_attempts_settled_total"), 1);
  EXPECT_EQ(Sample(*metrics, "sparktrace_task_core_seconds_total", kLoad), 660);
  EXPECT_EQ(Sample(*metrics, "sparktrace_task_gib_seconds_total", kLoad), 900);
  EXPECT_NEAR(*Sample(*metrics, "sparktrace_task_cost_total", kLoad), 0.75, 1e-9);
  EXPECT_EQ(Sample(*metrics, "sparktrace_task_regressions_total", kLoad), 0);

  auto again = settler.RunPass(*writer_, Now());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->settled, 0u);
  EXPECT_EQ(again->backlog, 0);
  EXPECT_EQ(Sample(*metrics, "sparktrace_attempts_unsettled"), 0);
  EXPECT_EQ(Sample(*metrics, "sparktrace_task_core_seconds_total", kLoad), 660);
}

TEST_F(AttemptSettlerTest, ARunningAttemptOrOneNotQuietYetWaits) {
  Write(Attempt(1, "load", "r1", /*running=*/true));
  auto metrics = std::make_shared<SettlerMetrics>(100, false);
  SettlerOptions options = Options();
  AttemptSettler settler(options, metrics);
  auto running = settler.RunPass(*writer_, Now());
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->settled, 0u);

  Write(Attempt(1, "load", "r1"));
  options.quiet = std::chrono::hours(1);
  AttemptSettler patient(options, metrics);
  auto too_soon = patient.RunPass(*writer_, Now());
  ASSERT_TRUE(too_soon.ok());
  EXPECT_EQ(too_soon->settled, 0u);
  EXPECT_EQ(too_soon->backlog, 1);
  EXPECT_EQ(Sample(*metrics, "sparktrace_attempts_unsettled"), 1);
  EXPECT_EQ(Sample(*metrics, "sparktrace_task_core_seconds_total", kLoad), std::nullopt);
}

// Two proxies sharing one store, each with its own settler and /metrics: the attempt is counted by one.
TEST_F(AttemptSettlerTest, TwoSettlersOnOneStoreCountAnAttemptOnce) {
  Write(Attempt(1, "load", "r1"));
  Write(Attempt(2, "load", "r2"));
  auto first_metrics = std::make_shared<SettlerMetrics>(100, true);
  auto second_metrics = std::make_shared<SettlerMetrics>(100, true);
  std::latch start(2);
  const auto run = [&](const std::shared_ptr<SettlerMetrics>& metrics) {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    AttemptSettler settler(Options(), metrics);
    start.arrive_and_wait();
    auto pass = settler.RunPass(*store, Now());
    EXPECT_TRUE(pass.ok()) << pass.error().message;
  };
  std::thread other([&] { run(second_metrics); });
  run(first_metrics);
  other.join();
  const double settled = *Sample(*first_metrics, "sparktrace_attempts_settled_total") +
                         *Sample(*second_metrics, "sparktrace_attempts_settled_total");
  EXPECT_EQ(settled, 2);
  const double cores = Sample(*first_metrics, "sparktrace_task_core_seconds_total", kLoad).value_or(0) +
                       Sample(*second_metrics, "sparktrace_task_core_seconds_total", kLoad).value_or(0);
  EXPECT_DOUBLE_EQ(cores, 2 * 660);
  const double conflicts = *Sample(*first_metrics, "sparktrace_attempts_settle_conflicts_total") +
                           *Sample(*second_metrics, "sparktrace_attempts_settle_conflicts_total");
  // A settler that listed an attempt the other recorded first counts a conflict, not the attempt.
  EXPECT_LE(conflicts, 2);
}

// The same, with the listing of both settlers before either records (as when they run at once on
// PostgreSQL): the second one's claims fail.
TEST_F(AttemptSettlerTest, ASettlerThatListedTooLateCountsAConflictInstead) {
  Write(Attempt(1, "load", "r1"));
  auto late_store = Open();
  ASSERT_NE(late_store, nullptr);
  auto listed = late_store->ListDueAttempts(Now(), seconds(0), 10);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->due.size(), 1u);

  auto first_metrics = std::make_shared<SettlerMetrics>(100, true);
  AttemptSettler first(Options(), first_metrics);
  ASSERT_EQ(first.RunPass(*writer_, Now())->settled, 1u);
  auto claim = late_store->RecordSettlement(listed->due[0].ref, listed->due[0].indexed_unix_nano, {});
  ASSERT_TRUE(claim.ok());
  EXPECT_FALSE(claim->claimed);
}

TEST_F(AttemptSettlerTest, ALateSpanResettlesAndTheCountersGetOnlyTheGrowth) {
  Write(Attempt(1, "load", "r1"));
  auto metrics = std::make_shared<SettlerMetrics>(100, true);
  AttemptSettler settler(Options(), metrics);
  ASSERT_EQ(settler.RunPass(*writer_, Now())->settled, 1u);

  // A second operation of the attempt, 100..200 s, on the same application: the window doubles.
  std::vector<Span> late = Attempt(2, "load", "r1");
  for (Span& span : late) {
    span.start_time_unix_nano += 100'000'000'000ULL;
    span.end_time_unix_nano += 100'000'000'000ULL;
    for (auto& event : span.events) event.time_unix_nano += 100'000'000'000ULL;
  }
  Write(late);
  auto page = writer_->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_TRUE(page->rows[0].settled.has_value());
  EXPECT_FALSE(page->rows[0].settled_current);
  auto pass = settler.RunPass(*writer_, Now());
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->settled, 1u);
  page = writer_->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  const double core_seconds = *page->rows[0].settled->core_seconds;
  EXPECT_GT(core_seconds, 660);
  EXPECT_TRUE(page->rows[0].settled_current);
  EXPECT_EQ(Sample(*metrics, "sparktrace_attempts_settled_total"), 2);
  EXPECT_DOUBLE_EQ(*Sample(*metrics, "sparktrace_task_core_seconds_total", kLoad), core_seconds);
}

TEST(SettlerMetrics, PairsPastTheCapShareTheOverflowSeries) {
  SettlerMetrics metrics(2, false);
  metrics.AddSettled("etl", "a", {1, 2, 0, false});
  metrics.AddSettled("etl", "b", {1, 2, 0, true});
  metrics.AddSettled("etl", "c", {5, 6, 0, true});
  metrics.AddSettled("other_dag", "d", {5, 6, 0, false});
  metrics.AddSettled("etl", "a", {1, 2, 0, false});
  const std::map<std::string, std::string> overflow = {{"dag", "(other)"}, {"task", "(other)"}};
  EXPECT_EQ(Sample(metrics, "sparktrace_task_core_seconds_total", {{"dag", "etl"}, {"task", "a"}}), 2);
  EXPECT_EQ(Sample(metrics, "sparktrace_task_core_seconds_total", overflow), 10);
  EXPECT_EQ(Sample(metrics, "sparktrace_task_regressions_total", overflow), 1);
  EXPECT_EQ(Sample(metrics, "sparktrace_task_core_seconds_total", {{"dag", "etl"}, {"task", "c"}}),
            std::nullopt);
  EXPECT_EQ(Sample(metrics, "sparktrace_task_metric_series_overflow_total"), 2);
  EXPECT_EQ(Sample(metrics, "sparktrace_attempts_settled_total"), 5);
  // Without prices the cost family has no samples.
  EXPECT_EQ(Sample(metrics, "sparktrace_task_cost_total", overflow), std::nullopt);
}

}  // namespace
}  // namespace sparktrace::traceview
