#pragma once
// Which spans an attempt's answer lists, at most --view-max-spans of them, and a summary of the rest
// (docs/trace-view-api.md, "Large attempts"): an attempt of a call per trace (a client that sends no
// traceparent) holds tens of thousands of one-span traces, which no page can lay out one row each and
// no answer should carry whole. The spans that make the attempt's shape come first: every span with a
// parent or children, and every span a finding, the critical path or a running operation points at;
// then the lone roots (the one-span traces), errors first, then the longest. What does not fit is
// summarised per lane and name: how many, how many failed, when, and how many started in each of
// kSpanGroupBuckets equal slices of the attempt's window (the page draws them as a density lane).
//
// Pure functions; thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "traceview/span_lanes.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// The --view-max-spans default: a 20,000-stage attempt is listed whole.
inline constexpr std::size_t kDefaultViewMaxSpans = 20'000;
// Slices of the attempt's window a span group counts starts in.
inline constexpr std::size_t kSpanGroupBuckets = 120;

struct SpanGroup {
  Lane lane = Lane::kOther;
  std::string name;
  std::string label;  // SpanLabel of the group's first span
  std::int64_t count = 0;
  std::int64_t error_count = 0;
  double start_ms = 0;  // earliest start
  double end_ms = 0;    // latest end
  double busy_ms = 0;   // the spans' durations added up
  std::vector<std::int64_t> buckets;  // starts per slice of the window, kSpanGroupBuckets of them
};

struct BoundedSpans {
  std::vector<std::size_t> order;  // the listed spans, in the tree order given
  std::vector<SpanGroup> groups;   // the others, by lane, then most first
};

// `parent`: each span's parent (span_parents.h); `order`: the spans in tree order (parent before
// children); `depth` and `has_children` per span. `pinned[i]`: span i must be listed (a finding's, the
// critical path's, an open one's), and with it its ancestors, so that every listed parent id resolves:
// pinned spans may take the list a little over `max_spans`. `max_spans` 0: no bound. The window is the breakdown's (epoch ms), the slices' range.
BoundedSpans BoundSpans(std::span<const tracing::Span> spans, const std::vector<std::optional<std::size_t>>& parent,
                        const std::vector<std::size_t>& order, const std::vector<int>& depth,
                        const std::vector<bool>& has_children,
                        const std::vector<bool>& pinned, std::size_t max_spans, double window_start_ms,
                        double window_end_ms);

}  // namespace sparktrace::traceview
