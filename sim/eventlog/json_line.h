#pragma once
// JsonLine: writes one compact JSON object the way Spark's event logger does (no spaces, keys in
// the order written), for the event-log simulator. Strings are escaped per RFC 8259.
//
// Threads: a plain value; not synchronised.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::sim::eventlog {

class JsonLine {
 public:
  JsonLine& BeginObject();
  JsonLine& EndObject();
  JsonLine& BeginArray();
  JsonLine& EndArray();
  // The next value is this key's.
  JsonLine& Key(std::string_view key);
  JsonLine& String(std::string_view value);
  JsonLine& Int(std::int64_t value);
  JsonLine& Double(double value);  // shortest form that reads back the same, with a '.'
  JsonLine& Bool(bool value);
  JsonLine& Null();

  // Key + value shorthands.
  JsonLine& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonLine& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonLine& Field(std::string_view key, const std::string& value) { return Key(key).String(value); }
  JsonLine& Field(std::string_view key, std::int64_t value) { return Key(key).Int(value); }
  JsonLine& Field(std::string_view key, int value) { return Key(key).Int(value); }
  JsonLine& Field(std::string_view key, bool value) { return Key(key).Bool(value); }
  // An object of string → string, in the given order.
  JsonLine& StringMap(std::string_view key, const std::vector<std::pair<std::string, std::string>>& entries);

  // The text written so far (complete once every object is ended).
  const std::string& text() const { return text_; }
  std::string Take() { return std::move(text_); }

 private:
  void BeforeValue();
  void AppendQuoted(std::string_view value);

  std::string text_;
  std::vector<bool> has_elements_;  // per open object/array
  bool after_key_ = false;
};

}  // namespace sparktrace::sim::eventlog
