#pragma once
// Internal to sparktrace_diagnose: a rules file read into its entries, before they are checked
// against RuleThresholds (rule_thresholds.cc). The file's shape is a mapping of sections to
// mappings of scalars; each reader checks that shape and reports where it is broken.
//
// Pure functions; thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sparktrace::diagnose {

struct RulesValue {
  enum class Kind { kNumber, kBool, kString };
  Kind kind = Kind::kString;
  double number = 0;
  bool boolean = false;
  std::string text;  // the scalar as written (for messages)
};

struct RulesEntry {
  std::string section;
  std::string key;
  RulesValue value;
};

// rules_document_json.cc (simdjson): {"section": {"key": number|true|false|"string"}, ...}.
Result<std::vector<RulesEntry>> ReadJsonRulesDocument(std::string_view text);
// rules_document_yaml.cc (libyaml): the same as block or flow YAML. Plain scalars that are
// numbers are numbers, true/false are booleans; quoted scalars are strings.
Result<std::vector<RulesEntry>> ReadYamlRulesDocument(std::string_view text);

}  // namespace sparktrace::diagnose
