#include "sim/eventlog/json_line.h"

#include <charconv>
#include <cstdio>

namespace sparktrace::sim::eventlog {

void JsonLine::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_elements_.empty()) {
    if (has_elements_.back()) text_ += ',';
    has_elements_.back() = true;
  }
}

JsonLine& JsonLine::BeginObject() {
  BeforeValue();
  text_ += '{';
  has_elements_.push_back(false);
  return *this;
}

JsonLine& JsonLine::EndObject() {
  text_ += '}';
  has_elements_.pop_back();
  return *this;
}

JsonLine& JsonLine::BeginArray() {
  BeforeValue();
  text_ += '[';
  has_elements_.push_back(false);
  return *this;
}

JsonLine& JsonLine::EndArray() {
  text_ += ']';
  has_elements_.pop_back();
  return *this;
}

JsonLine& JsonLine::Key(std::string_view key) {
  BeforeValue();
  AppendQuoted(key);
  text_ += ':';
  after_key_ = true;
  return *this;
}

JsonLine& JsonLine::String(std::string_view value) {
  BeforeValue();
  AppendQuoted(value);
  return *this;
}

void JsonLine::AppendQuoted(std::string_view value) {
  text_ += '"';
  for (const char c : value) {
    switch (c) {
      case '"':
        text_ += "\\\"";
        break;
      case '\\':
        text_ += "\\\\";
        break;
      case '\n':
        text_ += "\\n";
        break;
      case '\r':
        text_ += "\\r";
        break;
      case '\t':
        text_ += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          text_ += escaped;
        } else {
          text_ += c;
        }
    }
  }
  text_ += '"';
}

JsonLine& JsonLine::Int(std::int64_t value) {
  BeforeValue();
  text_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Double(double value) {
  BeforeValue();
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string_view text(buffer, error == std::errc() ? static_cast<std::size_t>(end - buffer) : 0);
  text_ += text;
  if (text.find_first_of(".eE") == std::string_view::npos) text_ += ".0";
  return *this;
}

JsonLine& JsonLine::Bool(bool value) {
  BeforeValue();
  text_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::Null() {
  BeforeValue();
  text_ += "null";
  return *this;
}

JsonLine& JsonLine::StringMap(std::string_view key,
                              const std::vector<std::pair<std::string, std::string>>& entries) {
  Key(key).BeginObject();
  for (const auto& [name, value] : entries) Field(name, value);
  return EndObject();
}

}  // namespace sparktrace::sim::eventlog
