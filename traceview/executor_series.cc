#include "traceview/executor_series.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>

#include "traceview/view_time.h"

namespace sparktrace::traceview {
namespace {

// One known count. At one instant a span's start count comes before the changes made then.
struct Fact {
  double t_ms = 0;
  int order = 0;  // 0: a span's start count, 1: after a change
  int count = 0;
  int count_before = 0;  // just before t_ms, as far as this fact tells
};

int ClampedCount(std::int64_t count) {
  return static_cast<int>(std::clamp<std::int64_t>(count, 0, std::numeric_limits<int>::max()));
}

std::vector<Fact> FactsOf(std::span<const tracing::Span> spans) {
  std::vector<Fact> facts;
  for (const tracing::Span& span : spans) {
    if (const auto* at_start =
            tracing::AttributeValueOf<std::int64_t>(span.attributes, "spark.executors.active_at_start")) {
      facts.push_back({SpanStartMs(span), 0, ClampedCount(*at_start), ClampedCount(*at_start)});
    }
    for (const tracing::SpanEvent& event : span.events) {
      if (event.name != "spark.executor.added" && event.name != "spark.executor.removed") continue;
      const auto* active =
          tracing::AttributeValueOf<std::int64_t>(event.attributes, "spark.executors.active");
      if (active == nullptr) continue;
      const std::int64_t before = event.name == "spark.executor.added" ? *active - 1 : *active + 1;
      facts.push_back({NanosToMs(event.time_unix_nano), 1, ClampedCount(*active), ClampedCount(before)});
    }
  }
  // Stable: changes at one instant keep the order their span listed them in.
  std::stable_sort(facts.begin(), facts.end(), [](const Fact& a, const Fact& b) {
    return a.t_ms < b.t_ms || (a.t_ms == b.t_ms && a.order < b.order);
  });
  return facts;
}

// Appends a step; a later fact at the same time replaces it, an unchanged count adds nothing.
void Step(std::vector<ExecutorPoint>& points, double t_ms, int count) {
  if (!points.empty() && points.back().t_ms == t_ms) {
    points.back().count = count;
    if (points.size() > 1 && points[points.size() - 2].count == count) points.pop_back();
    return;
  }
  if (!points.empty() && points.back().count == count) return;
  points.push_back({t_ms, count});
}

}  // namespace

ExecutorSeries ComputeExecutorSeries(std::span<const tracing::Span> spans, double start_ms, double end_ms) {
  ExecutorSeries series;
  const std::vector<Fact> facts = FactsOf(spans);
  if (facts.empty()) return series;
  series.known = true;
  end_ms = std::max(start_ms, end_ms);

  // The count at start_ms: the latest fact at or before it, else what the first fact says held
  // before it (one fewer before an add, one more before a removal).
  auto next = std::upper_bound(facts.begin(), facts.end(), start_ms,
                               [](double t_ms, const Fact& fact) { return t_ms < fact.t_ms; });
  const int at_start = next == facts.begin() ? facts.front().count_before : std::prev(next)->count;
  series.points.push_back({start_ms, at_start});
  for (; next != facts.end() && next->t_ms <= end_ms; ++next) Step(series.points, next->t_ms, next->count);
  if (series.points.back().t_ms < end_ms) series.points.push_back({end_ms, series.points.back().count});
  for (const ExecutorPoint& point : series.points) series.max = std::max(series.max, point.count);
  return series;
}

}  // namespace sparktrace::traceview
