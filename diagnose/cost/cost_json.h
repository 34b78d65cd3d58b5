#pragma once
// The `cost` object of an attempt (docs/trace-view-api.md, "Cost"), one shape wherever a cost is
// written: the attempt JSON and `sparktrace diagnose --json`.
//
// Pure function; thread-safe.

#include <nlohmann/json.hpp>

#include "diagnose/cost/cost_model.h"

namespace sparktrace::diagnose::cost {

// null when the cost is not known (the executors' cores are not).
nlohmann::ordered_json CostToJson(const AttemptCost& cost, const CostPrices& prices);

}  // namespace sparktrace::diagnose::cost
