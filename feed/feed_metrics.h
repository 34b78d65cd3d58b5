#pragma once
// The driver-event feed's Prometheus metrics (docs/tracing.md, "Metrics"), read at scrape time
// from a snapshot the feed thread publishes after each poll — never from the live models:
//
//   spark_*{app,...}              per application name, the figures of the latest application of
//       that name (ApplicationFigures, application_metric_families.h): phase totals, shares and the
//       active phase (listener/correlate/phases.h), whether it runs, executors, task time ratios,
//       output, spills, heap, job/stage/task/executor-loss counters and the task-duration histogram,
//       and spark_application_airflow_info{app,dag_id,task_id}, the Airflow task of its latest
//       operation the proxy traced with one (one series per name)
//   sparktrace_findings_total{id,severity}                              diagnosis findings
//   sparktrace_findings_suppressed_total{id}       findings a rules-file suppression muted instead
//   sparktrace_suppressions{state}                 the rules file's suppressions: active, expired
//   sparktrace_listener_*_total                                         the feed's counters
//
// Labels are bounded: `app` is the application's name (not its id, not an operation), and at most
// `max_applications` names are kept — the least recently updated is dropped for a new one and
// counted in sparktrace_listener_metric_applications_evicted_total. A name stays after its
// application's model is dropped from memory, until evicted.
//
// Threads: Publish() from the feed thread, Collect() from the admin thread; one mutex.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "feed/application_figures.h"
#include "feed/event_push_endpoint.h"

namespace sparktrace::feed {

struct EventLogFeedCounters {
  std::uint64_t lines = 0;                 // event-log lines read (pushed lines: EventPushCounters)
  std::uint64_t events = 0;                // events applied to a model, from any source
  std::uint64_t malformed_lines = 0;       // event-log lines that are not events
  std::uint64_t operations_traced = 0;     // operations whose spans were submitted at least once
  std::uint64_t operations_unknown = 0;    // seen in the logs, never through this proxy
  std::uint64_t applications_traced = 0;   // application traces submitted at least once
  std::uint64_t spans_submitted = 0;       // final: each span once, when it has ended (OTLP gets these)
  std::uint64_t live_spans_submitted = 0;  // open spans and updates of ended ones, for the store only
  // spark.sql.execution spans built whose plan attribute lost metrics or nodes (--sql-plan-max-bytes);
  // every build counts, a running execution's rebuilds too.
  std::uint64_t sql_plans_reduced = 0;
  std::uint64_t rest_events = 0;
  std::uint64_t rest_errors = 0;
  std::uint64_t operations_forgotten = 0;  // dropped from memory once final (retention)
  std::uint64_t jobs_forgotten = 0;
  std::uint64_t applications_forgotten = 0;
  // Diagnosis findings of operations and applications that ended, by (rule id, severity): each
  // finding counted once, when its operation or application is final. Bounded: 9 ids x 3.
  std::map<std::pair<std::string, std::string>, std::uint64_t> findings;
  // Findings a suppression (diagnose/suppression.h) matched, by rule id, counted here instead of
  // in `findings` so that alerts on sparktrace_findings_total do not fire. Bounded: 10 ids.
  std::map<std::string, std::uint64_t> findings_suppressed;
};

// What the feed holds in memory right now.
struct EventLogFeedHeld {
  std::uint64_t applications = 0;
  std::uint64_t operations = 0;            // operation progress entries (looked up or emitted)
  std::uint64_t suppressions_active = 0;   // the rules file's suppressions applying today
  std::uint64_t suppressions_expired = 0;  // ... past their `until` day, ignored
};

class FeedMetrics final : public prometheus::Collectable {
 public:
  // `push` (may be null) is read for the push counters at scrape time.
  FeedMetrics(std::size_t max_applications, std::shared_ptr<const EventPushEndpoint> push);

  // The feed's totals so far, what it holds, and the latest figures of applications that changed
  // (a name repeated in `changed`: the last one wins).
  void Publish(const EventLogFeedCounters& totals, const EventLogFeedHeld& held,
               const std::vector<ApplicationFigures>& changed);

  std::vector<prometheus::MetricFamily> Collect() const override;

  // The app label values currently exported, and how many were evicted (tests).
  std::vector<std::string> application_names() const;
  std::uint64_t applications_evicted() const;

 private:
  struct Entry {
    ApplicationFigures figures;
    std::uint64_t updated = 0;  // publish sequence of the latest update
  };

  const std::size_t max_applications_;
  const std::shared_ptr<const EventPushEndpoint> push_;

  mutable std::mutex mu_;
  EventLogFeedCounters totals_;
  EventLogFeedHeld held_;
  std::map<std::string, Entry> applications_;  // by app label
  std::uint64_t sequence_ = 0;
  std::uint64_t evicted_ = 0;
};

}  // namespace sparktrace::feed
