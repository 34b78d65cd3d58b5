// The cost model (diagnose/cost/cost_model.h) over inputs read from hand-built spans
// (traceview/cost_of_spans.h): a dedicated application whose executors come and go within the
// window, a shared Spark Connect server split by task time, prices, and the spans that cannot be
// costed. Times in ms after kOriginMs.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/traceview/traceview_span_builders.h"
#include "traceview/cost_of_spans.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

using traceview_test::At;
using traceview_test::kOriginMs;
using traceview_test::MakeSpan;
using tracing::Span;
using diagnose::cost::AttemptCost;
using diagnose::cost::ComputeCost;
using diagnose::cost::CostBasis;
using diagnose::cost::CostPrices;

constexpr std::int64_t kBytesPerGiB = 1024LL * 1024 * 1024;

using traceview_test::MsAfterOrigin;

void AddChange(Span& span, bool added, double at, std::int64_t active, std::int64_t cores_active) {
  span.events.push_back({std::string(added ? tracing::kExecutorAddedEvent : tracing::kExecutorRemovedEvent),
                         At(at),
                         {{"spark.executor.id", std::string("x")},
                          {std::string(tracing::kExecutorCores), std::int64_t{4}},
                          {std::string(tracing::kExecutorsActive), active},
                          {std::string(tracing::kExecutorCoresActive), cores_active}}});
}

// Executors of 4 GiB heap + 1 GiB overhead, a driver of 1 core and 1 + 1 GiB.
void AddResources(Span& span) {
  span.attributes.push_back({std::string(tracing::kExecutorMemoryBytes), 4 * kBytesPerGiB});
  span.attributes.push_back({std::string(tracing::kExecutorMemoryOverheadBytes), 1 * kBytesPerGiB});
  span.attributes.push_back({std::string(tracing::kDriverCores), std::int64_t{1}});
  span.attributes.push_back({std::string(tracing::kDriverMemoryBytes), 1 * kBytesPerGiB});
  span.attributes.push_back({std::string(tracing::kDriverMemoryOverheadBytes), 1 * kBytesPerGiB});
}

Span Lifecycle(std::uint32_t id, std::uint32_t parent, double start, double end, std::string operation_id,
               std::int64_t executors, std::int64_t cores) {
  Span span = MakeSpan("spark.connect.operation.lifecycle", id, parent, start, end,
                       {{"spark.connect.operation_id", std::move(operation_id)},
                        {std::string(tracing::kExecutorsActiveAtStart), executors},
                        {std::string(tracing::kExecutorCoresAtStart), cores}});
  AddResources(span);
  return span;
}

Span Job(std::uint32_t id, std::uint32_t parent, double start, double end, std::string operation_id) {
  return MakeSpan(
      "spark.job", id, parent, start, end,
      {{"spark.job.id", std::int64_t{id}}, {"spark.connect.operation_id", std::move(operation_id)}});
}

Span Stage(std::uint32_t id, std::uint32_t parent, double start, double end, std::int64_t run_time_ms) {
  return MakeSpan(
      "spark.stage", id, parent, start, end,
      {{"spark.stage.id", std::int64_t{id}}, {std::string(tracing::kStageExecutorRunTimeMs), run_time_ms}});
}

// One operation over 0..100 s: 1 executor (4 cores) at the start, a second at 20 s, one removed at
// 60 s; a stage with 280 s of task time.
std::vector<Span> DedicatedAttempt() {
  Span lifecycle = Lifecycle(2, 1, 0, 100'000, "op", 1, 4);
  AddChange(lifecycle, true, 20'000, 2, 8);
  AddChange(lifecycle, false, 60'000, 1, 4);
  return {MakeSpan("spark_connect.operation", 1, 0, 0, 100'000), lifecycle, Job(3, 1, 10'000, 90'000, "op"),
          Stage(4, 3, 10'000, 90'000, 280'000)};
}

AttemptCost CostOf(const std::vector<Span>& spans, double start, double end, const CostPrices& prices = {}) {
  return ComputeCost(CostInputsOfSpans(spans, MsAfterOrigin(start), MsAfterOrigin(end)), prices);
}

TEST(AttemptCost, ADedicatedApplicationIsChargedWholeWithExecutorsAddedAndRemoved) {
  const AttemptCost cost = CostOf(DedicatedAttempt(), 0, 100'000);
  ASSERT_TRUE(cost.known);
  EXPECT_FALSE(cost.shared);
  EXPECT_DOUBLE_EQ(cost.share, 1.0);
  // Cores: 4 × 20 s + 8 × 40 s + 4 × 40 s = 560; the driver's 1 × 100 s.
  EXPECT_DOUBLE_EQ(cost.executor_core_seconds, 560);
  EXPECT_DOUBLE_EQ(cost.driver_core_seconds, 100);
  EXPECT_DOUBLE_EQ(cost.core_seconds, 660);
  // Memory: executors 20 + 80 + 40 = 140 executor-seconds × 5 GiB, and the driver's 2 GiB × 100 s.
  ASSERT_TRUE(cost.gib_seconds);
  EXPECT_DOUBLE_EQ(*cost.gib_seconds, 900);
  EXPECT_DOUBLE_EQ(cost.used_core_seconds, 280);
  ASSERT_TRUE(cost.idle_fraction);
  EXPECT_DOUBLE_EQ(*cost.idle_fraction, 0.5);  // 1 − 280 / 560: the driver runs no tasks
  EXPECT_FALSE(cost.money);
  EXPECT_EQ(CostBasis(cost), "the application's executors over the attempt's window");
}

TEST(AttemptCost, TheWindowIsTheAttemptsAndTheCountHoldsBeyondTheFacts) {
  // The attempt (an Airflow task around the call) runs 100 s longer: one executor of 4 cores and the
  // driver are its for that time too.
  const AttemptCost cost = CostOf(DedicatedAttempt(), 0, 200'000);
  EXPECT_DOUBLE_EQ(cost.executor_core_seconds, 560 + 4 * 100);
  EXPECT_DOUBLE_EQ(cost.driver_core_seconds, 200);
}

TEST(AttemptCost, PricesTurnResourceSecondsIntoMoney) {
  const AttemptCost cost = CostOf(DedicatedAttempt(), 0, 100'000, {.core_hour = 0.036, .gib_hour = 0.0036});
  ASSERT_TRUE(cost.money);
  EXPECT_NEAR(cost.money->cores, 660.0 / 3600 * 0.036, 1e-12);
  EXPECT_NEAR(cost.money->memory, 900.0 / 3600 * 0.0036, 1e-12);
  EXPECT_NEAR(cost.money->total, cost.money->cores + cost.money->memory, 1e-12);
  const AttemptCost cores_only = CostOf(DedicatedAttempt(), 0, 100'000, {.core_hour = 3.6, .gib_hour = {}});
  ASSERT_TRUE(cores_only.money);
  EXPECT_NEAR(cores_only.money->total, 660.0 / 1000, 1e-12);
  EXPECT_EQ(cores_only.money->memory, 0);
}

TEST(AttemptCost, ASharedServerIsSplitByTheAttemptsShareOfTaskTime) {
  // The attempt's task wraps its one operation (50..150 s); while it ran, 2 other operations ran 300 s
  // of tasks on the server's 8 cores, the attempt's own stage 100 s: its share is a quarter.
  Span lifecycle = Lifecycle(2, 1, 50'000, 150'000, "op-a", 2, 8);
  lifecycle.attributes.push_back({std::string(tracing::kOthersRunTimeMs), std::int64_t{300'000}});
  lifecycle.attributes.push_back({std::string(tracing::kOtherOperations), std::int64_t{2}});
  const std::vector<Span> spans = {MakeSpan("airflow.task", 9, 0, 0, 200'000),
                                   MakeSpan("spark_connect.operation", 1, 9, 50'000, 150'000), lifecycle,
                                   Job(3, 1, 60'000, 140'000, "op-a"), Stage(4, 3, 60'000, 140'000, 100'000)};
  const AttemptCost cost = CostOf(spans, 0, 200'000);
  ASSERT_TRUE(cost.known);
  EXPECT_TRUE(cost.shared);
  EXPECT_EQ(cost.other_operations, 2);
  EXPECT_DOUBLE_EQ(cost.share, 0.25);
  // Only the operation's 100 s are charged (the server is the others' outside it), at a quarter.
  EXPECT_DOUBLE_EQ(cost.executor_core_seconds, 8 * 100 * 0.25);
  EXPECT_DOUBLE_EQ(cost.driver_core_seconds, 1 * 100 * 0.25);
  EXPECT_DOUBLE_EQ(*cost.gib_seconds, (2 * 5 + 2) * 100 * 0.25);
  EXPECT_DOUBLE_EQ(cost.used_core_seconds, 100);
  EXPECT_DOUBLE_EQ(*cost.idle_fraction, 0.5);  // the server's: 400 s of tasks on 800 core-seconds
  EXPECT_EQ(CostBasis(cost),
            "shared with 2 other operations: split by task time (25% of the executors' time while its "
            "operations ran)");
}

TEST(AttemptCost, AServerNobodyElseUsedMeanwhileIsNotShared) {
  std::vector<Span> spans = DedicatedAttempt();
  spans[1].attributes.push_back({std::string(tracing::kOthersRunTimeMs), std::int64_t{0}});
  spans[1].attributes.push_back({std::string(tracing::kOtherOperations), std::int64_t{0}});
  const AttemptCost cost = CostOf(spans, 0, 100'000);
  EXPECT_FALSE(cost.shared);
  EXPECT_DOUBLE_EQ(cost.executor_core_seconds, 560);
}

TEST(AttemptCost, OperationsWithoutTasksShareTheServerAlike) {
  Span lifecycle = Lifecycle(2, 1, 0, 100'000, "op-a", 1, 4);
  lifecycle.attributes.push_back({std::string(tracing::kOthersRunTimeMs), std::int64_t{0}});
  lifecycle.attributes.push_back({std::string(tracing::kOtherOperations), std::int64_t{3}});
  const AttemptCost cost =
      CostOf({MakeSpan("spark_connect.operation", 1, 0, 0, 100'000), lifecycle}, 0, 100'000);
  EXPECT_TRUE(cost.shared);
  EXPECT_DOUBLE_EQ(cost.share, 0.25);
  EXPECT_DOUBLE_EQ(cost.executor_core_seconds, 100);
}

TEST(AttemptCost, UnknownWithoutExecutorFactsOrWithCountsOnly) {
  EXPECT_FALSE(CostOf({MakeSpan("spark_connect.operation", 1, 0, 0, 100'000)}, 0, 100'000).known);
  // Spans stored before the cores were written: counts alone do not say how many cores.
  Span old = MakeSpan("spark.connect.operation.lifecycle", 2, 0, 0, 100'000,
                      {{std::string(tracing::kExecutorsActiveAtStart), std::int64_t{2}}});
  const AttemptCost cost = CostOf({old}, 0, 100'000, {.core_hour = 1.0, .gib_hour = {}});
  EXPECT_FALSE(cost.known);
  EXPECT_FALSE(cost.money);
}

TEST(AttemptCost, MemoryUnknownLeavesGibSecondsAndTheirMoneyOut) {
  Span lifecycle = MakeSpan("spark.connect.operation.lifecycle", 2, 0, 0, 100'000,
                            {{std::string(tracing::kExecutorsActiveAtStart), std::int64_t{1}},
                             {std::string(tracing::kExecutorCoresAtStart), std::int64_t{4}}});
  const AttemptCost cost = CostOf({lifecycle}, 0, 100'000, {.core_hour = {}, .gib_hour = 1.0});
  ASSERT_TRUE(cost.known);
  EXPECT_DOUBLE_EQ(cost.core_seconds, 400);  // no driver facts: its cores are not counted
  EXPECT_FALSE(cost.gib_seconds);
  EXPECT_FALSE(cost.money);  // a memory price without memory figures: no half-priced total
}

}  // namespace
}  // namespace sparktrace::traceview
