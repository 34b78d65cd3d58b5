#include "diagnose/cost/cost_json.h"

#include <optional>
#include <utility>

namespace sparktrace::diagnose::cost {
namespace {

using nlohmann::ordered_json;

ordered_json OptionalNumber(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

}  // namespace

ordered_json CostToJson(const AttemptCost& cost, const CostPrices& prices) {
  if (!cost.known) return nullptr;
  ordered_json money = nullptr;
  if (cost.money) {
    money = {{"total", cost.money->total},
             {"cores", cost.money->cores},
             {"memory", cost.money->memory},
             {"core_hour", OptionalNumber(prices.core_hour)},
             {"gib_hour", OptionalNumber(prices.gib_hour)}};
  }
  return {{"core_seconds", cost.core_seconds},
          {"executor_core_seconds", cost.executor_core_seconds},
          {"driver_core_seconds", cost.driver_core_seconds},
          {"gib_seconds", OptionalNumber(cost.gib_seconds)},
          {"used_core_seconds", cost.used_core_seconds},
          {"idle_fraction", OptionalNumber(cost.idle_fraction)},
          {"shared", cost.shared},
          {"other_operations", cost.other_operations},
          {"share", cost.share},
          {"basis", CostBasis(cost)},
          {"money", std::move(money)}};
}

}  // namespace sparktrace::diagnose::cost
