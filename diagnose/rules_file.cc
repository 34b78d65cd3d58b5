#include "diagnose/rules_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "diagnose/rules_document.h"

namespace sparktrace::diagnose {
namespace {

constexpr std::string_view kSuppressionsSection = "suppressions";
constexpr std::string_view kCostSection = "cost";

// The `cost` section's entries, taken out of `entries` (the thresholds know no such section).
Result<RulesPrices> TakePrices(std::vector<RulesEntry>& entries) {
  RulesPrices prices;
  for (const RulesEntry& entry : entries) {
    if (entry.section != kCostSection) continue;
    const std::string where = "\"cost." + entry.key + "\"";
    std::optional<double>* price = entry.key == "core_hour"  ? &prices.core_hour
                                   : entry.key == "gib_hour" ? &prices.gib_hour
                                                             : nullptr;
    if (price == nullptr) return InvalidArgument("unknown key " + where + " (core_hour, gib_hour)");
    if (entry.value.kind != RulesValue::Kind::kNumber || !std::isfinite(entry.value.number) ||
        entry.value.number < 0) {
      return InvalidArgument(where + ": '" + entry.value.text + "' is not a price (a non-negative number)");
    }
    *price = entry.value.number;
  }
  std::erase_if(entries, [](const RulesEntry& entry) { return entry.section == kCostSection; });
  return prices;
}

}  // namespace

Result<RulesFile> ParseRulesFile(std::string_view text, RulesFormat format) {
  Result<RulesDocument> document =
      format == RulesFormat::kJson ? ReadJsonRulesDocument(text) : ReadYamlRulesDocument(text);
  if (!document.ok()) return document.error();
  for (const std::string& section : document->list_sections) {
    if (section != kSuppressionsSection)
      return InvalidArgument("\"" + section + "\": lists are not allowed here");
  }
  // `suppressions:` written as a mapping (or a scalar) instead of a list.
  const auto misplaced =
      std::find_if(document->entries.begin(), document->entries.end(),
                   [](const RulesEntry& entry) { return entry.section == kSuppressionsSection; });
  if (misplaced != document->entries.end()) {
    return InvalidArgument("\"suppressions\": expected a list of {id, dag, task, reason, until}");
  }
  RulesFile rules;
  Result<RulesPrices> prices = TakePrices(document->entries);
  if (!prices.ok()) return prices.error();
  rules.prices = *prices;
  Result<RuleThresholds> thresholds = ThresholdsFromEntries(document->entries);
  if (!thresholds.ok()) return thresholds.error();
  rules.thresholds = *thresholds;
  Result<std::vector<Suppression>> suppressions = SuppressionsFromItems(document->items);
  if (!suppressions.ok()) return suppressions.error();
  rules.suppressions = std::move(*suppressions);
  return rules;
}

Result<RulesFile> LoadRulesFile(const std::string& path) {
  std::error_code status_error;
  if (!std::filesystem::is_regular_file(path, status_error)) {
    return Error{
        ErrorCode::kIo,
        path + ": " + (std::filesystem::exists(path, status_error) ? "not a regular file" : "no such file")};
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{ErrorCode::kIo, path + ": cannot open the rules file"};
  std::ostringstream content;
  content << file.rdbuf();
  if (file.bad()) return Error{ErrorCode::kIo, path + ": cannot read the rules file"};
  const std::string text = content.str();
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const RulesFormat format =
      first != std::string::npos && text[first] == '{' ? RulesFormat::kJson : RulesFormat::kYaml;
  Result<RulesFile> rules = ParseRulesFile(text, format);
  if (!rules.ok()) return InvalidArgument(path + ": " + rules.error().message);
  return rules;
}

Result<RuleThresholds> ParseRuleThresholds(std::string_view text, RulesFormat format) {
  Result<RulesFile> rules = ParseRulesFile(text, format);
  if (!rules.ok()) return rules.error();
  return rules->thresholds;
}

Result<RuleThresholds> LoadRuleThresholds(const std::string& path) {
  Result<RulesFile> rules = LoadRulesFile(path);
  if (!rules.ok()) return rules.error();
  return rules->thresholds;
}

}  // namespace sparktrace::diagnose
