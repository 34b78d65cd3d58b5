#include "traceview/span_bound.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "traceview/view_time.h"

namespace sparktrace::traceview {
namespace {

// The summary of the spans left out, one group per lane and name.
std::vector<SpanGroup> GroupSpans(std::span<const tracing::Span> spans, const std::vector<std::size_t>& left_out,
                                  double window_start_ms, double window_end_ms) {
  const double window_ms = std::max(window_end_ms - window_start_ms, 0.0);
  std::map<std::pair<Lane, std::string_view>, SpanGroup> groups;
  for (const std::size_t index : left_out) {
    const tracing::Span& span = spans[index];
    const Lane lane = LaneOf(span);
    SpanGroup& group = groups[{lane, span.name}];
    const double start = SpanStartMs(span);
    const double end = SpanEndMs(span);
    if (group.count == 0) {
      group.lane = lane;
      group.name = span.name;
      group.label = SpanLabel(span);
      group.start_ms = start;
      group.end_ms = end;
      group.buckets.assign(kSpanGroupBuckets, 0);
    }
    ++group.count;
    if (span.status_code == tracing::StatusCode::kError) ++group.error_count;
    group.start_ms = std::min(group.start_ms, start);
    group.end_ms = std::max(group.end_ms, end);
    group.busy_ms += std::max(end - start, 0.0);
    // A start outside the window (clock skew) counts in the nearest slice.
    const double at = window_ms > 0 ? (start - window_start_ms) / window_ms : 0.0;
    const auto slice = static_cast<std::size_t>(
        std::clamp(at * static_cast<double>(kSpanGroupBuckets), 0.0, static_cast<double>(kSpanGroupBuckets - 1)));
    ++group.buckets[slice];
  }
  std::vector<SpanGroup> out;
  out.reserve(groups.size());
  for (auto& [key, group] : groups) out.push_back(std::move(group));
  std::stable_sort(out.begin(), out.end(), [](const SpanGroup& a, const SpanGroup& b) {
    return std::tie(a.lane, b.count) < std::tie(b.lane, a.count);
  });
  return out;
}

}  // namespace

BoundedSpans BoundSpans(std::span<const tracing::Span> spans, const std::vector<std::optional<std::size_t>>& parent,
                        const std::vector<std::size_t>& order, const std::vector<int>& depth,
                        const std::vector<bool>& has_children,
                        const std::vector<bool>& pinned, std::size_t max_spans, double window_start_ms,
                        double window_end_ms) {
  BoundedSpans bounded;
  if (max_spans == 0 || order.size() <= max_spans) {
    bounded.order = order;
    return bounded;
  }
  // The shape first (tree order: a listed span's parent is listed before it), pinned spans whatever
  // their shape; then the lone roots that fit, errors first, then the longest, then the earliest.
  std::vector<bool> listed(spans.size(), false);
  std::size_t room = max_spans;
  std::vector<std::size_t> lone;
  for (const std::size_t index : order) {
    const bool is_lone = depth[index] == 0 && !has_children[index] && !pinned[index];
    if (is_lone) {
      lone.push_back(index);
    } else if (room > 0 || pinned[index]) {
      listed[index] = true;
      room = room > 0 ? room - 1 : 0;
    }
  }
  if (room > 0 && !lone.empty()) {
    const auto rank = [&spans](std::size_t index) {
      const tracing::Span& span = spans[index];
      return std::make_tuple(span.status_code != tracing::StatusCode::kError,
                             -(SpanEndMs(span) - SpanStartMs(span)), SpanStartMs(span), index);
    };
    const std::size_t keep = std::min(room, lone.size());
    std::vector<std::size_t> ranked = lone;
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(),
                      [&rank](std::size_t a, std::size_t b) { return rank(a) < rank(b); });
    for (std::size_t i = 0; i < keep; ++i) listed[ranked[i]] = true;
  }
  // A pinned span listed past the bound brings its ancestors (a listed span's parent is listed).
  for (std::size_t index = 0; index < spans.size(); ++index) {
    if (!listed[index]) continue;
    for (auto up = parent[index]; up && !listed[*up]; up = parent[*up]) listed[*up] = true;
  }
  std::vector<std::size_t> left_out;
  for (const std::size_t index : order) {
    if (listed[index]) {
      bounded.order.push_back(index);
    } else {
      left_out.push_back(index);
    }
  }
  bounded.groups = GroupSpans(spans, left_out, window_start_ms, window_end_ms);
  return bounded;
}

}  // namespace sparktrace::traceview
