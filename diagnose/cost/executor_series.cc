#include "diagnose/cost/executor_series.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace sparktrace::diagnose::cost {
namespace {

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

int ClampedExecutorCount(std::int64_t count) {
  return static_cast<int>(std::clamp<std::int64_t>(count, 0, std::numeric_limits<int>::max()));
}

ExecutorSeries ExecutorSeriesOfFacts(std::vector<ExecutorFact> facts, double start_ms, double end_ms) {
  ExecutorSeries series;
  if (facts.empty()) return series;
  std::stable_sort(facts.begin(), facts.end(), [](const ExecutorFact& a, const ExecutorFact& b) {
    return a.t_ms < b.t_ms || (a.t_ms == b.t_ms && !a.is_change && b.is_change);
  });
  series.known = true;
  series.cores_known = std::all_of(facts.begin(), facts.end(),
                                   [](const ExecutorFact& fact) { return fact.cores.has_value(); });
  const auto cores = [&series](const std::optional<std::int64_t>& value) {
    return series.cores_known ? value.value_or(0) : 0;
  };
  end_ms = std::max(start_ms, end_ms);

  // The count at start_ms: the latest fact at or before it, else what the first fact says held
  // before it (one fewer before an add, one more before a removal).
  auto next = std::upper_bound(facts.begin(), facts.end(), start_ms,
                               [](double t_ms, const ExecutorFact& fact) { return t_ms < fact.t_ms; });
  const ExecutorFact& known_at_start = next == facts.begin() ? facts.front() : *std::prev(next);
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

}  // namespace sparktrace::diagnose::cost
