#pragma once
// JsonWriter: appends compact JSON text to a string as it goes, for the trace view's large answers
// (a 20,000-span attempt), where building a nlohmann::json tree first costs several times the
// writing. Commas are placed automatically; strings are escaped and invalid UTF-8 is replaced by
// U+FFFD (as tracing::DumpJson does); NaN and infinities are written as null.
//
// Not thread-safe; one writer per answer.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::traceview {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(std::int64_t value);
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // Already valid JSON text (e.g. a small nlohmann::json dumped), inserted as one value.
  JsonWriter& Raw(std::string_view json);
  // A span attribute value in tracing/attribute_json.h's form; and a whole attribute list as an object.
  JsonWriter& Value(const tracing::AttributeValue& value);
  JsonWriter& Attributes(const std::vector<tracing::Attribute>& attributes);

  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  std::string out_;
  // Per open container: whether it already holds an element (the next one needs a comma).
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

}  // namespace sparktrace::traceview
