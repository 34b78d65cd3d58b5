#pragma once
// RulesFile: what a rules file (`--rules FILE`) says: the rules' thresholds (rule_thresholds.h)
// and the suppressions of findings (suppression.h). YAML or JSON (JSON when the file's first
// non-blank character is '{'); errors name the file and the section.key, or the suppression and
// its field, at fault.
//
// Plain values; the functions are thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/suppression.h"

namespace sparktrace::diagnose {

struct RulesFile {
  RuleThresholds thresholds;
  std::vector<Suppression> suppressions;  // in file order, expired ones included (the caller says so)
};

Result<RulesFile> LoadRulesFile(const std::string& path);
Result<RulesFile> ParseRulesFile(std::string_view text, RulesFormat format);

}  // namespace sparktrace::diagnose
