#include "traceview/attempt_sections_json.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "diagnose/cost/cost_json.h"
#include "traceview/view_time.h"

namespace sparktrace::traceview {
namespace {

using nlohmann::ordered_json;
using tracing::Span;

ordered_json PhaseObject(const std::array<double, kViewPhaseCount>& phases) {
  ordered_json object = ordered_json::object();
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    object[std::string(ViewPhaseName(static_cast<ViewPhase>(phase)))] = phases[phase];
  }
  return object;
}

}  // namespace

ordered_json LinkJson(const AttemptLink& link) {
  return {{"run_id", link.run_id},
          {"try_number", link.try_number},
          {"state", link.state},
          {"wall_ms", link.wall_ms},
          {"href", link.href}};
}

ordered_json HistoryJson(const diagnose::regression::History& history) {
  ordered_json runs = ordered_json::array();
  for (const diagnose::regression::RunSummary& run : history.runs) {
    runs.push_back({{"run_id", run.run_id},
                    {"try_number", run.try_number},
                    {"state", run.state},
                    {"start_ms", run.start_ms},
                    {"wall_ms", run.wall_ms},
                    {"phases", PhaseObject(run.phases)},
                    {"href", run.href},
                    {"current", run.current}});
  }
  ordered_json baseline = nullptr;
  if (history.baseline) {
    const auto current =
        std::find_if(history.runs.begin(), history.runs.end(),
                     [](const diagnose::regression::RunSummary& run) { return run.current; });
    baseline = {{"runs", history.baseline->runs},
                {"median_wall_ms", history.baseline->median_wall_ms},
                {"phases", PhaseObject(history.baseline->phases)}};
    // The wall time's own comparison, next to the phases' (the page's total row and summary line).
    if (current != history.runs.end()) {
      baseline["current_wall_ms"] = current->wall_ms;
      baseline["delta_wall_ms"] = current->wall_ms - history.baseline->median_wall_ms;
    }
  }
  ordered_json comparison = ordered_json::array();
  for (const diagnose::regression::PhaseDelta& delta : history.comparison) {
    comparison.push_back({{"phase", ViewPhaseName(delta.phase)},
                          {"label", ViewPhaseLabel(delta.phase)},
                          {"current_ms", delta.current_ms},
                          {"median_ms", delta.median_ms},
                          {"delta_ms", delta.delta_ms}});
  }
  return {
      {"runs", std::move(runs)}, {"baseline", std::move(baseline)}, {"comparison", std::move(comparison)}};
}

ordered_json AirflowTaskJson(const std::optional<AirflowTaskView>& task) {
  if (!task) return nullptr;
  const OutsideSpark& outside = task->outside_spark;
  return {{"span_id", task->span_id},
          {"state", task->state},
          {"operator", task->operator_class},
          {"hostname", task->hostname},
          {"start_ms", task->start_ms},
          {"end_ms", task->end_ms},
          {"wall_ms", task->wall_ms()},
          {"running", task->running},
          {"outside_spark",
           {{"before_first_call_ms", outside.before_first_call_ms},
            {"between_calls_ms", outside.between_calls_ms},
            {"after_last_call_ms", outside.after_last_call_ms},
            {"ms", outside.ms()}}},
          {"spark_ms", task->spark_ms}};
}

ordered_json BreakdownJson(const Breakdown& breakdown) {
  ordered_json phases = ordered_json::array();
  const double wall = breakdown.wall_ms();
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    const auto view_phase = static_cast<ViewPhase>(phase);
    phases.push_back({{"phase", ViewPhaseName(view_phase)},
                      {"label", ViewPhaseLabel(view_phase)},
                      {"ms", breakdown.ms[phase]},
                      {"fraction", wall > 0 ? breakdown.ms[phase] / wall : 0.0}});
  }
  ordered_json intervals = ordered_json::array();
  for (const PhaseInterval& interval : breakdown.intervals) {
    intervals.push_back({{"phase", ViewPhaseName(interval.phase)},
                         {"start_ms", interval.start_ms},
                         {"end_ms", interval.end_ms}});
  }
  return {{"wall_ms", wall}, {"phases", std::move(phases)}, {"intervals", std::move(intervals)}};
}

ordered_json CostJson(std::span<const Span> spans, const Breakdown& breakdown,
                      const diagnose::cost::CostPrices& prices) {
  return diagnose::cost::CostToJson(
      diagnose::cost::ComputeCost(CostInputsOfSpans(spans, breakdown.start_ms, breakdown.end_ms), prices),
      prices);
}

}  // namespace sparktrace::traceview
