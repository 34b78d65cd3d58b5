// A JSON rules file, read with simdjson's DOM API (small files; errors carry the section.key).
#include <simdjson.h>

#include <string>

#include "diagnose/rules_document.h"

namespace sparktrace::diagnose {

Result<std::vector<RulesEntry>> ReadJsonRulesDocument(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(text.data(), text.size()).get(root)) {
    return InvalidArgument(std::string("malformed JSON: ") + simdjson::error_message(error));
  }
  simdjson::dom::object sections;
  if (root.get_object().get(sections))
    return InvalidArgument("the document is not an object of rule sections");
  std::vector<RulesEntry> entries;
  for (auto [section_key, section_value] : sections) {
    const std::string section(section_key);
    simdjson::dom::object keys;
    if (section_value.get_object().get(keys)) {
      return InvalidArgument("\"" + section + "\": expected an object of thresholds");
    }
    for (auto [key, value] : keys) {
      RulesEntry entry{section, std::string(key), {}};
      switch (value.type()) {
        case simdjson::dom::element_type::INT64:
        case simdjson::dom::element_type::UINT64:
        case simdjson::dom::element_type::DOUBLE:
          entry.value.kind = RulesValue::Kind::kNumber;
          entry.value.number = value.get_double().value_unsafe();
          entry.value.text = simdjson::minify(value);
          break;
        case simdjson::dom::element_type::BOOL:
          entry.value.kind = RulesValue::Kind::kBool;
          entry.value.boolean = value.get_bool().value_unsafe();
          entry.value.text = entry.value.boolean ? "true" : "false";
          break;
        default:
          entry.value.kind = RulesValue::Kind::kString;
          entry.value.text = simdjson::minify(value);
          break;
      }
      entries.push_back(std::move(entry));
    }
  }
  return entries;
}

}  // namespace sparktrace::diagnose
