#pragma once
// The price flags of the commands that show attempts' cost (`sparktrace proxy`, `ui`, `diagnose`):
// --cost-core-hour and --cost-gib-hour, a non-negative decimal each (a price in any currency per
// core-hour and per GiB-hour of what the application had allocated). Unset: resource-seconds only.
//
// Pure functions; thread-safe.

#include <span>

#include "common/flags.h"
#include "common/result.h"
#include "traceview/attempt_cost.h"

namespace sparktrace::cli {

std::span<const FlagSpec> CostFlagSpecs();

// The prices, or an error naming the flag whose value is not a finite non-negative number.
Result<traceview::CostPrices> CostPricesFromFlags(const ParsedFlags& flags);

}  // namespace sparktrace::cli
