#include "cli/cost_flags.h"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

namespace sparktrace::cli {
namespace {

const std::array<FlagSpec, 2> kCostFlags = {{
    {"cost-core-hour", "PRICE", "",
     "price of one core for an hour: the attempts' cost in money (with --cost-gib-hour)"},
    {"cost-gib-hour", "PRICE", "", "price of one GiB of executor and driver memory for an hour"},
}};

Result<std::optional<double>> PriceOf(const ParsedFlags& flags, std::string_view name) {
  if (!flags.IsSet(name)) return std::optional<double>();
  const std::string& text = flags.Get(name);
  double price = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), price);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(price) ||
      price < 0) {
    return FlagError(name, Error{ErrorCode::kInvalidArgument,
                                 "'" + text + "' is not a price (a non-negative decimal, e.g. 0.05)"});
  }
  return std::optional<double>(price);
}

}  // namespace

std::span<const FlagSpec> CostFlagSpecs() { return kCostFlags; }

Result<sparktrace::diagnose::cost::CostPrices> CostPricesFromFlags(const ParsedFlags& flags) {
  sparktrace::diagnose::cost::CostPrices prices;
  auto core_hour = PriceOf(flags, "cost-core-hour");
  if (!core_hour.ok()) return core_hour.error();
  auto gib_hour = PriceOf(flags, "cost-gib-hour");
  if (!gib_hour.ok()) return gib_hour.error();
  prices.core_hour = *core_hour;
  prices.gib_hour = *gib_hour;
  return prices;
}

sparktrace::diagnose::cost::CostPrices WithRulesFilePrices(
    sparktrace::diagnose::cost::CostPrices from_flags, const sparktrace::diagnose::RulesPrices& from_file) {
  if (!from_flags.core_hour) from_flags.core_hour = from_file.core_hour;
  if (!from_flags.gib_hour) from_flags.gib_hour = from_file.gib_hour;
  return from_flags;
}

}  // namespace sparktrace::cli
