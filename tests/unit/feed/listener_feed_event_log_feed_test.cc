// EventLogFeed end to end through its push endpoint: the traces, operation spans and findings it makes.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diagnose/diagnose.h"
#include "diagnose/rules_file.h"
#include "feed/event_log_feed.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/span_ids.h"
#include "tests/unit/feed/listener_feed_event_log_feed_test_support.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::ApplicationPhases;
using listener::correlate::ApplicationTraceId;
using listener::correlate::Phase;
using listener::correlate::PhaseBreakdown;

namespace {

TEST_F(ListenerFeedEventLogFeed, APlainApplicationGetsATraceOfItsOwn) {
  Start();
  const PushReply reply = Push(PlainApplication());
  ASSERT_EQ(reply.status, 200) << reply.body;
  feed_->PollNow();

  const std::vector<tracing::Span> roots = spans_.Named("spark.application");
  ASSERT_EQ(roots.size(), 1u);
  const tracing::Span& root = roots.front();
  EXPECT_EQ(root.trace_id, ApplicationTraceId("app-plain"));
  EXPECT_EQ(root.parent_span_id, tracing::SpanId{});
  const std::vector<tracing::Span> jobs = spans_.Named("spark.job");
  ASSERT_EQ(jobs.size(), 2u);
  for (const tracing::Span& job : jobs) {
    EXPECT_EQ(job.trace_id, root.trace_id);
    EXPECT_EQ(job.parent_span_id, root.span_id);
  }
  EXPECT_EQ(spans_.Named("spark.stage").size(), 2u);
  EXPECT_FALSE(spans_.WithPrefix("spark.phase.").empty());

  ApplicationModel model;
  tl::Feed(model, PlainApplication());
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases);
  const tracing::Attribute* compute = FindAttribute(root, "spark.phase.compute.ms");
  ASSERT_NE(compute, nullptr);
  EXPECT_EQ(std::get<std::int64_t>(compute->value), phases->TotalMs(Phase::kCompute));

  EXPECT_DOUBLE_EQ(Metric("spark_phase_compute_seconds", {{"app", "test"}}),
                   static_cast<double>(phases->TotalMs(Phase::kCompute)) / 1000.0);
  EXPECT_DOUBLE_EQ(Metric("spark_phase_io_write_seconds", {{"app", "test"}}),
                   static_cast<double>(phases->TotalMs(Phase::kIoWrite)) / 1000.0);
  EXPECT_DOUBLE_EQ(Metric("spark_resource_wait_seconds", {{"app", "test"}}),
                   static_cast<double>(phases->TotalMs(Phase::kResourceWait)) / 1000.0);
  const EventLogFeedCounters counters = feed_->counters();
  EXPECT_EQ(counters.applications_traced, 1u);
  EXPECT_EQ(counters.events, PlainApplication().size());
  EXPECT_EQ(counters.spans_submitted, spans_.submitted());
}

// The diagnosis rules' findings: span events on the application root, counted once when it ended.
TEST_F(ListenerFeedEventLogFeed, FindingsOfAnEndedApplicationAreSpanEventsCountedOnce) {
  Start();
  ASSERT_EQ(Push(PlainApplication()).status, 200);
  feed_->PollNow();
  ApplicationModel model;
  tl::Feed(model, PlainApplication());
  const std::vector<diagnose::Finding> expected =
      diagnose::DiagnoseApplication(model, diagnose::RuleThresholds{});
  ASSERT_FALSE(expected.empty()) << "the failed job must give a finding";

  const std::vector<tracing::Span> roots = spans_.Named("spark.application");
  ASSERT_EQ(roots.size(), 1u);
  std::vector<std::string> event_ids;
  for (const tracing::SpanEvent& event : roots.front().events) {
    if (event.name != tracing::kFindingEventName) continue;
    for (const tracing::Attribute& attribute : event.attributes) {
      if (attribute.key == "finding.id") event_ids.push_back(std::get<std::string>(attribute.value));
    }
  }
  std::vector<std::string> expected_ids;
  expected_ids.reserve(expected.size());
  for (const diagnose::Finding& finding : expected) expected_ids.push_back(finding.id);
  EXPECT_EQ(event_ids, expected_ids);
  const tracing::Attribute* ids = FindAttribute(roots.front(), "sparktrace.findings");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(std::get<std::vector<std::string>>(ids->value), expected_ids);

  const auto counted = [&](const diagnose::Finding& finding) {
    return Metric("sparktrace_findings_total",
                  {{"id", finding.id}, {"severity", std::string(diagnose::SeverityName(finding.severity))}});
  };
  for (const diagnose::Finding& finding : expected) EXPECT_EQ(counted(finding), 1.0) << finding.id;
  // More polls (the trace is rebuilt when forced) do not count again.
  ASSERT_EQ(Push({tl::ExecutorAdded("2", 1'700'000'030'000)}, "app=app-plain").status, 200);
  feed_->PollNow();
  for (const diagnose::Finding& finding : expected) EXPECT_EQ(counted(finding), 1.0) << finding.id;
}

// Suppressions from a rules file: the first is for one DAG's tasks, the second expired.
EventLogFeedOptions WithSuppressions(EventLogFeedOptions options) {
  auto rules = diagnose::ParseRulesFile(
      "suppressions:\n"
      "  - {id: task-failures, dag: \"etl.*\", task: \"load_*\", reason: \"flaky source, DATA-7\", "
      "until: 2026-03-31}\n"
      "  - {id: \"*\", dag: \"*\", task: \"*\", reason: \"old\", until: 2026-01-01}\n",
      diagnose::RulesFormat::kYaml);
  EXPECT_TRUE(rules.ok()) << rules.error().message;
  if (rules.ok()) options.suppressions = rules->suppressions;
  options.wall_clock = [] {
    return std::chrono::sys_days(std::chrono::year(2026) / 3 / 15) + std::chrono::hours(9);
  };
  return options;
}

// A Connect operation "op-1" whose only job failed (a task-failures finding), closed at the end.
std::vector<std::string> ConnectOperationWithAFailedJob() {
  const std::string tag = tl::OperationTag("u", "s", "op-1");
  constexpr std::int64_t t0 = kConnectAppStartMs;
  return {tl::AppStart("app-connect", t0),
          tl::ExecutorAdded("1", t0 + 1'000),
          tl::ConnectOperation("Started", tag, "op-1", t0 + 2'000, "s", "u"),
          tl::JobStart(1, t0 + 3'000, {1}, {tag}),
          tl::StageSubmitted(1, t0 + 3'000, 1),
          tl::StageCompleted(1, t0 + 3'000, t0 + 4'000, 1),
          tl::JobEnd(1, t0 + 4'000, /*succeeded=*/false),
          tl::ConnectOperation("Closed", tag, "op-1", t0 + 5'000)};
}

// The task-failures events on the operation's lifecycle span, as (reason, until) of their suppression
// ("" when none).
std::vector<std::pair<std::string, std::string>> TaskFailureEvents(const LatestSpans& spans) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const tracing::Span& span : spans.Named("spark.connect.operation.lifecycle")) {
    for (const tracing::SpanEvent& event : span.events) {
      const auto* id = tracing::AttributeValueOf<std::string>(event.attributes, "finding.id");
      if (event.name != tracing::kFindingEventName || id == nullptr || *id != "task-failures") continue;
      const auto* reason =
          tracing::AttributeValueOf<std::string>(event.attributes, tracing::kFindingSuppressedReasonKey);
      const auto* until =
          tracing::AttributeValueOf<std::string>(event.attributes, tracing::kFindingSuppressedUntilKey);
      found.emplace_back(reason ? *reason : "", until ? *until : "");
    }
  }
  return found;
}

TEST_F(ListenerFeedEventLogFeed, ASuppressedFindingIsMutedOnItsSpanAndNotCountedForAlerts) {
  airflow_tasks_ = {{"op-1", {"etl.daily", "load_orders"}}};
  Start(WithSuppressions(Defaults()));
  ASSERT_EQ(Push(ConnectOperationWithAFailedJob()).status, 200);
  feed_->PollNow();
  EXPECT_EQ(TaskFailureEvents(spans_),
            (std::vector<std::pair<std::string, std::string>>{{"flaky source, DATA-7", "2026-03-31"}}));
  EXPECT_TRUE(std::isnan(Metric("sparktrace_findings_total", {{"id", "task-failures"}})))
      << "not in the series the alerts watch";
  EXPECT_EQ(Metric("sparktrace_findings_suppressed_total", {{"id", "task-failures"}}), 1.0);
  EXPECT_EQ(Metric("sparktrace_suppressions", {{"state", "active"}}), 1.0);
  EXPECT_EQ(Metric("sparktrace_suppressions", {{"state", "expired"}}), 1.0);
}

TEST_F(ListenerFeedEventLogFeed, AFindingOfAnotherTaskOrPastTheExpiryIsCounted) {
  airflow_tasks_ = {{"op-1", {"ml.weekly", "train"}}};
  Start(WithSuppressions(Defaults()));
  ASSERT_EQ(Push(ConnectOperationWithAFailedJob()).status, 200);
  feed_->PollNow();
  // The expired catch-all would match any task: it is ignored.
  EXPECT_EQ(TaskFailureEvents(spans_), (std::vector<std::pair<std::string, std::string>>{{"", ""}}));
  EXPECT_EQ(Metric("sparktrace_findings_total", {{"id", "task-failures"}}), 1.0);
  EXPECT_TRUE(std::isnan(Metric("sparktrace_findings_suppressed_total", {{"id", "task-failures"}})));
}

TEST_F(ListenerFeedEventLogFeed, AfterItsDayASuppressionNoLongerApplies) {
  airflow_tasks_ = {{"op-1", {"etl.daily", "load_orders"}}};
  EventLogFeedOptions options = WithSuppressions(Defaults());
  options.wall_clock = [] { return std::chrono::sys_days(std::chrono::year(2026) / 4 / 1); };
  Start(std::move(options));
  ASSERT_EQ(Push(ConnectOperationWithAFailedJob()).status, 200);
  feed_->PollNow();
  EXPECT_EQ(TaskFailureEvents(spans_), (std::vector<std::pair<std::string, std::string>>{{"", ""}}));
  EXPECT_EQ(Metric("sparktrace_findings_total", {{"id", "task-failures"}}), 1.0);
  EXPECT_EQ(Metric("sparktrace_suppressions", {{"state", "active"}}), 0.0);
  EXPECT_EQ(Metric("sparktrace_suppressions", {{"state", "expired"}}), 2.0);
}

TEST_F(ListenerFeedEventLogFeed, WithoutRulesNoFindingsAreAttached) {
  EventLogFeedOptions options = Defaults();
  options.rules.reset();
  Start(std::move(options));
  ASSERT_EQ(Push(PlainApplication()).status, 200);
  feed_->PollNow();
  const std::vector<tracing::Span> roots = spans_.Named("spark.application");
  ASSERT_EQ(roots.size(), 1u);
  // Its events are the executor changes only (the trace view's executor lane), no finding.
  for (const tracing::SpanEvent& event : roots.front().events) EXPECT_NE(event.name, "sparktrace.finding");
  EXPECT_EQ(FindAttribute(roots.front(), "sparktrace.findings"), nullptr);
}

TEST_F(ListenerFeedEventLogFeed, ChunksOfOneStreamAreAppliedInOrderAndReplaceEarlierSpans) {
  Start();
  const std::vector<std::string> lines = PlainApplication();
  const std::vector<std::string> first(lines.begin(), lines.begin() + 8);  // job 2 started
  const std::vector<std::string> rest(lines.begin() + 8, lines.end());
  ASSERT_EQ(Push(first).status, 200);
  feed_->PollNow();
  const std::vector<tracing::Span> running = spans_.Named("spark.application");
  ASSERT_EQ(running.size(), 1u);
  ASSERT_NE(FindAttribute(running.front(), "spark.app.status"), nullptr);

  ASSERT_EQ(Push(rest, "app=app-plain").status, 200);
  feed_->PollNow();
  const std::vector<tracing::Span> ended = spans_.Named("spark.application");
  ASSERT_EQ(ended.size(), 1u) << "the rebuilt root replaces the running one";
  EXPECT_EQ(FindAttribute(ended.front(), "spark.app.status"), nullptr);
  bool failed_job = false;
  for (const tracing::Span& job : spans_.Named("spark.job")) {
    failed_job |= std::get<std::string>(FindAttribute(job, "spark.job.status")->value) == "failed";
  }
  EXPECT_TRUE(failed_job);
}

TEST_F(ListenerFeedEventLogFeed, ApplicationTracesFollowTheSampleRatio) {
  EventLogFeedOptions options = Defaults();
  options.sample_ratio = 0;
  Start(std::move(options));
  ASSERT_EQ(Push(PlainApplication()).status, 200);
  feed_->PollNow();
  EXPECT_TRUE(spans_.Named("spark.application").empty());
  EXPECT_TRUE(spans_.Named("spark.job").empty());
  EXPECT_GT(Metric("spark_phase_compute_seconds", {{"app", "test"}}), 0.0) << "metrics do not sample";
}

TEST_F(ListenerFeedEventLogFeed, AConnectServerTraceHoldsOnlyJobsOfNoOperation) {
  known_operation_ = "op-1";
  Start();
  constexpr std::int64_t t0 = kConnectAppStartMs;
  ASSERT_EQ(Push(ConnectOperationWithOneJob("Closed", t0 + 5'000)).status, 200);
  feed_->PollNow();
  // The operation's job is under the proxy's operation span; no application trace yet.
  const std::vector<tracing::Span> jobs = spans_.Named("spark.job");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs.front().trace_id, operation_span_.trace_id);
  EXPECT_EQ(jobs.front().parent_span_id, operation_span_.span_id);
  EXPECT_TRUE(spans_.Named("spark.application").empty());

  ASSERT_EQ(Push({tl::JobStart(2, t0 + 6'000, {2}, {}), tl::JobEnd(2, t0 + 7'000), tl::AppEnd(t0 + 8'000)},
                 "app=app-connect")
                .status,
            200);
  feed_->PollNow();
  const std::vector<tracing::Span> roots = spans_.Named("spark.application");
  ASSERT_EQ(roots.size(), 1u);
  std::size_t in_application_trace = 0;
  for (const tracing::Span& job : spans_.Named("spark.job")) {
    if (job.trace_id != roots.front().trace_id) continue;
    ++in_application_trace;
    EXPECT_EQ(std::get<std::int64_t>(FindAttribute(job, "spark.job.id")->value), 2);
  }
  EXPECT_EQ(in_application_trace, 1u);
  for (const tracing::Span& phase : spans_.WithPrefix("spark.phase.")) {
    EXPECT_NE(phase.trace_id, roots.front().trace_id) << "no phase intervals in a Connect server's own trace";
  }
}

// spark_application_airflow_info: one series per application, the Airflow task of its latest
// operation (by the driver's start time, whatever order the feed looks operations up in) that had
// one. Operations without an identity leave it as it is; none yet: no series.
TEST_F(ListenerFeedEventLogFeed, AnApplicationsAirflowTaskIsThatOfItsLatestOperationWithOne) {
  known_operation_ = "op-plain";
  airflow_tasks_ = {{"op-a", {"daily_sales", "load_orders"}},
                    {"op-b", {"daily_sales", "extract"}},
                    {"op-c", {"hourly", "report"}}};
  Start();
  constexpr std::int64_t t0 = kConnectAppStartMs;
  const auto started = [](std::string_view id, std::int64_t ms) {
    return tl::ConnectOperation("Started", tl::OperationTag("u", "s", id), id, ms, "s", "u");
  };
  const auto series = [&] {
    const auto families = feed_->metrics()->Collect();
    const prometheus::MetricFamily* family = FindFamily(families, "spark_application_airflow_info");
    std::vector<std::string> found;
    if (family == nullptr) return found;
    EXPECT_EQ(family->type, prometheus::MetricType::Gauge);
    for (const auto& metric : family->metric) {
      std::string text;
      for (const auto& label : metric.label) text += label.name + "=" + label.value + " ";
      found.push_back(text + (metric.gauge.value == 1.0 ? "1" : "not 1"));
    }
    return found;
  };

  ASSERT_EQ(Push({tl::AppStart("app-connect", t0), tl::ExecutorAdded("1", t0 + 500),
                  started("op-plain", t0 + 1'000)})
                .status,
            200);
  feed_->PollNow();
  ASSERT_NE(FindFamily(feed_->metrics()->Collect(), "spark_application_airflow_info"), nullptr);
  EXPECT_TRUE(series().empty()) << "no operation with an Airflow identity yet";

  // One poll looks op-a up before op-b (id order); op-a started later, so it is the latest.
  ASSERT_EQ(Push({started("op-b", t0 + 2'000),
                  tl::JobStart(1, t0 + 2'500, {1}, {tl::OperationTag("u", "s", "op-b")}),
                  started("op-a", t0 + 5'000)},
                 "app=app-connect")
                .status,
            200);
  feed_->PollNow();
  EXPECT_EQ(series(), (std::vector<std::string>{"app=test dag_id=daily_sales task_id=load_orders 1"}));

  // op-b is looked up again as its job ends: older, it does not take the task back; neither does
  // a later operation that came without an identity.
  known_operation_ = "op-plain-2";  // before the push wakes the feed thread, which reads it
  ASSERT_EQ(Push({tl::JobEnd(1, t0 + 6'000), started("op-plain-2", t0 + 7'000)}, "app=app-connect").status,
            200);
  feed_->PollNow();
  EXPECT_EQ(series(), (std::vector<std::string>{"app=test dag_id=daily_sales task_id=load_orders 1"}));

  ASSERT_EQ(Push({started("op-c", t0 + 9'000)}, "app=app-connect").status, 200);
  feed_->PollNow();
  EXPECT_EQ(series(), (std::vector<std::string>{"app=test dag_id=hourly task_id=report 1"}))
      << "the latest task replaces the series: one per application";
}

// Spark writes an operation's Closed when the client released it, often after the last job ended
// and after the feed emitted the operation's spans in their finished state.
TEST_F(ListenerFeedEventLogFeed, AClosedEventAfterTheLastJobStillReachesTheLifecycleSpan) {
  known_operation_ = "op-1";
  Start();
  const std::string tag = tl::OperationTag("u", "s", "op-1");
  constexpr std::int64_t t0 = kConnectAppStartMs;
  ASSERT_EQ(Push(ConnectOperationWithOneJob("Finished", t0 + 4'500)).status, 200);
  feed_->PollNow();
  const auto event_names = [&] {
    std::vector<std::string> names;
    for (const tracing::Span& span : spans_.Named("spark.connect.operation.lifecycle")) {
      for (const tracing::SpanEvent& event : span.events) names.push_back(event.name);
    }
    return names;
  };
  ASSERT_EQ(event_names(), (std::vector<std::string>{"started", "finished"}));

  ASSERT_EQ(Push({tl::ConnectOperation("Closed", tag, "op-1", t0 + 9'000)}, "app=app-connect").status, 200);
  feed_->PollNow();
  EXPECT_EQ(event_names(), (std::vector<std::string>{"started", "finished", "closed"}));
}

// A task that ends after its job did (a speculative copy that lost the race) still counts in the
// stage span of a finished operation.
TEST_F(ListenerFeedEventLogFeed, ATaskEndAfterTheJobEndStillReachesTheStageSpan) {
  known_operation_ = "op-1";
  Start();
  constexpr std::int64_t t0 = kConnectAppStartMs;
  ASSERT_EQ(Push(ConnectOperationWithOneJob("Closed", t0 + 5'000)).status, 200);
  feed_->PollNow();
  const auto tasks_ended = [&]() -> std::int64_t {
    const std::vector<tracing::Span> stages = spans_.Named("spark.stage");
    if (stages.size() != 1) return -1;
    const tracing::Attribute* ended = FindAttribute(stages.front(), "spark.stage.tasks_ended");
    return ended != nullptr ? std::get<std::int64_t>(ended->value) : -1;
  };
  ASSERT_EQ(tasks_ended(), 0);

  ASSERT_EQ(Push({tl::TaskEnd(1, 7, t0 + 3'100, t0 + 6'000)}, "app=app-connect").status, 200);
  feed_->PollNow();
  EXPECT_EQ(tasks_ended(), 1);
}
}  // namespace
}  // namespace sparktrace::feed
