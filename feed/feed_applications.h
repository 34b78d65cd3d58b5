#pragma once
// The feed's per-application bookkeeping: one correlated model (listener/correlate) per source —
// an event log (by its id), a driver polled over REST ("spark-ui:<app>/<attempt>") or a push
// stream ("push:<stream>") — with what the feed's other rooms keep beside it: phase and event
// totals that survive forgetting, whether events changed it since each room last looked, where
// its traces stand, and the Airflow task of its latest operation.
//
// Apply() is the one place an event enters a model, so the one place that marks it changed for
// trace emission, the application trace and the metrics alike.
//
// Not synchronised: the feed thread owns it with the models.

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "feed/application_event_totals.h"
#include "feed/application_figures.h"
#include "feed/application_phase_totals.h"
#include "feed/feed_metrics.h"
#include "listener/correlate/application_model.h"
#include "listener/events/spark_event.h"
#include "tracing/span.h"

namespace sparktrace::feed {

using FeedClock = std::chrono::steady_clock;

struct FeedApplication {
  listener::correlate::ApplicationModel model;
  ApplicationPhaseTotals phases;
  ApplicationEventTotals events;  // what the metrics count, whatever the model forgets
  bool changed = false;           // events applied since the last operation emission
  bool trace_changed = false;     // ... since the last application-trace emission
  bool metrics_changed = false;
  bool log_completed = false;     // its event log was completed (or, for others, ApplicationEnd)
  bool log_abandoned = false;     // its log was rewritten: this model ends here
  bool trace_submitted = false;   // its application trace was submitted at least once
  bool findings_counted = false;  // its findings went into sparktrace_findings_total
  std::optional<FeedClock::time_point> trace_emitted_at;
  std::optional<FeedClock::time_point> completed_at;
  std::optional<listener::events::EpochMillis> forgotten_before_ms;  // the latest ForgetFinishedBefore cutoff
  std::set<tracing::SpanId> final_submitted;  // its application trace's spans, as of the last build
  // The Airflow task of its latest operation (by driver start time) whose lookup named one, and
  // that operation's start: an older operation looked up again later must not take it back.
  std::optional<AirflowTask> airflow_task;
  std::optional<listener::events::EpochMillis> airflow_task_started_ms;
};

// The application is over: nothing of it stays open.
bool Over(const FeedApplication& application);

// The Airflow task an operation's lookup named, for the operation the driver started at
// `started_ms` (nullopt: unknown): kept when that operation is the application's latest.
void NoteAirflowTask(FeedApplication& application, std::optional<listener::events::EpochMillis> started_ms,
                     const AirflowTask& task);

class FeedApplications {
 public:
  // `totals` (the feed's, feed thread only) counts the events applied.
  explicit FeedApplications(EventLogFeedCounters& totals) : totals_(totals) {}
  FeedApplications(const FeedApplications&) = delete;
  FeedApplications& operator=(const FeedApplications&) = delete;

  // The application of `source_key`, created empty the first time.
  FeedApplication& Of(const std::string& source_key) { return applications_[source_key]; }
  // Null when `source_key` has no application.
  FeedApplication* Find(const std::string& source_key);
  // Applies `event` to the application's model and totals and marks it changed for every room.
  void Apply(FeedApplication& application, const listener::events::SparkEvent& event);
  // The event log of `source_key` was completed: its traces and figures are owed a final version.
  void LogCompleted(const std::string& source_key);

  // By source key; the rooms walk (and retention erases from) it.
  std::map<std::string, FeedApplication>& all() { return applications_; }
  std::size_t size() const { return applications_.size(); }

 private:
  EventLogFeedCounters& totals_;
  std::map<std::string, FeedApplication> applications_;
};

}  // namespace sparktrace::feed
