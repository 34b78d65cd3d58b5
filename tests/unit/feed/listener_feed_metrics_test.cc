// The feed's metrics snapshot (feed/feed_metrics.h) and the phase totals that survive
// forgetting (feed/application_phase_totals.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "feed/application_phase_totals.h"
#include "feed/feed_metrics.h"
#include "listener/correlate/phases.h"
#include "tests/unit/feed/listener_feed_test_support.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::ApplicationPhases;
using listener::correlate::kPhaseCount;
using listener::correlate::Phase;
using listener::correlate::PhaseBreakdown;

namespace {

namespace tl = listener::correlate::test_lines;

ApplicationFigures Figures(std::string name, std::int64_t wait, std::int64_t compute, std::int64_t write,
                           std::int64_t idle) {
  ApplicationFigures figures;
  figures.app_name = std::move(name);
  figures.total_ms = {wait, compute, write, idle};
  figures.window_ms = wait + compute + write + idle;
  return figures;
}

TEST(ListenerFeedMetrics, PhaseGaugesAndRatiosPerApplicationName) {
  FeedMetrics metrics(50, nullptr);
  metrics.Publish({}, {}, {Figures("etl", 1000, 2000, 500, 500), Figures("report", 0, 0, 0, 0)});
  const auto families = metrics.Collect();
  EXPECT_DOUBLE_EQ(Value(families, "spark_resource_wait_seconds", {{"app", "etl"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_compute_seconds", {{"app", "etl"}}), 2.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_io_write_seconds", {{"app", "etl"}}), 0.5);
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_idle_seconds", {{"app", "etl"}}), 0.5);
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_breakdown_ratio", {{"app", "etl"}, {"phase", "compute"}}),
                   0.5);
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_breakdown_ratio", {{"app", "etl"}, {"phase", "idle"}}),
                   0.125);
  // An empty window has no shares rather than NaN.
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_breakdown_ratio", {{"app", "report"}, {"phase", "idle"}}),
                   0.0);
  // A later application of the same name replaces the figures.
  metrics.Publish({}, {}, {Figures("etl", 0, 4000, 0, 0)});
  EXPECT_DOUBLE_EQ(Value(metrics.Collect(), "spark_phase_compute_seconds", {{"app", "etl"}}), 4.0);
  EXPECT_EQ(metrics.application_names().size(), 2u);
}

TEST(ListenerFeedMetrics, KeepsTheMostRecentlyUpdatedNamesAndCountsTheRest) {
  FeedMetrics metrics(3, nullptr);
  metrics.Publish({}, {}, {Figures("a", 0, 1, 0, 0), Figures("b", 0, 1, 0, 0), Figures("c", 0, 1, 0, 0)});
  metrics.Publish({}, {}, {Figures("a", 0, 2, 0, 0)});  // a is now newer than b and c
  metrics.Publish({}, {}, {Figures("d", 0, 1, 0, 0)});  // evicts b, the oldest
  metrics.Publish({}, {}, {Figures("e", 0, 1, 0, 0)});  // evicts c
  EXPECT_EQ(metrics.application_names(), (std::vector<std::string>{"a", "d", "e"}));
  EXPECT_EQ(metrics.applications_evicted(), 2u);
  const auto families = metrics.Collect();
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_metric_applications_evicted_total"), 2.0);
  EXPECT_EQ(FindFamily(families, "spark_phase_idle_seconds")->metric.size(), 3u);
  EXPECT_EQ(FindFamily(families, "spark_phase_breakdown_ratio")->metric.size(), 3u * kPhaseCount);
}

TEST(ListenerFeedMetrics, CountersFromTheFeedAndThePushEndpoint) {
  auto push = std::make_shared<EventPushEndpoint>(EventPushOptions{}, nullptr);
  PushRequest request;
  request.query = "app=x";
  const std::string body = tl::JobEnd(1, 2) + "\nbad\n";
  request.body = body;
  ASSERT_EQ(push->Push(request).status, 200);
  FeedMetrics metrics(50, push);
  EventLogFeedCounters totals;
  totals.lines = 10;
  totals.malformed_lines = 3;
  totals.events = 7;
  totals.spans_submitted = 42;
  totals.live_spans_submitted = 6;
  totals.operations_forgotten = 5;
  totals.sql_plans_reduced = 4;
  metrics.Publish(totals, EventLogFeedHeld{2, 9}, {});
  const auto families = metrics.Collect();
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_lines_total", {{"source", "event_log"}}), 10.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_lines_total", {{"source", "push"}}), 2.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_malformed_lines_total", {{"source", "event_log"}}),
                   3.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_malformed_lines_total", {{"source", "push"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_pushes_total", {{"result", "accepted"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_events_total"), 7.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_spans_submitted_total", {{"version", "final"}}),
                   42.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_spans_submitted_total", {{"version", "live"}}), 6.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_forgotten_total", {{"what", "operations"}}), 5.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_sql_plans_reduced_total"), 4.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_applications"), 2.0);
  EXPECT_DOUBLE_EQ(Value(families, "sparktrace_listener_operations"), 9.0);
  for (const auto& family : families) {
    if (family.type == prometheus::MetricType::Counter) {
      EXPECT_TRUE(family.name.ends_with("_total")) << family.name;
    }
  }
}

// An application with two jobs of no operation, the first long finished when the second runs.
std::vector<std::string> TwoJobApplication() {
  return {tl::AppStart("app-p", 0),
          tl::ExecutorAdded("1", 2'000),
          tl::JobStart(1, 3'000, {1}, {}),
          tl::StageSubmitted(1, 3'000, 1),
          tl::TaskEnd(1, 1, 3'000, 9'000, tl::TaskFigures{.output_bytes = 10}),
          tl::StageCompleted(1, 3'000, 10'000, 1),
          tl::JobEnd(1, 10'000),
          tl::JobStart(2, 700'000, {2}, {}),
          tl::StageSubmitted(2, 700'000, 1),
          tl::TaskEnd(2, 2, 700'000, 720'000),
          tl::StageCompleted(2, 700'000, 730'000, 1),
          tl::JobEnd(2, 730'000),
          tl::AppEnd(800'000)};
}

TEST(ListenerFeedPhaseTotals, EqualTheApplicationsPhasesWithoutForgetting) {
  ApplicationModel model;
  tl::Feed(model, TwoJobApplication());
  const std::optional<PhaseBreakdown> expected = ApplicationPhases(model);
  ASSERT_TRUE(expected);
  ApplicationPhaseTotals totals;
  const std::optional<PhaseTotals> got = totals.Totals(model);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->window_ms, 800'000);
  EXPECT_EQ(got->total_ms, expected->total_ms);
  EXPECT_FALSE(totals.folded());
}

TEST(ListenerFeedPhaseTotals, SurviveForgettingFinishedJobs) {
  ApplicationModel model;
  tl::Feed(model, TwoJobApplication());
  const std::optional<PhaseBreakdown> before = ApplicationPhases(model);
  ASSERT_TRUE(before);
  ASSERT_GT(before->TotalMs(Phase::kIoWrite), 0);
  ApplicationPhaseTotals totals;
  // Folding in two steps, then forgetting job 1 (ended at 10 s).
  totals.FoldUntil(model, 5'000);
  totals.FoldUntil(model, 600'000);
  const ApplicationModel::ForgetStats forgot = model.ForgetFinishedBefore(600'000);
  ASSERT_EQ(forgot.jobs, 1);
  // The model alone now misses job 1's stage; the folded totals do not.
  EXPECT_NE(ApplicationPhases(model)->total_ms, before->total_ms);
  const std::optional<PhaseTotals> after = totals.Totals(model);
  ASSERT_TRUE(after);
  EXPECT_TRUE(totals.folded());
  EXPECT_EQ(after->total_ms, before->total_ms);
  EXPECT_EQ(after->window_ms, 800'000);
}

TEST(ListenerFeedPhaseTotals, NoneBeforeTheApplicationStarts) {
  ApplicationModel model;
  tl::Feed(model, {tl::JobStart(1, 3'000, {1}, {})});
  ApplicationPhaseTotals totals;
  totals.FoldUntil(model, 10'000);
  EXPECT_FALSE(totals.Totals(model).has_value());
  EXPECT_FALSE(totals.folded());
}

}  // namespace
}  // namespace sparktrace::feed
