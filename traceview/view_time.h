#pragma once
// Time conversions shared by the trace view's computations: spans carry Unix nanoseconds, the view
// works in epoch milliseconds as doubles (docs/trace-view-api.md), so that JSON numbers carry
// microseconds and JavaScript reads them without rounding.
//
// Pure inline functions.

#include <algorithm>
#include <cstdint>

#include "tracing/span.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::traceview {

// Whole milliseconds and the remainder are converted apart: a double holds today's epoch
// milliseconds to a quarter of a microsecond, where converting the nanoseconds first would round
// them to 256 ns before the division.
inline double NanosToMs(std::uint64_t unix_nanos) {
  const std::uint64_t whole_ms = unix_nanos / 1'000'000;
  const std::uint64_t rest_nanos = unix_nanos % 1'000'000;
  return static_cast<double>(whole_ms) + static_cast<double>(rest_nanos) / 1e6;
}

inline std::uint64_t SpanStartNanos(const tracing::Span& span) { return span.start_time_unix_nano; }
// A span that ends before it starts (clock skew, malformed input) is taken as empty.
inline std::uint64_t SpanEndNanos(const tracing::Span& span) {
  return std::max(span.start_time_unix_nano, span.end_time_unix_nano);
}
inline double SpanStartMs(const tracing::Span& span) { return NanosToMs(SpanStartNanos(span)); }
inline double SpanEndMs(const tracing::Span& span) { return NanosToMs(SpanEndNanos(span)); }

// A task index row's start and wall time, read as its spans' are.
inline double AttemptStartMs(const tracing::store::TaskAttemptRow& row) {
  return NanosToMs(row.start_unix_nano);
}
inline double AttemptWallMs(const tracing::store::TaskAttemptRow& row) {
  return NanosToMs(std::max(row.start_unix_nano, row.end_unix_nano)) - AttemptStartMs(row);
}

}  // namespace sparktrace::traceview
