#pragma once
// Findings: the diagnosis rules (diagnose/) over each operation and application the feed traces,
// marked where a rules-file suppression matches their Airflow task (the operation's, or the
// application's latest operation's), attached to the spans built for them as span events
// (finding_span_events.h), and counted once final: in sparktrace_findings_total, or in
// sparktrace_findings_suppressed_total when a suppression muted them.
//
// A suppression applies until the end of its `until` day (UTC): BeginPoll() takes the day of each
// poll, and logs each suppression once, the first poll it finds it expired.
//
// Not synchronised: the feed thread owns it.

#include <chrono>
#include <optional>
#include <vector>

#include "diagnose/finding.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/suppression.h"
#include "feed/application_figures.h"
#include "feed/feed_metrics.h"
#include "listener/correlate/application_model.h"
#include "tracing/span.h"

namespace sparktrace::feed {

class FeedFindings {
 public:
  // `rules` nullopt: diagnosis is off and nothing is attached. `totals` (the feed's, feed thread
  // only) counts the findings.
  FeedFindings(std::optional<diagnose::RuleThresholds> rules, std::vector<diagnose::Suppression> suppressions,
               EventLogFeedCounters& totals);
  FeedFindings(const FeedFindings&) = delete;
  FeedFindings& operator=(const FeedFindings&) = delete;

  // First in each poll: `today` decides which suppressions apply.
  void BeginPoll(std::chrono::sys_days today);

  // The operation's findings on its lifecycle span (stage-scoped ones also on their stage spans)
  // among `spans`; counted the first time (`counted` false, then set) the driver said the
  // operation is over.
  void AttachToOperation(const listener::correlate::ApplicationModel& model,
                         const listener::correlate::ConnectOperationRecord& record,
                         const std::optional<AirflowTask>& task, std::vector<tracing::Span>& spans,
                         bool& counted);
  // The application's findings on its spark.application root among `spans`; counted the first time
  // (`counted` false, then set) it is `over`.
  void AttachToApplication(const listener::correlate::ApplicationModel& model,
                           const std::optional<AirflowTask>& task, bool over,
                           std::vector<tracing::Span>& spans, bool& counted);

  // The suppressions applying today and those expired, into `held`.
  void CountSuppressions(EventLogFeedHeld& held) const;

 private:
  // Marks the findings a suppression matches, for the Airflow task they belong to (if any).
  void Suppress(std::vector<diagnose::Finding>& findings, const std::optional<AirflowTask>& task) const;
  void Count(const std::vector<diagnose::Finding>& findings);

  const std::optional<diagnose::RuleThresholds> rules_;
  const std::vector<diagnose::Suppression> suppressions_;
  EventLogFeedCounters& totals_;
  std::vector<bool> expiry_announced_;  // by suppressions_' index
  std::chrono::sys_days today_{};       // the UTC day of the current poll
};

}  // namespace sparktrace::feed
