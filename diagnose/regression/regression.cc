#include "diagnose/regression/regression.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>

namespace sparktrace::diagnose::regression {
namespace {

// "45.2s", "7m 40s", "2h 05m 09s": to the second, as the page's side-by-side figures.
std::string Duration(double ms) {
  const double seconds = std::abs(ms) / 1000;
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 3600) return fmt::format("{}m {:02}s", total / 60, total % 60);
  return fmt::format("{}h {:02}m {:02}s", total / 3600, total / 60 % 60, total % 60);
}

}  // namespace

std::optional<Regression> DetectRegression(const History& history, bool finished,
                                           const RegressionThresholds& thresholds) {
  if (!finished || !history.baseline || history.baseline->median_wall_ms <= 0) return std::nullopt;
  const auto current = std::find_if(history.runs.begin(), history.runs.end(),
                                    [](const RunSummary& run) { return run.current; });
  if (current == history.runs.end()) return std::nullopt;
  Regression regression;
  regression.baseline_runs = history.baseline->runs;
  regression.current_ms = current->wall_ms;
  regression.median_ms = history.baseline->median_wall_ms;
  regression.delta_ms = regression.current_ms - regression.median_ms;
  if (regression.delta_ms < thresholds.min_seconds * 1000 ||
      regression.delta_ms < thresholds.min_ratio * regression.median_ms) {
    return std::nullopt;
  }
  regression.critical = regression.current_ms >= 2 * regression.median_ms;
  for (const PhaseDelta& delta : history.comparison) {
    if (delta.delta_ms > 0) regression.grown.push_back(delta);
  }
  std::stable_sort(regression.grown.begin(), regression.grown.end(),
                   [](const PhaseDelta& a, const PhaseDelta& b) { return a.delta_ms > b.delta_ms; });
  return regression;
}

std::string RegressionTitle(const Regression& regression) {
  std::string title = fmt::format(
      "took {}, {:.0f} % longer than its median of {} over {} successful run{}",
      Duration(regression.current_ms), 100 * regression.delta_ms / regression.median_ms,
      Duration(regression.median_ms), regression.baseline_runs, regression.baseline_runs == 1 ? "" : "s");
  if (!regression.grown.empty()) {
    const PhaseDelta& most = regression.grown.front();
    title +=
        fmt::format("; {} grew most (+{})", tracing::ViewPhaseLabel(most.phase), Duration(most.delta_ms));
  }
  return title;
}

std::vector<std::string> RegressionEvidence(const Regression& regression) {
  std::vector<std::string> lines;
  lines.reserve(regression.grown.size());
  for (const PhaseDelta& delta : regression.grown) {
    lines.push_back(fmt::format("{}: {} against a median of {} (+{})", tracing::ViewPhaseLabel(delta.phase),
                                Duration(delta.current_ms), Duration(delta.median_ms),
                                Duration(delta.delta_ms)));
  }
  return lines;
}

}  // namespace sparktrace::diagnose::regression
