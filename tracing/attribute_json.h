#pragma once
// The JSON form of span attributes, shared by the SQLite store (its attributes/events columns) and the
// JSON renderers: one object, keys in the span's order, values as JSON's own kinds, so that SQLite's
// json_extract / ->> works on stored rows and the kinds survive a round trip:
//   string -> string, int64 -> integer, double -> number with a fraction or exponent ("3.0"),
//   bool -> true/false, string list -> array of strings.
// Lossy corners, documented rather than hidden: a repeated key keeps its last value (OTLP requires
// unique keys anyway); NaN and infinities become null and read back as NaN; bytes that are not UTF-8
// become U+FFFD.
//
// Pure functions; no exceptions escape them.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_writer.h"
#include "tracing/span.h"

namespace sparktrace::tracing {

// The same JSON written straight to text, without building a tree: the store's write path, which
// encodes every span (AttributesToJson + DumpJson cost several times as much).
void WriteAttributesJson(JsonWriter& out, const std::vector<Attribute>& attributes);

// Which attributes an encoding writes, in order: each key once, where it first appears, with the
// index of its last value (the rule above). O(n log n): a span may carry thousands of attributes.
std::vector<std::size_t> AttributesToWrite(const std::vector<Attribute>& attributes);
// Whether no key repeats, when every attribute is written as it is (OTLP requires unique keys, so
// nearly always): without allocating for up to 32 attributes, the store's hot path.
bool KeysAreUnique(const std::vector<Attribute>& attributes);

nlohmann::ordered_json AttributeValueToJson(const AttributeValue& value);
nlohmann::ordered_json AttributesToJson(const std::vector<Attribute>& attributes);

// Tolerant: members of kinds we never write (objects, mixed arrays) come back as their JSON text.
// A non-object yields no attributes.
std::vector<Attribute> AttributesFromJson(const nlohmann::ordered_json& object);

// Compact text, invalid UTF-8 replaced rather than thrown on.
std::string DumpJson(const nlohmann::ordered_json& json);
// Two-space indented text with a final newline, for people and for exact-output tests.
std::string DumpJsonPretty(const nlohmann::ordered_json& json);

}  // namespace sparktrace::tracing
