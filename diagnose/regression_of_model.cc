#include "diagnose/regression_of_model.h"

#include <algorithm>
#include <cstddef>

#include "listener/correlate/phases.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::diagnose {

std::optional<regression::RunSummary> RunOfApplication(const listener::correlate::ApplicationModel& model,
                                                       bool in_progress) {
  const std::optional<listener::correlate::PhaseBreakdown> phases =
      listener::correlate::ApplicationPhases(model);
  if (!phases) return std::nullopt;
  regression::RunSummary run;
  const bool failed = std::any_of(model.jobs().begin(), model.jobs().end(), [](const auto& entry) {
    return entry.second.status == listener::correlate::JobStatus::kFailed;
  });
  run.state = in_progress ? "running" : failed ? "failed" : "success";
  run.start_ms = static_cast<double>(phases->window.start_ms);
  run.wall_ms = static_cast<double>(phases->window.end_ms - phases->window.start_ms);
  for (const tracing::SparkPhase phase : tracing::kSparkPhases) {
    run.phases[static_cast<std::size_t>(tracing::ViewPhaseOf(phase))] =
        static_cast<double>(phases->TotalMs(phase));
  }
  return run;
}

}  // namespace sparktrace::diagnose
