#pragma once
// Span attributes written with a JsonWriter, in tracing/attribute_json.h's form (string, integer,
// number with a fraction or exponent, boolean, array of strings), for the trace view's answers.
// Pure functions; thread-safe for distinct writers.

#include <string_view>
#include <vector>

#include "common/json_writer.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

void WriteAttributeValue(JsonWriter& out, const tracing::AttributeValue& value);
// The attributes as one JSON object, keys in the span's order.
// `omitted_key` (when not empty) is left out: a value too large for the answer, served apart.
void WriteAttributes(JsonWriter& out, const std::vector<tracing::Attribute>& attributes,
                     std::string_view omitted_key = {});

}  // namespace sparktrace::traceview
