#include "diagnose/regression/history.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <tuple>
#include <utility>

namespace sparktrace::diagnose::regression {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return (lower + upper) / 2;
}

// The latest max_runs of runs (sorted oldest first), the current one kept in place of the oldest.
void KeepLatest(std::vector<RunSummary>& runs, std::size_t max_runs) {
  if (runs.size() <= max_runs) return;
  const auto current =
      std::find_if(runs.begin(), runs.end(), [](const RunSummary& run) { return run.current; });
  const auto first_kept = runs.end() - static_cast<std::ptrdiff_t>(max_runs);
  if (current == runs.end() || current >= first_kept) {
    runs.erase(runs.begin(), first_kept);
    return;
  }
  std::vector<RunSummary> kept;
  kept.reserve(std::max<std::size_t>(max_runs, 1));
  kept.push_back(std::move(*current));
  // One fewer of the latest, so that the current one takes the oldest place.
  const auto rest = max_runs == 0 ? runs.end() : first_kept + 1;
  std::move(rest, runs.end(), std::back_inserter(kept));
  runs = std::move(kept);
}

std::optional<Baseline> BaselineOf(const std::vector<RunSummary>& runs, const RunSummary& current) {
  std::vector<const RunSummary*> earlier;
  for (const RunSummary& run : runs) {
    if (&run != &current && run.state == "success" && run.start_ms < current.start_ms)
      earlier.push_back(&run);
  }
  if (earlier.empty()) return std::nullopt;
  Baseline baseline;
  baseline.runs = earlier.size();
  std::vector<double> values(earlier.size());
  std::transform(earlier.begin(), earlier.end(), values.begin(),
                 [](const RunSummary* run) { return run->wall_ms; });
  baseline.median_wall_ms = Median(values);
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    std::transform(earlier.begin(), earlier.end(), values.begin(),
                   [phase](const RunSummary* run) { return run->phases[phase]; });
    baseline.phases[phase] = Median(values);
  }
  return baseline;
}

}  // namespace

History ComputeHistory(std::vector<RunSummary> runs, std::size_t max_runs) {
  History history;
  std::stable_sort(runs.begin(), runs.end(), [](const RunSummary& a, const RunSummary& b) {
    return std::tie(a.start_ms, a.run_id, a.try_number) < std::tie(b.start_ms, b.run_id, b.try_number);
  });
  KeepLatest(runs, max_runs);
  history.runs = std::move(runs);
  const auto current = std::find_if(history.runs.begin(), history.runs.end(),
                                    [](const RunSummary& run) { return run.current; });
  if (current == history.runs.end()) return history;
  history.baseline = BaselineOf(history.runs, *current);
  if (!history.baseline) return history;
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    const double current_ms = current->phases[phase];
    const double median_ms = history.baseline->phases[phase];
    history.comparison.push_back(
        {static_cast<ViewPhase>(phase), current_ms, median_ms, current_ms - median_ms});
  }
  return history;
}

}  // namespace sparktrace::diagnose::regression
