// A YAML rules file, read with libyaml's event parser: a mapping of sections to mappings of
// scalars, or to lists of such mappings (`suppressions`). Anything else (aliases, deeper nesting)
// is an error saying where.
#include <yaml.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>

#include "diagnose/rules_document.h"

namespace sparktrace::diagnose {
namespace {

// Owns a yaml_parser_t and the event last read from it.
class YamlEvents {
 public:
  explicit YamlEvents(std::string_view text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
    }
  }
  ~YamlEvents() {
    if (has_event_) yaml_event_delete(&event_);
    if (ok_) yaml_parser_delete(&parser_);
  }
  YamlEvents(const YamlEvents&) = delete;
  YamlEvents& operator=(const YamlEvents&) = delete;

  // The next event, or an error with libyaml's message and position.
  Result<const yaml_event_t*> Next() {
    if (!ok_) return InvalidArgument("cannot initialise the YAML parser");
    if (has_event_) {
      yaml_event_delete(&event_);
      has_event_ = false;
    }
    if (yaml_parser_parse(&parser_, &event_) == 0) {
      std::string message = "malformed YAML";
      if (parser_.problem != nullptr) message += std::string(": ") + parser_.problem;
      message += " (line " + std::to_string(parser_.problem_mark.line + 1) + ")";
      // `dag: *` reads as an alias in YAML: the likely mistake in a suppression's glob.
      if (parser_.context != nullptr && std::string_view(parser_.context) == "while scanning an alias") {
        message += "; quote a glob that starts with *: \"*\"";
      }
      return InvalidArgument(std::move(message));
    }
    has_event_ = true;
    return &event_;
  }

 private:
  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool ok_ = false;
  bool has_event_ = false;
};

std::string ScalarText(const yaml_event_t& event) {
  return std::string(reinterpret_cast<const char*>(event.data.scalar.value), event.data.scalar.length);
}

RulesValue TypedScalar(const yaml_event_t& event) {
  RulesValue value;
  value.text = ScalarText(event);
  if (event.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return value;  // quoted: a string
  if (value.text == "true" || value.text == "false") {
    value.kind = RulesValue::Kind::kBool;
    value.boolean = value.text == "true";
    return value;
  }
  if (!value.text.empty()) {
    char* end = nullptr;
    errno = 0;
    const double number = std::strtod(value.text.c_str(), &end);
    if (errno == 0 && end == value.text.c_str() + value.text.size()) {
      value.kind = RulesValue::Kind::kNumber;
      value.number = number;
    }
  }
  return value;
}

std::string LineOf(const yaml_event_t& event) {
  return " (line " + std::to_string(event.start_mark.line + 1) + ")";
}

}  // namespace

Result<RulesDocument> ReadYamlRulesDocument(std::string_view text) {
  YamlEvents events(text);
  RulesDocument document;
  // States of the walk: stream/document framing, the top mapping, a section's mapping, a list
  // section's sequence, one of its items' mapping.
  enum class Where { kTop, kSections, kSectionKeys, kSectionList, kItemKeys };
  Where where = Where::kTop;
  std::string section;
  std::size_t item_number = 0;
  for (;;) {
    Result<const yaml_event_t*> next = events.Next();
    if (!next.ok()) return next.error();
    const yaml_event_t& event = **next;
    switch (event.type) {
      case YAML_STREAM_START_EVENT:
      case YAML_DOCUMENT_START_EVENT:
      case YAML_DOCUMENT_END_EVENT:
        break;
      case YAML_STREAM_END_EVENT:
        return document;
      case YAML_ALIAS_EVENT:
        return InvalidArgument("YAML aliases are not supported" + LineOf(event));
      case YAML_SEQUENCE_START_EVENT:
        if (where != Where::kSections || section.empty()) {
          return InvalidArgument((section.empty() ? std::string("the document") : "\"" + section + "\"") +
                                 ": lists are not allowed here" + LineOf(event));
        }
        where = Where::kSectionList;
        item_number = 0;
        document.list_sections.push_back(section);
        break;
      case YAML_SEQUENCE_END_EVENT:
        where = Where::kSections;
        section.clear();
        break;
      case YAML_MAPPING_START_EVENT:
        if (where == Where::kTop) {
          where = Where::kSections;
        } else if (where == Where::kSections && !section.empty()) {
          where = Where::kSectionKeys;
        } else if (where == Where::kSectionList) {
          where = Where::kItemKeys;
          document.items.push_back(RulesListItem{section, ++item_number, {}});
        } else {
          return InvalidArgument("\"" + section + "\": nested mappings are not allowed" + LineOf(event));
        }
        break;
      case YAML_MAPPING_END_EVENT:
        if (where == Where::kSectionKeys) {
          where = Where::kSections;
          section.clear();
        } else if (where == Where::kItemKeys) {
          where = Where::kSectionList;
        } else {
          where = Where::kTop;
        }
        break;
      case YAML_SCALAR_EVENT: {
        if (where == Where::kTop) {
          // An empty document is a null scalar: all defaults. Anything else is not a mapping.
          if (event.data.scalar.length == 0 || ScalarText(event) == "~" || ScalarText(event) == "null") break;
          return InvalidArgument("the document is not a mapping of rule sections");
        }
        if (where == Where::kSections) {
          if (section.empty()) {
            section = ScalarText(event);
          } else if (event.data.scalar.length == 0 && event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
            section.clear();  // "gc-pressure:" with nothing under it: no overrides
          } else {
            return InvalidArgument("\"" + section + "\": expected a mapping of thresholds");
          }
          break;
        }
        if (where == Where::kSectionList) {
          return InvalidArgument("\"" + section + "\" #" + std::to_string(item_number + 1) +
                                 ": expected a mapping" + LineOf(event));
        }
        // In a section or a list item: a key, then its value.
        RulesEntry entry{section, ScalarText(event), {}};
        Result<const yaml_event_t*> value_event = events.Next();
        if (!value_event.ok()) return value_event.error();
        if ((*value_event)->type != YAML_SCALAR_EVENT) {
          return InvalidArgument("\"" + section + "." + entry.key +
                                 "\": expected a number, true/false or a string");
        }
        entry.value = TypedScalar(**value_event);
        if (where == Where::kItemKeys) {
          document.items.back().fields.push_back(std::move(entry));
        } else {
          document.entries.push_back(std::move(entry));
        }
        break;
      }
      case YAML_NO_EVENT:
        return InvalidArgument("malformed YAML: unexpected end");
    }
  }
}

}  // namespace sparktrace::diagnose
