#include "traceview/executor_series.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "traceview/view_time.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

// One known count. At one instant a span's start count comes before the changes made then.
struct Fact {
  double t_ms = 0;
  int order = 0;  // 0: a span's start count, 1: after a change
  int count = 0;
  int count_before = 0;               // just before t_ms, as far as this fact tells
  std::optional<std::int64_t> cores;  // likewise for the cores, when the fact carries them
  std::optional<std::int64_t> cores_before;
};

std::optional<std::int64_t> NonNegative(const std::int64_t* value) {
  if (value == nullptr) return std::nullopt;
  return std::max<std::int64_t>(*value, 0);
}

int ClampedCount(std::int64_t count) {
  return static_cast<int>(std::clamp<std::int64_t>(count, 0, std::numeric_limits<int>::max()));
}

std::vector<Fact> FactsOf(std::span<const tracing::Span> spans) {
  std::vector<Fact> facts;
  for (const tracing::Span& span : spans) {
    if (const auto* at_start =
            tracing::AttributeValueOf<std::int64_t>(span.attributes, tracing::kExecutorsActiveAtStart)) {
      const std::optional<std::int64_t> cores = NonNegative(
          tracing::AttributeValueOf<std::int64_t>(span.attributes, tracing::kExecutorCoresAtStart));
      facts.push_back({SpanStartMs(span), 0, ClampedCount(*at_start), ClampedCount(*at_start), cores, cores});
    }
    for (const tracing::SpanEvent& event : span.events) {
      const bool added = event.name == tracing::kExecutorAddedEvent;
      if (!added && event.name != tracing::kExecutorRemovedEvent) continue;
      const auto* active =
          tracing::AttributeValueOf<std::int64_t>(event.attributes, tracing::kExecutorsActive);
      if (active == nullptr) continue;
      const std::int64_t before = added ? *active - 1 : *active + 1;
      Fact fact{NanosToMs(event.time_unix_nano), 1, ClampedCount(*active), ClampedCount(before), {}, {}};
      const auto* cores =
          tracing::AttributeValueOf<std::int64_t>(event.attributes, tracing::kExecutorCoresActive);
      const auto* changed =
          tracing::AttributeValueOf<std::int64_t>(event.attributes, tracing::kExecutorCores);
      if (cores != nullptr && changed != nullptr) {
        fact.cores = std::max<std::int64_t>(*cores, 0);
        fact.cores_before = std::max<std::int64_t>(added ? *cores - *changed : *cores + *changed, 0);
      }
      facts.push_back(fact);
    }
  }
  // Stable: changes at one instant keep the order their span listed them in.
  std::stable_sort(facts.begin(), facts.end(), [](const Fact& a, const Fact& b) {
    return a.t_ms < b.t_ms || (a.t_ms == b.t_ms && a.order < b.order);
  });
  return facts;
}

// Appends a step; a later fact at the same time replaces it, an unchanged count adds nothing.
void Step(std::vector<ExecutorPoint>& points, double t_ms, int count, std::int64_t cores) {
  const auto same = [count, cores](const ExecutorPoint& point) {
    return point.count == count && point.cores == cores;
  };
  if (!points.empty() && points.back().t_ms == t_ms) {
    points.back().count = count;
    points.back().cores = cores;
    if (points.size() > 1 && same(points[points.size() - 2])) points.pop_back();
    return;
  }
  if (!points.empty() && same(points.back())) return;
  points.push_back({t_ms, count, cores});
}

}  // namespace

ExecutorSeries ComputeExecutorSeries(std::span<const tracing::Span> spans, double start_ms, double end_ms) {
  ExecutorSeries series;
  const std::vector<Fact> facts = FactsOf(spans);
  if (facts.empty()) return series;
  series.known = true;
  series.cores_known = std::all_of(facts.begin(), facts.end(), [](const Fact& fact) { return fact.cores; });
  const auto cores = [&series](const std::optional<std::int64_t>& value) {
    return series.cores_known ? value.value_or(0) : 0;
  };
  end_ms = std::max(start_ms, end_ms);

  // The count at start_ms: the latest fact at or before it, else what the first fact says held
  // before it (one fewer before an add, one more before a removal).
  auto next = std::upper_bound(facts.begin(), facts.end(), start_ms,
                               [](double t_ms, const Fact& fact) { return t_ms < fact.t_ms; });
  const Fact& known_at_start = next == facts.begin() ? facts.front() : *std::prev(next);
  series.points.push_back(
      next == facts.begin()
          ? ExecutorPoint{start_ms, known_at_start.count_before, cores(known_at_start.cores_before)}
          : ExecutorPoint{start_ms, known_at_start.count, cores(known_at_start.cores)});
  for (; next != facts.end() && next->t_ms <= end_ms; ++next)
    Step(series.points, next->t_ms, next->count, cores(next->cores));
  if (series.points.back().t_ms < end_ms)
    series.points.push_back({end_ms, series.points.back().count, series.points.back().cores});
  for (const ExecutorPoint& point : series.points) series.max = std::max(series.max, point.count);
  return series;
}

}  // namespace sparktrace::traceview
