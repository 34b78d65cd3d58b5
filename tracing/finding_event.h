#pragma once
// The codec of the `sparktrace.finding` span event (tracing/span_vocabulary.h): one diagnosis
// finding (diagnose/finding.h) as text and numbers on a span, written by the feed
// (feed/finding_span_events.h) and read back by the trace view (traceview/attempt_findings.cc), the
// store's task index (tracing/store/task_index/attempt_parts.cc) and the demo's report (cli/demo/report.cc).
// tracing/ does not depend on diagnose/: the event is the finding already put into words.
//
// Pure functions; no threading concerns.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing {

struct FindingEventSuppression {
  std::string reason;
  std::string until;  // "YYYY-MM-DD": the last day (UTC) it applies
};

struct FindingEvent {
  std::string id;        // the rule id: "data-skew"
  std::string key;       // unique within a diagnosis: "data-skew@stage:3.0"; empty from old producers
  std::string severity;  // "info", "warning", "critical"
  std::string scope;     // "stage job 2 stage 3.0"
  std::string title;
  double impact_seconds = 0;
  std::string recipe;                 // "docs/recipes/troubleshoot/slow-spark-jobs.md#idle-executors"
  std::vector<std::string> fix;       // concrete actions
  std::vector<std::string> evidence;  // "name=value unit (>= threshold)"
  std::vector<std::string> related;   // "relation key": "summarises data-skew@stage:3.0"
  std::optional<FindingEventSuppression> suppressed;

  // A summary finding repeats the findings it "summarises" (slow-spark-jobs sums up its operation's
  // causes): ranked after a specific finding of equal impact. Read from `related`, so that spans
  // stored before this codec existed read the same.
  bool IsSummary() const;
};

// The event at `time_unix_nano`. Attributes in a fixed order: id, key, severity, scope, title,
// impact_seconds (double), recipe, fix, evidence (string lists), related (only when not empty), and
// suppressed_reason and suppressed_until (only when suppressed).
SpanEvent EncodeFindingEvent(const FindingEvent& finding, std::uint64_t time_unix_nano);

// The finding of a `sparktrace.finding` event; nullopt for an event of another name. Tolerant of
// what older producers left out: a missing text is empty, a missing list empty, a missing impact 0.
std::optional<FindingEvent> DecodeFindingEvent(const SpanEvent& event);
// The same from the event's attributes alone (the store reads them back from its events JSON).
FindingEvent DecodeFindingAttributes(const std::vector<Attribute>& attributes);

}  // namespace sparktrace::tracing
