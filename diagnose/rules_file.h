#pragma once
// RulesFile: what a rules file (`--rules FILE`) says: the rules' thresholds (rule_thresholds.h),
// the suppressions of findings (suppression.h) and the prices that turn an attempt's allocated
// resources into money (section `cost`: core_hour, gib_hour; the --cost-* flags win over them). YAML or JSON
// (JSON when the file's first non-blank character is '{'); errors name the file and the section.key, or the
// suppression and its field, at fault.
//
// Plain values; the functions are thread-safe.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/suppression.h"

namespace sparktrace::diagnose {

// Prices per hour, in any currency (the cost model's CostPrices takes them); unset: no money.
struct RulesPrices {
  std::optional<double> core_hour;
  std::optional<double> gib_hour;
};

struct RulesFile {
  RuleThresholds thresholds;
  std::vector<Suppression> suppressions;  // in file order, expired ones included (the caller says so)
  RulesPrices prices;
};

Result<RulesFile> LoadRulesFile(const std::string& path);
Result<RulesFile> ParseRulesFile(std::string_view text, RulesFormat format);

}  // namespace sparktrace::diagnose
