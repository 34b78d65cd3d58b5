#pragma once
// Follows the driver's event logs (or polls its REST API, or takes events pushed to
// POST /api/v1/events) while the proxy runs and turns what the driver did into spans
// (docs/tracing.md, "Driver events"):
//
//   * for each Spark Connect operation — its jobs, stages and phases — under the span the proxy
//     recorded for it (FindOperationSpan);
//   * for each application, a trace of its own rooted at a spark.application span, with the jobs
//     of no Connect operation (all of them for a plain spark-submit application) and, for
//     applications without Connect operations, its phase intervals;
//   * diagnosis findings on those spans (finding_span_events.h), counted once final in
//     sparktrace_findings_total, or, where a rules-file suppression matches (by the Airflow task of
//     the operation, or of the application's latest operation), marked with its reason and counted
//     in sparktrace_findings_suppressed_total instead;
//   * per application name, its phase totals, task, executor and job figures as Prometheus
//     metrics (FeedMetrics), and the Airflow task of its latest operation the proxy traced.
//
// Threads: one thread of its own applies pushed events, polls the logs every `poll_interval`,
// parses and models them, submits spans and publishes metrics; `find_operation_span` and the sink
// are called on it. A push wakes it at once. Spans are rebuilt while jobs run and carry ids
// derived from the application and job/stage, so the store replaces earlier versions instead of
// adding to them. Each span is submitted final exactly once, when it has ended (the only version
// an OTLP collector gets); every other version (still open, or updated after it ended) is
// submitted live, for the store only. When an application is over (ApplicationEnd, its log
// completed, or abandoned for a rewritten one), what is still open is ended at its last event and
// marked sparktrace.incomplete, then submitted final.
//
// Memory: a Spark Connect server is one application that runs for weeks. Once an operation's
// spans are final (closed, all its jobs ended, `operation_retention` of driver time ago) it is
// forgotten with its jobs; an application that ended is dropped `completed_application_retention`
// after its end was seen, its final spans submitted.
//
// EventLogFeed owns the thread and composes the rooms that do the work, each poll in this order:
// findings (feed_findings.h: today's suppressions), intake (feed_intake.h: sources into the models
// of feed_applications.h), trace emission (trace_emitter.h), metrics (changed_figures.h, then
// feed_metrics.h), after retention (feed_retention.h) dropped what is final.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/suppression.h"
#include "feed/application_figures.h"
#include "feed/event_push_endpoint.h"
#include "feed/feed_metrics.h"
#include "feed/operation_span_target.h"
#include "listener/correlate/sql_execution_span.h"
#include "tracing/sampler.h"
#include "tracing/span_sink.h"

namespace sparktrace::listener::eventlog {
class EventLogScanner;
}  // namespace sparktrace::listener::eventlog
namespace sparktrace::listener::rest {
class RestPoller;
}  // namespace sparktrace::listener::rest

namespace sparktrace::feed {

class FeedApplications;
class FeedFindings;
class FeedIntake;
class FeedRetention;
class TraceEmitter;

struct EventLogFeedOptions {
  std::vector<std::string> directories;  // event-log directories (may be empty)
  std::string spark_ui_url;              // the driver's REST API (--spark-ui); empty: not polled
  std::chrono::milliseconds poll_interval{1000};
  std::optional<EventPushOptions> push;  // POST /api/v1/events; nullopt: no endpoint
  // Application traces start here, with no parent: sampled like the proxy's own root traces
  // (--sample-ratio, deterministic on the trace id).
  double sample_ratio = 1.0;
  // A running application's trace is rebuilt at most this often (and once more when it ends).
  std::chrono::milliseconds application_trace_interval{10'000};
  // Driver time after an operation (or a job of none) ended before it is forgotten.
  std::chrono::milliseconds operation_retention{10 * 60'000};
  // Time after an application's end was seen before its model is dropped.
  std::chrono::milliseconds completed_application_retention{10 * 60'000};
  std::size_t max_metric_applications = 50;  // `app` label values of the spark_* gauges
  // The spark.sql.execution spans' plan attribute bound (--sql-plan-max-bytes).
  listener::correlate::SqlSpanLimits sql_spans{};
  // The diagnosis rules' thresholds (--rules); nullopt turns diagnosis off.
  std::optional<diagnose::RuleThresholds> rules = diagnose::RuleThresholds{};
  // The rules file's suppressions: a finding one matches is attached muted, with its reason, and
  // counted in sparktrace_findings_suppressed_total instead of sparktrace_findings_total.
  std::vector<diagnose::Suppression> suppressions;
  // The wall clock whose UTC day says which suppressions have expired (tests inject one).
  std::function<std::chrono::system_clock::time_point()> wall_clock = [] {
    return std::chrono::system_clock::now();
  };
};

class EventLogFeed final {
 public:
  static Result<std::unique_ptr<EventLogFeed>> Start(EventLogFeedOptions options,
                                                     FindOperationSpan find_operation_span,
                                                     tracing::SpanSink& spans);
  ~EventLogFeed();  // closes the push endpoint, stops the thread after one last poll
  EventLogFeed(const EventLogFeed&) = delete;
  EventLogFeed& operator=(const EventLogFeed&) = delete;

  // Totals as of the last poll. Thread-safe.
  EventLogFeedCounters counters() const;
  // Polls now and waits for it (tests, shutdown); the thread keeps polling afterwards.
  void PollNow();

  // Null without options.push. Shared with the admin server's route, which may outlive the feed
  // (after the feed stops, pushes get 503).
  std::shared_ptr<EventPushEndpoint> push_endpoint() const { return push_; }
  // Read at scrape time; may outlive the feed (it then shows the last snapshot).
  std::shared_ptr<FeedMetrics> metrics() const { return metrics_; }

 private:
  EventLogFeed(EventLogFeedOptions options, FindOperationSpan find_operation_span, tracing::SpanSink& spans,
               std::unique_ptr<listener::eventlog::EventLogScanner> scanner,
               std::unique_ptr<listener::rest::RestPoller> rest, tracing::Sampler sampler);
  void Run();
  void PollOnce(bool final_poll);
  void Publish(const std::vector<ApplicationFigures>& figures);

  const EventLogFeedOptions options_;
  std::shared_ptr<EventPushEndpoint> push_;  // null without options.push
  std::shared_ptr<FeedMetrics> metrics_;
  // The rooms, feed thread only; each counts its own part of totals_, which is published after
  // each poll. Declared in the order they are built: each refers to those above it.
  EventLogFeedCounters totals_;
  std::unique_ptr<FeedApplications> applications_;
  std::unique_ptr<FeedFindings> findings_;
  std::unique_ptr<TraceEmitter> emitter_;
  std::unique_ptr<FeedRetention> retention_;
  std::unique_ptr<FeedIntake> intake_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable polled_;
  bool stopping_ = false;
  bool pushed_ = false;  // a push is waiting to be applied
  std::uint64_t poll_requests_ = 0;
  std::uint64_t polls_done_ = 0;
  EventLogFeedCounters counters_;  // guarded by mu_: totals_ as of the last poll
  std::thread thread_;
};

}  // namespace sparktrace::feed
