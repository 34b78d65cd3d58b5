// A JSON rules file, read with simdjson's DOM API (small files; errors carry the section.key).
#include <simdjson.h>

#include <string>

#include "diagnose/rules_document.h"

namespace sparktrace::diagnose {
namespace {

RulesValue ScalarOf(simdjson::dom::element value) {
  RulesValue scalar;
  switch (value.type()) {
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE:
      scalar.kind = RulesValue::Kind::kNumber;
      scalar.number = value.get_double().value_unsafe();
      scalar.text = simdjson::minify(value);
      break;
    case simdjson::dom::element_type::BOOL:
      scalar.kind = RulesValue::Kind::kBool;
      scalar.boolean = value.get_bool().value_unsafe();
      scalar.text = scalar.boolean ? "true" : "false";
      break;
    case simdjson::dom::element_type::STRING:
      scalar.text = std::string(value.get_string().value_unsafe());
      break;
    default:  // arrays, objects, null: a string no field accepts, shown as written
      scalar.text = simdjson::minify(value);
      break;
  }
  return scalar;
}

std::vector<RulesEntry> EntriesOf(const std::string& section, simdjson::dom::object keys) {
  std::vector<RulesEntry> entries;
  for (auto [key, value] : keys) entries.push_back(RulesEntry{section, std::string(key), ScalarOf(value)});
  return entries;
}

}  // namespace

Result<RulesDocument> ReadJsonRulesDocument(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto error = parser.parse(text.data(), text.size()).get(root)) {
    return InvalidArgument(std::string("malformed JSON: ") + simdjson::error_message(error));
  }
  simdjson::dom::object sections;
  if (root.get_object().get(sections))
    return InvalidArgument("the document is not an object of rule sections");
  RulesDocument document;
  for (auto [section_key, section_value] : sections) {
    const std::string section(section_key);
    simdjson::dom::array list;
    if (!section_value.get_array().get(list)) {
      document.list_sections.push_back(section);
      std::size_t number = 0;
      for (simdjson::dom::element item : list) {
        ++number;
        simdjson::dom::object fields;
        if (item.get_object().get(fields)) {
          return InvalidArgument("\"" + section + "\" #" + std::to_string(number) + ": expected an object");
        }
        document.items.push_back(RulesListItem{section, number, EntriesOf(section, fields)});
      }
      continue;
    }
    simdjson::dom::object keys;
    if (section_value.get_object().get(keys)) {
      return InvalidArgument("\"" + section + "\": expected an object of thresholds");
    }
    for (RulesEntry& entry : EntriesOf(section, keys)) document.entries.push_back(std::move(entry));
  }
  return document;
}

}  // namespace sparktrace::diagnose
