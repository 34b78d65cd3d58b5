#include "cli/diagnose/cost.h"

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "diagnose/cost_of_model.h"

namespace sparktrace::cli::diagnose {
namespace {

std::string Thousands(double value) {
  const auto whole = static_cast<long long>(std::llround(value));
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return (whole < 0 ? "-" : "") + digits;
}

std::string Money(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

}  // namespace

std::optional<sparktrace::diagnose::cost::AttemptCost> ApplicationCost(
    const listener::correlate::ApplicationModel& model,
    const sparktrace::diagnose::cost::CostPrices& prices) {
  const std::optional<sparktrace::diagnose::cost::CostInputs> inputs =
      sparktrace::diagnose::ApplicationCostInputs(model);
  if (!inputs) return std::nullopt;
  return sparktrace::diagnose::cost::ComputeCost(*inputs, prices);
}

std::optional<sparktrace::diagnose::cost::AttemptCost> OperationCost(
    const listener::correlate::ApplicationModel& model, std::string_view operation_id,
    const sparktrace::diagnose::cost::CostPrices& prices) {
  const std::optional<sparktrace::diagnose::cost::CostInputs> inputs =
      sparktrace::diagnose::OperationCostInputs(model, operation_id);
  if (!inputs) return std::nullopt;
  return sparktrace::diagnose::cost::ComputeCost(*inputs, prices);
}

std::string CostLine(const sparktrace::diagnose::cost::AttemptCost& cost) {
  if (!cost.known) return "unknown (the log does not say the executors' cores)";
  std::string line = Thousands(cost.core_seconds) + " core-s allocated (" +
                     Thousands(cost.used_core_seconds) + " used by tasks";
  if (cost.idle_fraction) line += ", " + Thousands(*cost.idle_fraction * 100) + "% of the executors' idle";
  line += ")";
  line += cost.gib_seconds ? ", " + Thousands(*cost.gib_seconds) + " GiB-s" : ", memory unknown";
  if (cost.money) {
    line += "; " + Money(cost.money->total) + " in money (cores " + Money(cost.money->cores) + ", memory " +
            Money(cost.money->memory) + ")";
  }
  if (cost.shared) line += "; " + sparktrace::diagnose::cost::CostBasis(cost);
  return line;
}

}  // namespace sparktrace::cli::diagnose
