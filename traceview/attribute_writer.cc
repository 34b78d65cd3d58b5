#include "traceview/attribute_writer.h"

#include <variant>

namespace sparktrace::traceview {

void WriteAttributeValue(JsonWriter& out, const tracing::AttributeValue& value) {
  struct Visitor {
    JsonWriter& writer;
    void operator()(const std::string& text) const { writer.String(text); }
    void operator()(std::int64_t number) const { writer.Int(number); }
    void operator()(double number) const { writer.Double(number); }
    void operator()(bool flag) const { writer.Bool(flag); }
    void operator()(const std::vector<std::string>& list) const {
      writer.BeginArray();
      for (const std::string& item : list) writer.String(item);
      writer.EndArray();
    }
  };
  std::visit(Visitor{out}, value);
}

void WriteAttributes(JsonWriter& out, const std::vector<tracing::Attribute>& attributes,
                     std::string_view omitted_key) {
  out.BeginObject();
  for (const tracing::Attribute& attribute : attributes) {
    if (!omitted_key.empty() && attribute.key == omitted_key) continue;
    out.Key(attribute.key);
    WriteAttributeValue(out, attribute.value);
  }
  out.EndObject();
}

}  // namespace sparktrace::traceview
