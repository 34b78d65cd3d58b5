#include "tracing/attribute_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace sparktrace::tracing {

nlohmann::ordered_json AttributeValueToJson(const AttributeValue& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::ordered_json {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::vector<std::string>>) {
          nlohmann::ordered_json array = nlohmann::ordered_json::array();
          for (const auto& item : v) array.push_back(item);
          return array;
        } else {
          // nlohmann stores a non-finite double as a float and prints it as null.
          return nlohmann::ordered_json(v);
        }
      },
      value);
}

namespace {

void WriteValue(JsonWriter& out, const AttributeValue& value) {
  std::visit(
      [&out](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          out.String(v);
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          out.Int(v);
        } else if constexpr (std::is_same_v<V, double>) {
          out.Double(v);  // NaN and infinities as null, as nlohmann writes them
        } else if constexpr (std::is_same_v<V, bool>) {
          out.Bool(v);
        } else {
          out.BeginArray();
          for (const auto& item : v) out.String(item);
          out.EndArray();
        }
      },
      value);
}

}  // namespace

bool KeysAreUnique(const std::vector<Attribute>& attributes) {
  // Pairwise while that is cheap (a span's usual twenty attributes), through the keys sorted beyond.
  constexpr std::size_t kPairwiseUpTo = 32;
  if (attributes.size() <= kPairwiseUpTo) {
    for (std::size_t i = 1; i < attributes.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (attributes[i].key == attributes[j].key) return false;
      }
    }
    return true;
  }
  std::vector<std::string_view> keys;
  keys.reserve(attributes.size());
  for (const Attribute& attribute : attributes) keys.emplace_back(attribute.key);
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
}

std::vector<std::size_t> AttributesToWrite(const std::vector<Attribute>& attributes) {
  std::vector<std::size_t> order(attributes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (KeysAreUnique(attributes)) return order;  // OTLP requires unique keys: nearly always
  const auto same_key = [&attributes](std::size_t a, std::size_t b) {
    return attributes[a].key == attributes[b].key;
  };
  // Keys sorted, each group in span order.
  std::vector<std::size_t> by_key = order;
  std::stable_sort(by_key.begin(), by_key.end(), [&attributes](std::size_t a, std::size_t b) {
    return attributes[a].key < attributes[b].key;
  });
  // value_at[first index of a key] = its last index; later occurrences are dropped.
  constexpr std::size_t kDropped = static_cast<std::size_t>(-1);
  std::vector<std::size_t> value_at(attributes.size(), kDropped);
  for (std::size_t begin = 0; begin < by_key.size();) {
    std::size_t end = begin + 1;
    while (end < by_key.size() && same_key(by_key[end], by_key[begin])) ++end;
    value_at[by_key[begin]] = by_key[end - 1];
    begin = end;
  }
  order.clear();
  for (const std::size_t index : value_at) {
    if (index != kDropped) order.push_back(index);
  }
  return order;
}

void WriteAttributesJson(JsonWriter& out, const std::vector<Attribute>& attributes) {
  out.BeginObject();
  for (const std::size_t index : AttributesToWrite(attributes)) {
    out.Key(attributes[index].key);
    WriteValue(out, attributes[index].value);
  }
  out.EndObject();
}

nlohmann::ordered_json AttributesToJson(const std::vector<Attribute>& attributes) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const auto& attribute : attributes) object[attribute.key] = AttributeValueToJson(attribute.value);
  return object;
}

namespace {

AttributeValue ValueFromJson(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::json::value_t::string:
      return json.get_ref<const std::string&>();
    case nlohmann::json::value_t::boolean:
      return json.get<bool>();
    case nlohmann::json::value_t::number_integer:
      return json.get<std::int64_t>();
    case nlohmann::json::value_t::number_unsigned:
      // The parser reads non-negative integers as unsigned; ours all came from int64.
      return static_cast<std::int64_t>(json.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return json.get<double>();
    case nlohmann::json::value_t::null:
      return std::numeric_limits<double>::quiet_NaN();
    case nlohmann::json::value_t::array: {
      std::vector<std::string> strings;
      strings.reserve(json.size());
      for (const auto& item : json) {
        if (!item.is_string()) return DumpJson(json);
        strings.push_back(item.get_ref<const std::string&>());
      }
      return strings;
    }
    default:
      return DumpJson(json);
  }
}

}  // namespace

std::vector<Attribute> AttributesFromJson(const nlohmann::ordered_json& object) {
  std::vector<Attribute> attributes;
  if (!object.is_object()) return attributes;
  attributes.reserve(object.size());
  for (const auto& [key, value] : object.items()) attributes.push_back(Attribute{key, ValueFromJson(value)});
  return attributes;
}

std::string DumpJson(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string DumpJsonPretty(const nlohmann::ordered_json& json) {
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace sparktrace::tracing
