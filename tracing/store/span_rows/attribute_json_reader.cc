#include "tracing/store/span_rows/attribute_json_reader.h"

#include <simdjson.h>

#include <limits>
#include <string>

namespace sparktrace::tracing::store {
namespace {

simdjson::dom::parser& Parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

// Parses `text` from a per-thread buffer with simdjson's padding after it: the column text SQLite
// hands out has none, and letting simdjson copy it allocates once per span.
simdjson::error_code ParsePadded(std::string_view text, simdjson::dom::element& root) {
  thread_local std::string buffer;
  buffer.assign(text);
  buffer.resize(text.size() + simdjson::SIMDJSON_PADDING, '\0');
  return Parser().parse(buffer.data(), text.size(), /*realloc_if_needed=*/false).get(root);
}

AttributeValue ValueOf(simdjson::dom::element element) {
  switch (element.type()) {
    case simdjson::dom::element_type::STRING:
      return std::string(std::string_view(element.get_string().value_unsafe()));
    case simdjson::dom::element_type::BOOL:
      return element.get_bool().value_unsafe();
    case simdjson::dom::element_type::INT64:
      return element.get_int64().value_unsafe();
    case simdjson::dom::element_type::UINT64:
      // Ours all came from int64; a larger one can only be foreign, and wraps as the old reader did.
      return static_cast<std::int64_t>(element.get_uint64().value_unsafe());
    case simdjson::dom::element_type::DOUBLE:
      return element.get_double().value_unsafe();
    case simdjson::dom::element_type::NULL_VALUE:
      return std::numeric_limits<double>::quiet_NaN();
    case simdjson::dom::element_type::ARRAY: {
      simdjson::dom::array array{};
      if (element.get_array().get(array) != simdjson::SUCCESS) break;
      std::vector<std::string> strings;
      for (simdjson::dom::element item : array) {
        if (!item.is_string()) return simdjson::minify(element);
        strings.emplace_back(std::string_view(item.get_string().value_unsafe()));
      }
      return strings;
    }
    case simdjson::dom::element_type::OBJECT:
      break;
  }
  return simdjson::minify(element);
}

void ReadObject(simdjson::dom::object object, std::vector<Attribute>& out) {
  out.reserve(out.size() + object.size());
  for (const simdjson::dom::key_value_pair field : object) {
    out.push_back(Attribute{std::string(field.key), ValueOf(field.value)});
  }
}

}  // namespace

bool ReadAttributesJson(std::string_view text, std::vector<Attribute>& out) {
  simdjson::dom::element root;
  if (ParsePadded(text, root) != simdjson::SUCCESS) return false;
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) return false;
  ReadObject(object, out);
  return true;
}

bool ReadEventsJson(std::string_view text, std::vector<SpanEvent>& out) {
  simdjson::dom::element root;
  if (ParsePadded(text, root) != simdjson::SUCCESS) return false;
  simdjson::dom::array array;
  if (root.get_array().get(array) != simdjson::SUCCESS) return false;
  std::vector<SpanEvent> events;
  events.reserve(array.size());
  for (simdjson::dom::element item : array) {
    simdjson::dom::object object;
    if (item.get_object().get(object) != simdjson::SUCCESS) return false;
    SpanEvent event;
    std::string_view name;
    if (object["name"].get_string().get(name) == simdjson::SUCCESS) event.name = std::string(name);
    std::uint64_t time = 0;
    if (object["time_unix_nano"].get_uint64().get(time) == simdjson::SUCCESS) event.time_unix_nano = time;
    simdjson::dom::object attributes;
    if (object["attributes"].get_object().get(attributes) == simdjson::SUCCESS)
      ReadObject(attributes, event.attributes);
    events.push_back(std::move(event));
  }
  out = std::move(events);
  return true;
}

}  // namespace sparktrace::tracing::store
