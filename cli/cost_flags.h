#pragma once
// The price flags of the commands that show attempts' cost (`sparktrace proxy`, `ui`, `diagnose`):
// --cost-core-hour and --cost-gib-hour, a non-negative decimal each (a price in any currency per
// core-hour and per GiB-hour of what the application had allocated). Unset: the rules file's
// `cost` section (diagnose/rules_file.h) when there is one, else resource-seconds only.
//
// Pure functions; thread-safe.

#include <span>

#include "common/flags.h"
#include "common/result.h"
#include "diagnose/rules_file.h"
#include "diagnose/cost/cost_model.h"

namespace sparktrace::cli {

std::span<const FlagSpec> CostFlagSpecs();

// The prices, or an error naming the flag whose value is not a finite non-negative number.
Result<sparktrace::diagnose::cost::CostPrices> CostPricesFromFlags(const ParsedFlags& flags);

// Each price the flags leave unset, from the rules file.
sparktrace::diagnose::cost::CostPrices WithRulesFilePrices(
    sparktrace::diagnose::cost::CostPrices from_flags, const sparktrace::diagnose::RulesPrices& from_file);

}  // namespace sparktrace::cli
