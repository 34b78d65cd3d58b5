#pragma once
// JsonWriter: appends compact JSON text to a string as it goes, for JSON we write by hand: Spark
// event-log lines in the simulator (keys in the order written, as Spark does) and the trace view's
// large answers (a 20,000-span attempt, where building a nlohmann::json tree first costs several
// times the writing). Commas are placed automatically; strings are escaped and invalid UTF-8 is
// replaced by U+FFFD (common/json_escape.h); doubles are written in the shortest form that reads back
// the same, always with a '.' or an exponent, and NaN and infinities as null.
//
// Not thread-safe; a plain value.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // The next value is this key's.
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(std::int64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // Already valid JSON text (e.g. a small nlohmann::json dumped), inserted as one value.
  JsonWriter& Raw(std::string_view json);

  // The text written so far (complete once every container is ended).
  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  std::string out_;
  // Per open container: whether it already holds an element (the next one needs a comma). Bytes,
  // not vector<bool>: every value asks, and a bit reference costs more than the memory saved.
  std::vector<char> has_element_;
  bool after_key_ = false;
};

}  // namespace sparktrace
