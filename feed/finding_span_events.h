#pragma once
// Diagnosis findings (diagnose/finding.h) on the spans the feed builds: each finding becomes a
// `sparktrace.finding` span event, so a trace viewer (the built-in one, Tempo, Jaeger) shows what
// is wrong next to where the time went.
//
// Where: an operation's findings go on its spark.connect.operation.lifecycle span (the driver's
// side of the operation: the proxy's own operation span was exported when the call ended, before
// the driver's events arrived), stage-scoped ones also on that stage attempt's spark.stage span;
// an application's on its spark.application root. Event attributes: finding.id, .severity,
// .scope, .title, .impact_seconds, .recipe, .fix (list), .evidence (list of "name=value unit
// (>= threshold)"), .related (list of "relation key"), and for a suppressed finding
// .suppressed_reason and .suppressed_until (encoded by tracing/finding_event.h; the keys are
// tracing/span_vocabulary.h's). The span gets
// `sparktrace.findings`, the list of finding ids, for search (e.g. TraceQL `{ span.sparktrace.findings =~
// ".*data-skew.*" }` needs a string: the ids are also joined in `sparktrace.finding_ids`).
//
// Pure functions.

#include <cstdint>
#include <vector>

#include "diagnose/finding.h"
#include "tracing/span.h"

namespace sparktrace::feed {

// One finding as a span event (tracing::kFindingEventName) at `time_unix_nano`.
tracing::SpanEvent FindingSpanEvent(const diagnose::Finding& finding, std::uint64_t time_unix_nano);

// Adds `findings` to the spans they belong to among `spans` (built by span_builder.h): the span
// named `holder_name` (lifecycle or application root) gets every finding, each spark.stage span
// the findings scoped to its stage attempt. Events are stamped with the holder's end time.
// Returns false when no span named `holder_name` is among `spans` (nothing attached).
bool AttachFindings(std::vector<tracing::Span>& spans, std::string_view holder_name,
                    const std::vector<diagnose::Finding>& findings);

}  // namespace sparktrace::feed
