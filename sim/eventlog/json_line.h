#pragma once
// JsonLine: writes one compact JSON object the way Spark's event logger does (no spaces, keys in
// the order written), for the event-log simulator: common/json_writer.h with the shorthands the
// event writers use.
//
// Threads: a plain value; not synchronised.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json_writer.h"

namespace sparktrace::sim::eventlog {

class JsonLine {
 public:
  JsonLine& BeginObject() { return Do(&JsonWriter::BeginObject); }
  JsonLine& EndObject() { return Do(&JsonWriter::EndObject); }
  JsonLine& BeginArray() { return Do(&JsonWriter::BeginArray); }
  JsonLine& EndArray() { return Do(&JsonWriter::EndArray); }
  // The next value is this key's.
  JsonLine& Key(std::string_view key) { return Do(&JsonWriter::Key, key); }
  JsonLine& String(std::string_view value) { return Do(&JsonWriter::String, value); }
  JsonLine& Int(std::int64_t value) { return Do(&JsonWriter::Int, value); }
  JsonLine& Double(double value) { return Do(&JsonWriter::Double, value); }  // shortest, with a '.'
  JsonLine& Bool(bool value) { return Do(&JsonWriter::Bool, value); }
  JsonLine& Null() { return Do(&JsonWriter::Null); }

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
  const std::string& text() const { return writer_.text(); }
  std::string Take() { return writer_.Take(); }

 private:
  template <typename Method, typename... Args>
  JsonLine& Do(Method method, Args&&... args) {
    (writer_.*method)(std::forward<Args>(args)...);
    return *this;
  }

  JsonWriter writer_;
};

}  // namespace sparktrace::sim::eventlog
