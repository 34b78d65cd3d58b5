#pragma once
// Attribute keys of the `sparktrace.finding` span event (feed/finding_span_events.h) that
// more than one module reads: the feed writes them, the trace view (traceview/attempt_json.cc)
// and the store's task index read them. A suppressed finding (diagnose/suppression.h) carries
// both suppression keys; an unsuppressed one neither.

#include <string_view>

namespace sparktrace::tracing {

inline constexpr std::string_view kFindingSuppressedReasonKey = "finding.suppressed_reason";
inline constexpr std::string_view kFindingSuppressedUntilKey = "finding.suppressed_until";  // "YYYY-MM-DD"

}  // namespace sparktrace::tracing
