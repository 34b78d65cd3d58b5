#pragma once
// Internal to sparktrace_diagnose: a rules file read into its entries, before they are checked
// against RuleThresholds (rule_thresholds.cc) and Suppression (suppression.cc). The file's shape
// is a mapping of sections to mappings of scalars, or to lists of such mappings (`suppressions`);
// each reader checks that shape and reports where it is broken.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/suppression.h"

namespace sparktrace::diagnose {

struct RulesValue {
  enum class Kind { kNumber, kBool, kString };
  Kind kind = Kind::kString;
  double number = 0;
  bool boolean = false;
  std::string text;  // the scalar as written, without quotes (for strings and messages)
};

struct RulesEntry {
  std::string section;
  std::string key;
  RulesValue value;
};

// One mapping of a list section ("suppressions: [{id: ..., reason: ...}, ...]").
struct RulesListItem {
  std::string section;
  std::size_t number = 0;          // 1-based position in its list (for messages: "suppression #2")
  std::vector<RulesEntry> fields;  // section = the list's section
};

struct RulesDocument {
  std::vector<RulesEntry> entries;         // section.key: scalar
  std::vector<RulesListItem> items;        // the items of list sections, in file order
  std::vector<std::string> list_sections;  // the sections written as lists (even empty ones)
};

// rules_document_json.cc (simdjson): {"section": {"key": number|true|false|"string"} or
// [{"key": ...}, ...], ...}.
Result<RulesDocument> ReadJsonRulesDocument(std::string_view text);
// rules_document_yaml.cc (libyaml): the same as block or flow YAML. Plain scalars that are
// numbers are numbers, true/false are booleans; quoted scalars are strings.
Result<RulesDocument> ReadYamlRulesDocument(std::string_view text);

// rule_thresholds.cc: the thresholds the entries set, over the defaults.
Result<RuleThresholds> ThresholdsFromEntries(const std::vector<RulesEntry>& entries);
// suppression.cc: the `suppressions` list's items, checked (errors name the item and the field).
Result<std::vector<Suppression>> SuppressionsFromItems(const std::vector<RulesListItem>& items);

}  // namespace sparktrace::diagnose
