// EventLogFeed end to end: spans go final once, open ones end incomplete, grace periods, stopping.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "feed/event_log_feed.h"
#include "listener/correlate/span_builder.h"
#include "tests/unit/feed/listener_feed_event_log_feed_test_support.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::feed {

using listener::correlate::MillisToUnixNanos;

namespace {

// OTLP spans are immutable once sent: each span goes final (to every sink) once, when its own end
// event came; every version before or after is live (the store only). The log grows in steps, as a
// running driver writes it, with a task ending after its job did.
TEST_F(ListenerFeedEventLogFeed, EachSpanIsSubmittedFinalOnceWhenItHasEnded) {
  known_operation_ = "op-1";
  Start();
  const std::string tag = tl::OperationTag("u", "s", "op-1");
  constexpr std::int64_t t0 = kConnectAppStartMs;
  const auto one = [&](const std::string& name) {
    const std::vector<tracing::Span> named = spans_.Named(name);
    EXPECT_EQ(named.size(), 1u) << name;
    return named.empty() ? tracing::Span{} : named.front();
  };
  const auto step = [&](const std::vector<std::string>& lines, std::string_view query) {
    ASSERT_EQ(Push(lines, query).status, 200);
    feed_->PollNow();
  };

  step({tl::AppStart("app-connect", t0), tl::ExecutorAdded("1", t0 + 1'000),
        tl::ConnectOperation("Started", tag, "op-1", t0 + 2'000, "s", "u"),
        tl::JobStart(1, t0 + 3'000, {1}, {tag}), tl::StageSubmitted(1, t0 + 3'000, 2)},
       "");
  EXPECT_EQ(spans_.Finals(one("spark.job")), 0) << "running";
  EXPECT_EQ(spans_.Finals(one("spark.stage")), 0) << "running";
  EXPECT_EQ(spans_.Finals(one("spark.connect.operation.lifecycle")), 0) << "running";

  step({tl::TaskEnd(1, 1, t0 + 3'000, t0 + 3'500), tl::StageCompleted(1, t0 + 3'000, t0 + 3'600, 2)},
       "app=app-connect");
  EXPECT_EQ(spans_.Finals(one("spark.stage")), 1) << "ended: final";
  EXPECT_EQ(spans_.Finals(one("spark.job")), 0) << "still running";

  step({tl::JobEnd(1, t0 + 4'000), tl::ConnectOperation("Finished", tag, "op-1", t0 + 4'100)},
       "app=app-connect");
  EXPECT_EQ(spans_.Finals(one("spark.job")), 1);
  EXPECT_EQ(spans_.Finals(one("spark.connect.operation.lifecycle")), 0)
      << "open until the client releases it";
  for (const tracing::Span& phase : spans_.WithPrefix("spark.phase.")) EXPECT_EQ(spans_.Finals(phase), 0);

  step({tl::ConnectOperation("Closed", tag, "op-1", t0 + 4'500)}, "app=app-connect");
  const tracing::Span lifecycle = one("spark.connect.operation.lifecycle");
  EXPECT_EQ(spans_.Finals(lifecycle), 1);
  EXPECT_EQ(lifecycle.end_time_unix_nano, MillisToUnixNanos(t0 + 4'500));
  ASSERT_FALSE(spans_.WithPrefix("spark.phase.").empty());
  for (const tracing::Span& phase : spans_.WithPrefix("spark.phase.")) EXPECT_EQ(spans_.Finals(phase), 1);

  // A task that ends after its job did: the store's stage shows it; nothing is sent final again.
  step({tl::TaskEnd(1, 2, t0 + 3'000, t0 + 5'000)}, "app=app-connect");
  const tracing::Span stage = one("spark.stage");
  EXPECT_EQ(std::get<std::int64_t>(FindAttribute(stage, "spark.stage.tasks_ended")->value), 2);
  for (const char* name : {"spark.job", "spark.stage", "spark.connect.operation.lifecycle"})
    EXPECT_EQ(spans_.Finals(one(name)), 1) << name;
  for (const tracing::Span& span : spans_.WithPrefix("spark."))
    EXPECT_EQ(spans_.Finals(span), 1) << span.name;
  EXPECT_GT(spans_.live_submitted(), 0u);
  const EventLogFeedCounters counters = feed_->counters();
  EXPECT_EQ(counters.spans_submitted, spans_.submitted());
  EXPECT_EQ(counters.live_spans_submitted, spans_.live_submitted());
}

// An application that ends with a job still running (the driver died, or the log stops there):
// what is open ends at the last event, marked incomplete, and goes final once.
TEST_F(ListenerFeedEventLogFeed, WhatIsStillOpenWhenTheApplicationEndsEndsIncomplete) {
  known_operation_ = "op-1";
  Start();
  const std::string tag = tl::OperationTag("u", "s", "op-1");
  constexpr std::int64_t t0 = kConnectAppStartMs;
  ASSERT_EQ(Push({tl::AppStart("app-connect", t0), tl::ExecutorAdded("1", t0 + 1'000),
                  tl::ConnectOperation("Started", tag, "op-1", t0 + 2'000, "s", "u"),
                  tl::JobStart(1, t0 + 3'000, {1}, {tag}), tl::StageSubmitted(1, t0 + 3'000, 2)})
                .status,
            200);
  feed_->PollNow();
  ASSERT_EQ(spans_.Named("spark.job").size(), 1u);
  EXPECT_EQ(spans_.Finals(spans_.Named("spark.job").front()), 0);

  ASSERT_EQ(Push({tl::AppEnd(t0 + 9'000)}, "app=app-connect").status, 200);
  feed_->PollNow();
  feed_->PollNow();  // polls after the end submit nothing final again
  for (const char* name : {"spark.job", "spark.stage", "spark.connect.operation.lifecycle"}) {
    const std::vector<tracing::Span> spans = spans_.Named(name);
    ASSERT_EQ(spans.size(), 1u) << name;
    EXPECT_EQ(spans_.Finals(spans.front()), 1) << name;
    const tracing::Attribute* incomplete = FindAttribute(spans.front(), "sparktrace.incomplete");
    ASSERT_NE(incomplete, nullptr) << name;
    EXPECT_TRUE(std::get<bool>(incomplete->value));
    EXPECT_EQ(spans.front().end_time_unix_nano, MillisToUnixNanos(t0 + 9'000)) << name;
  }
  EXPECT_EQ(
      std::get<std::string>(FindAttribute(spans_.Named("spark.job").front(), "spark.job.status")->value),
      "unknown");
  for (const tracing::Span& phase : spans_.WithPrefix("spark.phase.")) EXPECT_EQ(spans_.Finals(phase), 1);
}

// A Spark Connect server is an application whose time before its first operation is no task's: it
// gets no trace of its own, not even while it waits for its first client (it used to leave a 0 s
// spark.application trace, "running" forever, in the store).
TEST_F(ListenerFeedEventLogFeed, AConnectServerWaitingForItsFirstOperationLeavesNoTrace) {
  known_operation_ = "op-1";
  Start();
  constexpr std::int64_t t0 = kConnectAppStartMs;
  ASSERT_EQ(Push({tl::AppStart("app-connect", t0), tl::ExecutorAdded("1", t0 + 1'000)}).status, 200);
  feed_->PollNow();
  EXPECT_TRUE(spans_.Named("spark.application").empty());
  EXPECT_EQ(spans_.submitted() + spans_.live_submitted(), 0u);

  const std::vector<std::string> operation = ConnectOperationWithOneJob("Closed", t0 + 5'000);
  ASSERT_EQ(Push(std::vector<std::string>(operation.begin() + 2, operation.end()), "app=app-connect").status,
            200);
  feed_->PollNow();
  EXPECT_EQ(spans_.Named("spark.job").size(), 1u);
  EXPECT_TRUE(spans_.Named("spark.application").empty());
}

// A plain application that ran no job at all still gets its trace once it ended.
TEST_F(ListenerFeedEventLogFeed, AnApplicationWithoutJobsGetsItsTraceWhenItEnds) {
  Start();
  constexpr std::int64_t t0 = 1'700'000'000'000;
  ASSERT_EQ(Push({tl::AppStart("app-idle", t0), tl::ExecutorAdded("1", t0 + 1'000)}).status, 200);
  feed_->PollNow();
  EXPECT_TRUE(spans_.Named("spark.application").empty()) << "not known yet to be a plain application";
  ASSERT_EQ(Push({tl::AppEnd(t0 + 5'000)}, "app=app-idle").status, 200);
  feed_->PollNow();
  const std::vector<tracing::Span> roots = spans_.Named("spark.application");
  ASSERT_EQ(roots.size(), 1u);
  EXPECT_EQ(spans_.Finals(roots.front()), 1);
  EXPECT_EQ(FindAttribute(roots.front(), "spark.app.status"), nullptr);
}

TEST_F(ListenerFeedEventLogFeed, FinishedOperationsAreForgottenAfterTheirGraceInDriverTime) {
  known_operation_ = "op-old";
  Start();
  const std::string old_tag = tl::OperationTag("u", "s", "op-old");
  const std::string new_tag = tl::OperationTag("u", "s", "op-new");
  constexpr std::int64_t t0 = 1'700'000'000'000;
  constexpr std::int64_t later = t0 + 3'600'000;  // an hour of driver time on
  ASSERT_EQ(Push({tl::AppStart("app-connect", t0), tl::ExecutorAdded("1", t0 + 1'000),
                  tl::ConnectOperation("Started", old_tag, "op-old", t0 + 2'000, "s", "u"),
                  tl::JobStart(1, t0 + 3'000, {1}, {old_tag}), tl::JobEnd(1, t0 + 4'000),
                  tl::ConnectOperation("Closed", old_tag, "op-old", t0 + 5'000),
                  tl::ConnectOperation("Started", new_tag, "op-new", later, "s", "u"),
                  tl::JobStart(2, later + 1'000, {2}, {new_tag})})
                .status,
            200);
  feed_->PollNow();
  // op-old was emitted (its job is in the sink) and then dropped; op-new is still running.
  EXPECT_EQ(spans_.Named("spark.job").size(), 1u);
  const EventLogFeedCounters counters = feed_->counters();
  EXPECT_EQ(counters.operations_forgotten, 1u);
  EXPECT_EQ(counters.jobs_forgotten, 1u);
  EXPECT_DOUBLE_EQ(Metric("sparktrace_listener_operations"), 1.0);  // op-new's progress only
  EXPECT_DOUBLE_EQ(Metric("sparktrace_listener_applications"), 1.0);
}

TEST_F(ListenerFeedEventLogFeed, AnEndedApplicationIsDroppedAfterItsGraceAndItsMetricsStay) {
  EventLogFeedOptions options = Defaults();
  options.completed_application_retention = std::chrono::milliseconds(0);
  Start(std::move(options));
  ASSERT_EQ(Push(PlainApplication()).status, 200);
  feed_->PollNow();
  EXPECT_EQ(spans_.Named("spark.application").size(), 1u) << "final spans before dropping";
  EXPECT_EQ(feed_->counters().applications_forgotten, 1u);
  EXPECT_DOUBLE_EQ(Metric("sparktrace_listener_applications"), 0.0);
  EXPECT_GT(Metric("spark_phase_compute_seconds", {{"app", "test"}}), 0.0);
}

// The per-application counters and task figures keep counting what the model forgets: a job
// finished long ago is dropped from memory (retention), its tasks stay in the metrics.
TEST_F(ListenerFeedEventLogFeed, ApplicationMetricsSurviveForgettingFinishedJobs) {
  Start();
  constexpr std::int64_t t0 = 1'700'000'000'000;
  constexpr std::int64_t later = t0 + 3'600'000;  // an hour of driver time on
  ASSERT_EQ(Push({tl::AppStart("app-long", t0), tl::ExecutorAdded("1", t0 + 1'000),
                  tl::JobStart(1, t0 + 2'000, {1}, {}), tl::StageSubmitted(1, t0 + 2'000, 2),
                  tl::TaskEnd(1, 1, t0 + 2'000, t0 + 2'200), tl::TaskEnd(1, 2, t0 + 2'000, t0 + 4'000),
                  tl::StageCompleted(1, t0 + 2'000, t0 + 4'000, 2), tl::JobEnd(1, t0 + 4'000),
                  tl::JobStart(2, later, {2}, {}), tl::StageSubmitted(2, later, 1)})
                .status,
            200);
  feed_->PollNow();
  ASSERT_EQ(feed_->counters().jobs_forgotten, 1u);
  // Figures computed after forgetting job 1 and its stage.
  ASSERT_EQ(
      Push({tl::TaskEnd(2, 3, later, later + 30'000, tl::TaskFigures{.output_bytes = 64})}, "app=app-long")
          .status,
      200);
  feed_->PollNow();
  const auto families = feed_->metrics()->Collect();
  EXPECT_DOUBLE_EQ(Value(families, "spark_jobs_total", {{"app", "test"}, {"status", "succeeded"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_stages_total", {{"app", "test"}, {"status", "completed"}}), 1.0);
  const prometheus::MetricFamily* durations = FindFamily(families, "spark_task_duration_seconds");
  ASSERT_NE(durations, nullptr);
  ASSERT_EQ(durations->metric.size(), 1u);
  EXPECT_EQ(durations->metric.front().histogram.sample_count, 3u);
  EXPECT_DOUBLE_EQ(durations->metric.front().histogram.sample_sum, 32.2);
  EXPECT_DOUBLE_EQ(
      Value(families, "spark_task_duration_p95_seconds", {{"app", "test"}, {"stage_kind", "compute"}}), 2.0);
  EXPECT_DOUBLE_EQ(
      Value(families, "spark_task_duration_p95_seconds", {{"app", "test"}, {"stage_kind", "write"}}), 30.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_output_bytes", {{"app", "test"}}), 64.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_application_running", {{"app", "test"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_active", {{"app", "test"}, {"phase", "io_write"}}), 1.0);

  ASSERT_EQ(Push({tl::AppEnd(later + 40'000)}, "app=app-long").status, 200);
  feed_->PollNow();
  EXPECT_DOUBLE_EQ(Metric("spark_application_running", {{"app", "test"}}), 0.0);
  EXPECT_DOUBLE_EQ(Metric("spark_phase_active", {{"app", "test"}, {"phase", "io_write"}}), 0.0);
}

TEST_F(ListenerFeedEventLogFeed, PushesAreRefusedOnceTheFeedStopped) {
  Start();
  const std::shared_ptr<EventPushEndpoint> endpoint = feed_->push_endpoint();
  feed_.reset();
  PushRequest request;
  const std::string body = Body({tl::AppStart("app-late", 1)});
  request.body = body;
  EXPECT_EQ(endpoint->Push(request).status, 503);
}

}  // namespace
}  // namespace sparktrace::feed
