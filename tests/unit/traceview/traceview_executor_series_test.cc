// The executor lane (traceview/executor_series.h): a step function over the view's window from
// the executor facts on lifecycle and application spans; times in ms after traceview_test::kOriginMs.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/traceview/traceview_span_builders.h"
#include "traceview/executor_series.h"
#include "tracing/span.h"

namespace sparktrace::traceview {
namespace {

using traceview_test::At;
using traceview_test::MsAfterOrigin;

tracing::Span Lifecycle(std::int64_t start, std::int64_t end, std::optional<std::int64_t> active_at_start) {
  tracing::Span span;
  span.name = "spark.connect.operation.lifecycle";
  span.start_time_unix_nano = At(start);
  span.end_time_unix_nano = At(end);
  if (active_at_start) span.attributes.push_back({"spark.executors.active_at_start", *active_at_start});
  return span;
}

void AddChange(tracing::Span& span, bool added, std::int64_t at, const std::string& executor,
               std::int64_t active) {
  span.events.push_back({added ? "spark.executor.added" : "spark.executor.removed",
                         At(at),
                         {{"spark.executor.id", executor},
                          {"spark.executor.cores", std::int64_t{4}},
                          {"spark.executors.active", active}}});
}

using Points = std::vector<std::pair<double, int>>;

Points PointsOf(const ExecutorSeries& series) {
  Points points;
  for (const ExecutorPoint& point : series.points) points.emplace_back(point.t_ms, point.count);
  return points;
}

// [0,100], 1 alive at start, +1 at 10 (2), +1 at 20 (3), -1 at 50 (2).
tracing::Span ThreeChanges() {
  tracing::Span span = Lifecycle(0, 100, 1);
  AddChange(span, true, 10, "2", 2);
  AddChange(span, true, 20, "3", 3);
  AddChange(span, false, 50, "1", 2);
  return span;
}

TEST(TraceviewExecutorSeriesTest, UnknownWithoutFacts) {
  const std::vector<tracing::Span> spans = {Lifecycle(0, 100, std::nullopt)};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(0), MsAfterOrigin(100));
  EXPECT_FALSE(series.known);
  EXPECT_TRUE(series.points.empty());
  EXPECT_EQ(series.max, 0);
}

// Points (0,1) (10,2) (20,3) (50,2) and the end (100,2); max 3.
TEST(TraceviewExecutorSeriesTest, StartCountThenAddsAndRemoves) {
  const std::vector<tracing::Span> spans = {ThreeChanges()};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(0), MsAfterOrigin(100));
  EXPECT_TRUE(series.known);
  EXPECT_EQ(series.max, 3);
  EXPECT_EQ(PointsOf(series), (Points{{MsAfterOrigin(0), 1},
                                      {MsAfterOrigin(10), 2},
                                      {MsAfterOrigin(20), 3},
                                      {MsAfterOrigin(50), 2},
                                      {MsAfterOrigin(100), 2}}));
}

// A second span repeats the changes and starts at 30 with 3 alive (true then): nothing new.
TEST(TraceviewExecutorSeriesTest, RepeatedFactsOfConcurrentSpansMerge) {
  tracing::Span second = Lifecycle(30, 90, 3);
  AddChange(second, true, 20, "3", 3);
  AddChange(second, false, 50, "1", 2);
  const std::vector<tracing::Span> spans = {second, ThreeChanges()};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(0), MsAfterOrigin(100));
  EXPECT_EQ(PointsOf(series), (Points{{MsAfterOrigin(0), 1},
                                      {MsAfterOrigin(10), 2},
                                      {MsAfterOrigin(20), 3},
                                      {MsAfterOrigin(50), 2},
                                      {MsAfterOrigin(100), 2}}));
}

// Window [15,40]: 2 alive at 15 (since 10), 3 from 20, the removal at 50 is after the window.
TEST(TraceviewExecutorSeriesTest, ClippedToTheWindow) {
  const std::vector<tracing::Span> spans = {ThreeChanges()};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(15), MsAfterOrigin(40));
  EXPECT_EQ(PointsOf(series),
            (Points{{MsAfterOrigin(15), 2}, {MsAfterOrigin(20), 3}, {MsAfterOrigin(40), 3}}));
  EXPECT_EQ(series.max, 3);
}

// Window [0,100], the only fact an add at 30 leaving 1 alive: before it there was 1 - 1 = 0.
TEST(TraceviewExecutorSeriesTest, CountBeforeTheFirstChangeFollowsFromIt) {
  tracing::Span span = Lifecycle(0, 100, std::nullopt);
  AddChange(span, true, 30, "1", 1);
  const std::vector<tracing::Span> spans = {span};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(0), MsAfterOrigin(100));
  EXPECT_EQ(PointsOf(series),
            (Points{{MsAfterOrigin(0), 0}, {MsAfterOrigin(30), 1}, {MsAfterOrigin(100), 1}}));
  EXPECT_EQ(series.max, 1);
}

// A span starting at 40 with 2 alive is the first fact of window [0,100]: 2 from the start.
TEST(TraceviewExecutorSeriesTest, LaterStartCountHoldsFromTheStart) {
  const std::vector<tracing::Span> spans = {Lifecycle(40, 100, 2)};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(0), MsAfterOrigin(100));
  EXPECT_EQ(PointsOf(series), (Points{{MsAfterOrigin(0), 2}, {MsAfterOrigin(100), 2}}));
}

// At 10 a span starts with 2 alive and an executor is added (3): the change wins at that instant.
TEST(TraceviewExecutorSeriesTest, ChangeAtASpanStartComesAfterTheStartCount) {
  tracing::Span span = Lifecycle(10, 60, 2);
  AddChange(span, true, 10, "3", 3);
  const std::vector<tracing::Span> spans = {span};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(0), MsAfterOrigin(60));
  EXPECT_EQ(PointsOf(series),
            (Points{{MsAfterOrigin(0), 2}, {MsAfterOrigin(10), 3}, {MsAfterOrigin(60), 3}}));
  const ExecutorSeries from_ten = ComputeExecutorSeries(spans, MsAfterOrigin(10), MsAfterOrigin(60));
  EXPECT_EQ(PointsOf(from_ten), (Points{{MsAfterOrigin(10), 3}, {MsAfterOrigin(60), 3}}));
}

// An empty window is one point.
TEST(TraceviewExecutorSeriesTest, EmptyWindowIsOnePoint) {
  const std::vector<tracing::Span> spans = {ThreeChanges()};
  const ExecutorSeries series = ComputeExecutorSeries(spans, MsAfterOrigin(20), MsAfterOrigin(20));
  EXPECT_EQ(PointsOf(series), (Points{{MsAfterOrigin(20), 3}}));
}

}  // namespace
}  // namespace sparktrace::traceview
