#pragma once
// Spans built by hand for the trace view's computation tests (breakdown, critical path, Chrome
// trace): times in milliseconds from a fixed origin, ids from small numbers (0: no parent).

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::traceview_test {

inline constexpr std::uint64_t kOriginMs = 1'764'050'400'000;  // 2025-11-25T06:00:00Z

// Unix nanoseconds `offset_ms` after the origin.
inline std::uint64_t At(double offset_ms) {
  return kOriginMs * 1'000'000 + static_cast<std::uint64_t>(std::llround(offset_ms * 1e6));
}

// Unix milliseconds `offset_ms` after the origin, as the trace view's JSON writes times.
inline double MsAfterOrigin(double offset_ms) { return static_cast<double>(kOriginMs) + offset_ms; }

inline tracing::SpanId Id(std::uint32_t n) {
  tracing::SpanId id{};
  for (std::size_t i = 0; i < 4; ++i) id[7 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

inline tracing::Span MakeSpan(std::string name, std::uint32_t id, std::uint32_t parent, double start,
                              double end, std::vector<tracing::Attribute> attributes = {}) {
  tracing::Span span;
  span.name = std::move(name);
  span.span_id = Id(id);
  span.parent_span_id = Id(parent);  // 0: a root
  span.start_time_unix_nano = At(start);
  span.end_time_unix_nano = At(end);
  span.attributes = std::move(attributes);
  return span;
}

}  // namespace sparktrace::traceview_test
