#include "diagnose/cost/cost_model.h"

#include <algorithm>
#include <cstdio>

namespace sparktrace::diagnose::cost {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMsPerHour = 3'600'000.0;

double Overlap(double start_a, double end_a, double start_b, double end_b) {
  return std::max(0.0, std::min(end_a, end_b) - std::max(start_a, start_b));
}

}  // namespace

AttemptCost ComputeCost(const CostInputs& inputs, const CostPrices& prices) {
  AttemptCost cost;
  const std::vector<ExecutorPoint>& points = inputs.executors.points;
  if (!inputs.executors.known || !inputs.executors.cores_known || points.empty()) return cost;
  cost.known = true;
  cost.shared = inputs.shared;
  cost.other_operations = inputs.other_operations;
  double core_ms = 0;      // executors' cores × time × share
  double executor_ms = 0;  // executors × time × share
  double charged_ms = 0;   // time × share (the driver's)
  double window_ms = 0;
  for (const CostWindow& window : inputs.windows) {
    const double length = std::max(0.0, window.end_ms - window.start_ms);
    window_ms += length;
    charged_ms += length * window.share;
    // The count at points[i] holds until points[i + 1]; the last point closes the series.
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
      const double overlap = Overlap(points[i].t_ms, points[i + 1].t_ms, window.start_ms, window.end_ms);
      core_ms += overlap * static_cast<double>(points[i].cores) * window.share;
      executor_ms += overlap * points[i].count * window.share;
    }
  }
  cost.share = window_ms > 0 ? charged_ms / window_ms : 1.0;
  cost.executor_core_seconds = core_ms / 1000;
  cost.driver_core_seconds = static_cast<double>(inputs.driver_cores) * charged_ms / 1000;
  cost.core_seconds = cost.executor_core_seconds + cost.driver_core_seconds;
  if (inputs.executor_memory_bytes) {
    cost.gib_seconds = (executor_ms * static_cast<double>(*inputs.executor_memory_bytes) +
                        charged_ms * static_cast<double>(inputs.driver_memory_bytes)) /
                       1000 / kBytesPerGiB;
  }
  cost.used_core_seconds = inputs.used_core_ms / 1000;
  if (cost.executor_core_seconds > 0) {
    cost.idle_fraction = std::clamp(1 - cost.used_core_seconds / cost.executor_core_seconds, 0.0, 1.0);
  }
  if (prices.any() && (!prices.gib_hour || cost.gib_seconds)) {
    Money money;
    money.cores = cost.core_seconds * 1000 / kMsPerHour * prices.core_hour.value_or(0);
    money.memory = cost.gib_seconds.value_or(0) * 1000 / kMsPerHour * prices.gib_hour.value_or(0);
    money.total = money.cores + money.memory;
    cost.money = money;
  }
  return cost;
}

double RunTimeWithin(double run_ms, double stage_start_ms, double stage_end_ms, double start_ms,
                     double end_ms) {
  stage_end_ms = std::max(stage_start_ms, stage_end_ms);
  if (stage_end_ms == stage_start_ms)
    return stage_start_ms >= start_ms && stage_start_ms <= end_ms ? run_ms : 0;
  return run_ms * Overlap(stage_start_ms, stage_end_ms, start_ms, end_ms) / (stage_end_ms - stage_start_ms);
}

double SharedWindowShare(double own_run_ms, double others_run_ms, std::int64_t other_operations) {
  const double all_ms = own_run_ms + others_run_ms;
  return all_ms > 0 ? own_run_ms / all_ms : 1.0 / static_cast<double>(1 + other_operations);
}

std::string CostBasis(const AttemptCost& cost) {
  if (!cost.shared) return "the application's executors over the attempt's window";
  char share[32];
  std::snprintf(share, sizeof share, "%.0f%%", cost.share * 100);
  const std::int64_t others = cost.other_operations;
  const std::string with = others == 0   ? "jobs of no operation"
                           : others == 1 ? "1 other operation"
                                         : std::to_string(others) + " other operations";
  return "shared with " + with + ": split by task time (" + share +
         " of the executors' time while its operations ran)";
}

}  // namespace sparktrace::diagnose::cost
