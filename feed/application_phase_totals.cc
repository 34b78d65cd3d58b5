#include "feed/application_phase_totals.h"

#include <algorithm>
#include <vector>

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::ApplicationWindow;
using listener::correlate::ComputePhases;
using listener::correlate::kPhaseCount;
using listener::correlate::PhaseBreakdown;
using listener::correlate::StageAttemptRecord;
using listener::correlate::TimeWindow;
using listener::events::EpochMillis;

namespace {

std::vector<const StageAttemptRecord*> AllStages(const ApplicationModel& model) {
  std::vector<const StageAttemptRecord*> stages;
  stages.reserve(model.stages().size());
  for (const auto& [key, stage] : model.stages()) stages.push_back(&stage);
  return stages;
}

}  // namespace

void ApplicationPhaseTotals::FoldUntil(const ApplicationModel& model, EpochMillis cutoff_ms) {
  const std::optional<TimeWindow> window = ApplicationWindow(model);
  if (!window) return;
  const EpochMillis start = folded_until_ms_.value_or(window->start_ms);
  const EpochMillis end = std::min(cutoff_ms, window->end_ms);
  if (end <= start) return;
  const PhaseBreakdown part = ComputePhases(model, TimeWindow{start, end}, AllStages(model));
  for (std::size_t phase = 0; phase < kPhaseCount; ++phase) folded_ms_[phase] += part.total_ms[phase];
  folded_until_ms_ = end;
}

std::optional<PhaseTotals> ApplicationPhaseTotals::Totals(const ApplicationModel& model) const {
  const std::optional<TimeWindow> window = ApplicationWindow(model);
  if (!window) return std::nullopt;
  PhaseTotals totals;
  totals.window_ms = window->end_ms - window->start_ms;
  totals.total_ms = folded_ms_;
  const EpochMillis start = std::max(folded_until_ms_.value_or(window->start_ms), window->start_ms);
  if (window->end_ms > start) {
    const PhaseBreakdown rest = ComputePhases(model, TimeWindow{start, window->end_ms}, AllStages(model));
    for (std::size_t phase = 0; phase < kPhaseCount; ++phase) totals.total_ms[phase] += rest.total_ms[phase];
    if (!rest.intervals.empty()) totals.latest = rest.intervals.back().phase;
  }
  return totals;
}

}  // namespace sparktrace::feed
