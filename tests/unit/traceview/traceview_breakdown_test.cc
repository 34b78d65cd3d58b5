// The exclusive six-phase breakdown (traceview/breakdown.h) on hand-made attempts; each expected
// figure is worked out in the comment above it, times in ms after kOriginMs.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tests/unit/traceview/traceview_span_builders.h"
#include "traceview/breakdown.h"
#include "tracing/span.h"

namespace sparktrace::traceview {
namespace {

using traceview_test::kOriginMs;
using traceview_test::MakeSpan;

tracing::Span Operation(std::uint32_t id, double start, double end, std::string plan_kind,
                        std::optional<std::int64_t> rows = std::nullopt) {
  tracing::Span span = MakeSpan("spark_connect.operation", id, 0, start, end,
                                {{"spark.connect.plan_kind", std::move(plan_kind)}});
  if (rows) span.attributes.push_back({"spark.connect.result.rows", *rows});
  return span;
}

tracing::Span Phase(const std::string& phase, std::uint32_t id, std::uint32_t parent, double start,
                    double end) {
  return MakeSpan("spark.phase." + phase, id, parent, start, end);
}

using Expected = std::tuple<ViewPhase, double, double>;  // phase, start, end (ms after the origin)

std::vector<Expected> Offsets(const Breakdown& breakdown) {
  std::vector<Expected> offsets;
  for (const PhaseInterval& interval : breakdown.intervals) {
    offsets.emplace_back(interval.phase, interval.start_ms - static_cast<double>(kOriginMs),
                         interval.end_ms - static_cast<double>(kOriginMs));
  }
  return offsets;
}

double Ms(const Breakdown& breakdown, ViewPhase phase) {
  return breakdown.ms[static_cast<std::size_t>(phase)];
}

void ExpectAddsUp(const Breakdown& breakdown) {
  const double sum = std::accumulate(breakdown.ms.begin(), breakdown.ms.end(), 0.0);
  EXPECT_DOUBLE_EQ(sum, breakdown.wall_ms());
  if (breakdown.intervals.empty()) return;
  EXPECT_EQ(breakdown.intervals.front().start_ms, breakdown.start_ms);
  EXPECT_EQ(breakdown.intervals.back().end_ms, breakdown.end_ms);
  for (std::size_t i = 1; i < breakdown.intervals.size(); ++i) {
    EXPECT_EQ(breakdown.intervals[i].start_ms, breakdown.intervals[i - 1].end_ms) << "contiguous at " << i;
    EXPECT_NE(breakdown.intervals[i].phase, breakdown.intervals[i - 1].phase) << "merged at " << i;
  }
}

TEST(TraceviewBreakdownTest, NamesAndLabelsInApiOrder) {
  const std::vector<std::string> names = {"client",   "resource_wait", "compute",
                                          "io_write", "idle",          "result_transfer"};
  const std::vector<std::string> labels = {"outside Spark", "resource wait", "compute",
                                           "I/O write",       "driver idle",   "result transfer"};
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    EXPECT_EQ(ViewPhaseName(static_cast<ViewPhase>(phase)), names[phase]);
    EXPECT_EQ(ViewPhaseLabel(static_cast<ViewPhase>(phase)), labels[phase]);
  }
}

TEST(TraceviewBreakdownTest, NoSpansIsAnEmptyBreakdown) {
  const Breakdown breakdown = ComputeBreakdown({});
  EXPECT_EQ(breakdown.wall_ms(), 0);
  EXPECT_TRUE(breakdown.intervals.empty());
  for (double ms : breakdown.ms) EXPECT_EQ(ms, 0);
}

// task [0,100]; command operations [10,30] and [50,70] with their RPCs.
//   client: [0,10] + [30,50] + [70,100] = 60;  idle: [10,30] + [50,70] = 40;  sum 100 = wall.
TEST(TraceviewBreakdownTest, ClientTimeBetweenCalls) {
  const std::vector<tracing::Span> spans = {
      MakeSpan("airflow.task", 1, 0, 0, 100),
      Operation(2, 10, 30, "command"),
      MakeSpan("spark.connect.SparkConnectService/ExecutePlan", 3, 2, 10, 30),
      Operation(4, 50, 70, "command"),
      MakeSpan("spark.connect.SparkConnectService/ExecutePlan", 5, 4, 50, 70),
  };
  const Breakdown breakdown = ComputeBreakdown(spans);
  EXPECT_EQ(breakdown.wall_ms(), 100);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kClient), 60);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kIdle), 40);
  const std::vector<Expected> expected = {{ViewPhase::kClient, 0, 10},
                                          {ViewPhase::kIdle, 10, 30},
                                          {ViewPhase::kClient, 30, 50},
                                          {ViewPhase::kIdle, 50, 70},
                                          {ViewPhase::kClient, 70, 100}};
  EXPECT_EQ(Offsets(breakdown), expected);
  ExpectAddsUp(breakdown);
}

// An RPC outside any operation (AnalyzePlan) is in flight too: [20,25] idle, the rest client.
TEST(TraceviewBreakdownTest, RpcAloneIsInFlight) {
  const std::vector<tracing::Span> spans = {
      MakeSpan("airflow.task", 1, 0, 0, 40),
      MakeSpan("spark.connect.SparkConnectService/AnalyzePlan", 2, 0, 20, 25),
  };
  const Breakdown breakdown = ComputeBreakdown(spans);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kIdle), 5);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kClient), 35);
  ExpectAddsUp(breakdown);
}

// One command operation [0,100] (no rows: no result transfer) with phase spans
//   resource_wait [5,20], compute [10,60], io_write [40,70], idle [70,100].
// resource_wait > io_write > compute > idle:
//   idle [0,5] 5 | rw [5,20] 15 | compute [20,40] 20 | io [40,70] 30 | idle [70,100] 30
//   idle 35 + rw 15 + compute 20 + io 30 = 100.
TEST(TraceviewBreakdownTest, PhasePrecedence) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 100, "command"), Phase("resource_wait", 2, 1, 5, 20), Phase("compute", 3, 1, 10, 60),
      Phase("io_write", 4, 1, 40, 70), Phase("idle", 5, 1, 70, 100),
  };
  const Breakdown breakdown = ComputeBreakdown(spans);
  const std::vector<Expected> expected = {{ViewPhase::kIdle, 0, 5},
                                          {ViewPhase::kResourceWait, 5, 20},
                                          {ViewPhase::kCompute, 20, 40},
                                          {ViewPhase::kIoWrite, 40, 70},
                                          {ViewPhase::kIdle, 70, 100}};
  EXPECT_EQ(Offsets(breakdown), expected);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kIdle), 35);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kResourceWait), 15);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kCompute), 20);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kIoWrite), 30);
  ExpectAddsUp(breakdown);
}

// A driver idle phase alone decides nothing: outside any operation it is client time.
// task [0,50], idle phase [10,20] with no operation around it: all 50 client.
TEST(TraceviewBreakdownTest, IdlePhaseAloneIsNotInFlight) {
  const std::vector<tracing::Span> spans = {MakeSpan("airflow.task", 1, 0, 0, 50),
                                            Phase("idle", 2, 0, 10, 20)};
  const Breakdown breakdown = ComputeBreakdown(spans);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kClient), 50);
  ASSERT_EQ(breakdown.intervals.size(), 1u);
}

// query [0,100] returning 10 rows; its job [10,60] with compute [10,60];
// a second operation's compute [70,80] beats result transfer.
//   idle [0,10] | compute [10,60] | result [60,70] | compute [70,80] | result [80,100]
//   compute 60, result 30, idle 10.
TEST(TraceviewBreakdownTest, ResultTransferAfterTheLastJob) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 100, "root", 10),
      MakeSpan("spark.connect.SparkConnectService/ExecutePlan", 2, 1, 0, 100),
      MakeSpan("spark.job", 3, 1, 10, 40),
      MakeSpan("spark.job", 4, 1, 30, 60),
      Phase("compute", 5, 1, 10, 60),
      Operation(6, 65, 85, "command"),
      Phase("compute", 7, 6, 70, 80),
  };
  const Breakdown breakdown = ComputeBreakdown(spans);
  const std::vector<Expected> expected = {{ViewPhase::kIdle, 0, 10},
                                          {ViewPhase::kCompute, 10, 60},
                                          {ViewPhase::kResultTransfer, 60, 70},
                                          {ViewPhase::kCompute, 70, 80},
                                          {ViewPhase::kResultTransfer, 80, 100}};
  EXPECT_EQ(Offsets(breakdown), expected);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kResultTransfer), 30);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kCompute), 60);
  ExpectAddsUp(breakdown);
}

// Four operations [0,100] each with one job [10,60] and nothing else; only row-returning ones
// (rows > 0, or root with rows unknown) get result transfer [60,100] = 40, the others stay idle.
TEST(TraceviewBreakdownTest, ResultTransferOnlyForRowReturningOperations) {
  const auto breakdown_of = [](const tracing::Span& operation) {
    const std::vector<tracing::Span> spans = {operation, MakeSpan("spark.job", 9, 1, 10, 60)};
    return ComputeBreakdown(spans);
  };
  EXPECT_EQ(Ms(breakdown_of(Operation(1, 0, 100, "root", 5)), ViewPhase::kResultTransfer), 40);
  EXPECT_EQ(Ms(breakdown_of(Operation(1, 0, 100, "root")), ViewPhase::kResultTransfer), 40);
  const Breakdown no_rows = breakdown_of(Operation(1, 0, 100, "root", 0));
  EXPECT_EQ(Ms(no_rows, ViewPhase::kResultTransfer), 0);
  EXPECT_EQ(Ms(no_rows, ViewPhase::kIdle), 100);
  EXPECT_EQ(Ms(breakdown_of(Operation(1, 0, 100, "command")), ViewPhase::kResultTransfer), 0);
  // A query without jobs: no telling analysis from streaming, so idle.
  const std::vector<tracing::Span> no_jobs = {Operation(1, 0, 100, "root", 5)};
  EXPECT_EQ(Ms(ComputeBreakdown(no_jobs), ViewPhase::kIdle), 100);
}

// task [0,100]; A [0,50] with compute [10,40]; B [30,80] with compute [45,70].
//   idle [0,10] | compute [10,40] | idle [40,45] | compute [45,70] | idle [70,80] | client [80,100]
//   compute 55, idle 25, client 20.
TEST(TraceviewBreakdownTest, OverlappingOperations) {
  const std::vector<tracing::Span> spans = {
      MakeSpan("airflow.task", 9, 0, 0, 100), Operation(1, 0, 50, "command"), Phase("compute", 2, 1, 10, 40),
      Operation(3, 30, 80, "command"),        Phase("compute", 4, 3, 45, 70),
  };
  const Breakdown breakdown = ComputeBreakdown(spans);
  const std::vector<Expected> expected = {{ViewPhase::kIdle, 0, 10},  {ViewPhase::kCompute, 10, 40},
                                          {ViewPhase::kIdle, 40, 45}, {ViewPhase::kCompute, 45, 70},
                                          {ViewPhase::kIdle, 70, 80}, {ViewPhase::kClient, 80, 100}};
  EXPECT_EQ(Offsets(breakdown), expected);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kCompute), 55);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kIdle), 25);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kClient), 20);
  ExpectAddsUp(breakdown);
}

// Times with odd nanoseconds still add up to the wall time, contiguously.
TEST(TraceviewBreakdownTest, FractionalTimesAddUp) {
  const std::vector<tracing::Span> spans = {
      MakeSpan("airflow.task", 1, 0, 0.000'001, 99.999'999),
      Operation(2, 3.141'592, 61.803'398, "root", 3),
      MakeSpan("spark.job", 3, 2, 7.389'056, 27.182'818),
      Phase("resource_wait", 4, 2, 7.389'056, 9.999'999),
      Phase("compute", 5, 2, 9.999'999, 27.182'818),
  };
  const Breakdown breakdown = ComputeBreakdown(spans);
  ASSERT_EQ(breakdown.intervals.size(), 6u);
  ExpectAddsUp(breakdown);
  // Epoch milliseconds as doubles resolve 2^-12 ms (0.24 µs) today.
  EXPECT_NEAR(Ms(breakdown, ViewPhase::kResultTransfer), 61.803'398 - 27.182'818, 5e-4);
}

// 2,000 operations of 10 spans each, every 100 ms, given in shuffled order. Per operation at t:
//   op [t,t+60] rows 5, ExecutePlan [t,t+60], ReleaseExecute [t+58,t+60], lifecycle [t,t+59],
//   job [t+10,t+40], stages [t+10,t+25] and [t+25,t+40], resource_wait [t+10,t+12],
//   compute [t+12,t+40], idle phase [t+40,t+60]
//   → idle 10, resource_wait 2, compute 28, result_transfer 20 (job end 40 → op end 60),
//     then client 40 before the next one.
// Window [0, 199,960]: client 1,999 × 40 = 79,960; idle 20,000; rw 4,000; compute 56,000;
// result 40,000; intervals 2,000 × 4 + 1,999 = 9,999.
TEST(TraceviewBreakdownTest, TwentyThousandSpans) {
  std::vector<tracing::Span> spans;
  constexpr std::uint32_t kOperations = 2000;
  for (std::uint32_t op = 0; op < kOperations; ++op) {
    const double t = 100.0 * op;
    const std::uint32_t id = 1 + op * 10;
    spans.push_back(Operation(id, t, t + 60, "root", 5));
    spans.push_back(MakeSpan("spark.connect.SparkConnectService/ExecutePlan", id + 1, id, t, t + 60));
    spans.push_back(MakeSpan("spark.connect.SparkConnectService/ReleaseExecute", id + 2, id, t + 58, t + 60));
    spans.push_back(MakeSpan("spark.connect.operation.lifecycle", id + 3, id, t, t + 59));
    spans.push_back(MakeSpan("spark.job", id + 4, id, t + 10, t + 40));
    spans.push_back(MakeSpan("spark.stage", id + 5, id + 4, t + 10, t + 25));
    spans.push_back(MakeSpan("spark.stage", id + 6, id + 4, t + 25, t + 40));
    spans.push_back(Phase("resource_wait", id + 7, id, t + 10, t + 12));
    spans.push_back(Phase("compute", id + 8, id, t + 12, t + 40));
    spans.push_back(Phase("idle", id + 9, id, t + 40, t + 60));
  }
  ASSERT_EQ(spans.size(), 20'000u);
  std::shuffle(spans.begin(), spans.end(), std::mt19937(7));
  const Breakdown breakdown = ComputeBreakdown(spans);
  EXPECT_EQ(breakdown.wall_ms(), 199'960);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kClient), 79'960);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kIdle), 20'000);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kResourceWait), 4'000);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kCompute), 56'000);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kIoWrite), 0);
  EXPECT_EQ(Ms(breakdown, ViewPhase::kResultTransfer), 40'000);
  EXPECT_EQ(breakdown.intervals.size(), 9'999u);
  ExpectAddsUp(breakdown);
}

}  // namespace
}  // namespace sparktrace::traceview
