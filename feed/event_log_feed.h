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

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "diagnose/finding.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/suppression.h"
#include "feed/application_event_totals.h"
#include "feed/application_figures.h"
#include "feed/application_phase_totals.h"
#include "feed/event_push_endpoint.h"
#include "feed/feed_metrics.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/span_builder.h"
#include "listener/eventlog/event_log_scanner.h"
#include "listener/events/event_parser.h"
#include "listener/rest/rest_poller.h"
#include "tracing/sampler.h"
#include "tracing/span.h"
#include "tracing/span_sink.h"

namespace sparktrace::feed {

// Where the proxy's span of an operation is; nullopt when the proxy never saw that operation.
// With the Airflow task its ExecutePlan named, if any (spark_application_airflow_info).
struct OperationSpanTarget {
  tracing::TraceId trace_id{};
  tracing::SpanId span_id{};
  bool sampled = false;
  std::optional<AirflowTask> airflow_task;
};
using FindOperationSpan = std::function<std::optional<OperationSpanTarget>(std::string_view operation_id)>;

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

class EventLogFeed final : private eventlog::EventLogSink {
 public:
  static Result<std::unique_ptr<EventLogFeed>> Start(EventLogFeedOptions options,
                                                     FindOperationSpan find_operation_span,
                                                     tracing::SpanSink& spans);
  ~EventLogFeed() override;  // closes the push endpoint, stops the thread after one last poll
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
  using Clock = std::chrono::steady_clock;

  struct Application {
    listener::ApplicationModel model;
    ApplicationPhaseTotals phases;
    ApplicationEventTotals events;  // what the metrics count, whatever the model forgets
    bool changed = false;           // events applied since the last operation emission
    bool trace_changed = false;     // ... since the last application-trace emission
    bool metrics_changed = false;
    bool log_completed = false;     // its event log was completed (or, for others, ApplicationEnd)
    bool log_abandoned = false;     // its log was rewritten: this model ends here
    bool trace_submitted = false;   // its application trace was submitted at least once
    bool findings_counted = false;  // its findings went into sparktrace_findings_total
    std::optional<Clock::time_point> trace_emitted_at;
    std::optional<Clock::time_point> completed_at;
    std::optional<listener::EpochMillis> forgotten_before_ms;  // the latest ForgetFinishedBefore cutoff
    std::set<tracing::SpanId> final_submitted;  // its application trace's spans, as of the last build
    // The Airflow task of its latest operation (by driver start time) whose lookup named one, and
    // that operation's start: an older operation looked up again later must not take it back.
    std::optional<AirflowTask> airflow_task;
    std::optional<listener::EpochMillis> airflow_task_started_ms;
  };
  // The application is over: nothing of it stays open.
  static bool Over(const Application& application);
  // What an operation's spans are built from, in counts: once its jobs have all ended, spans
  // emitted in an equal state have nothing new to say. Driver events keep coming after the last
  // JobEnd (Closed when the client releases the operation, TaskEnds of killed speculative copies).
  struct OperationState {
    std::size_t jobs = 0;
    bool all_jobs_ended = false;
    int lifecycle_events = 0;  // the operation's Connect events, Started ... Closed
    std::size_t stage_attempts = 0;
    std::int64_t tasks_ended = 0;
    bool application_over = false;
    bool operator==(const OperationState&) const = default;
  };
  static OperationState StateOf(const listener::ApplicationModel& model,
                                const listener::ConnectOperationRecord* record,
                                const std::vector<std::int32_t>& jobs);
  struct OperationProgress {
    std::string log_id;
    std::string operation_id;
    bool emitted = false;
    OperationState emitted_state;   // as of the last emission
    bool findings_counted = false;  // its findings went into sparktrace_findings_total
    int lookups_failed = 0;
    std::set<tracing::SpanId> final_submitted;  // its spans submitted final, as of the last build
  };

  EventLogFeed(EventLogFeedOptions options, FindOperationSpan find_operation_span, tracing::SpanSink& spans,
               std::unique_ptr<eventlog::EventLogScanner> scanner,
               std::unique_ptr<listener::rest::RestPoller> rest, tracing::Sampler sampler);
  void Run();
  void PollOnce(bool final_poll);
  void ApplyPushes();
  void PollRest();
  void Apply(Application& application, const listener::SparkEvent& event);
  void EmitChangedApplications();
  void EmitOperation(const std::string& log_id, Application& application, const std::string& operation_id);
  static void NoteAirflowTask(Application& application, std::optional<listener::EpochMillis> started_ms,
                              const AirflowTask& task);
  // Submits each built span final the first time it is built ended, live otherwise; keeps in
  // `final_submitted` only ids still built (what the model forgot is never built again).
  void SubmitBuilt(listener::BuiltSpans built, std::set<tracing::SpanId>& final_submitted);
  void EmitApplicationTraces(bool force);
  void EmitApplicationTrace(Application& application);
  std::vector<ApplicationFigures> ChangedApplicationFigures();
  void ApplyRetention();
  void ForgetProgressOf(const std::string& log_id, const listener::ApplicationModel* still_held);
  void CountFindings(const std::vector<diagnose::Finding>& findings);
  // Marks the findings a suppression matches, for the Airflow task they belong to (if any).
  void Suppress(std::vector<diagnose::Finding>& findings, const std::optional<AirflowTask>& task) const;
  // Logs each suppression once, the first poll it is found expired (at start, or when its day passes).
  void AnnounceExpiredSuppressions();
  void Publish(const std::vector<ApplicationFigures>& figures);

  eventlog::LineVerdict OnLine(const eventlog::LogIdentity& log, std::string_view line,
                               const eventlog::LinePosition& position) override;
  void OnLogRestarted(const eventlog::LogIdentity& log, std::uint64_t generation,
                      std::string_view reason) override;
  void OnLogCompleted(const eventlog::LogIdentity& log) override;

  const EventLogFeedOptions options_;
  const FindOperationSpan find_operation_span_;
  tracing::SpanSink& spans_;
  const tracing::Sampler sampler_;
  std::unique_ptr<eventlog::EventLogScanner> scanner_;  // feed thread only; null without directories
  std::unique_ptr<listener::rest::RestPoller> rest_;    // feed thread only; null without --spark-ui
  std::shared_ptr<EventPushEndpoint> push_;             // null without options.push
  std::shared_ptr<FeedMetrics> metrics_;
  listener::EventParser parser_;  // feed thread only
  // By source key: the log id, "spark-ui:<app>/<attempt>" or "push:<stream>"; feed thread only.
  std::map<std::string, Application> applications_;
  std::map<std::string, OperationProgress> progress_;  // by "<source key>/<operation id>"; feed thread only
  std::vector<bool> expiry_announced_;                 // by options_.suppressions' index; feed thread only
  std::chrono::sys_days today_{};                      // the UTC day of the current poll; feed thread only
  EventLogFeedCounters totals_;                        // feed thread only; published after each poll

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
