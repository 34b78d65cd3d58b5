#include "tracing/store/span_rows/shared/shared_attributes.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <variant>

#include "tracing/attribute_json.h"
#include "tracing/store/span_rows/compact_attribute_dictionary.h"
#include "tracing/store/span_rows/compact_attributes.h"

namespace sparktrace::tracing::store {
namespace {

// Below two, a set's own row and id cost about what it saves.
constexpr std::size_t kLeastShared = 2;

struct PlacedAttribute {
  std::uint64_t position = 0;
  Attribute attribute;
};

// A set's attributes with their positions; false when malformed (positions not increasing).
bool ReadSet(std::string_view bytes, std::vector<PlacedAttribute>& out) {
  if (bytes.empty() || static_cast<unsigned char>(bytes.front()) != kAttributeSetFormat) return false;
  bytes.remove_prefix(1);
  std::vector<PlacedAttribute> placed;
  while (!bytes.empty()) {
    PlacedAttribute& next = placed.emplace_back();
    if (!ConsumeCompactVarint(bytes, next.position) || !ConsumeCompactAttribute(bytes, next.attribute))
      return false;
    if (placed.size() > 1 && next.position <= placed[placed.size() - 2].position) return false;
  }
  out = std::move(placed);
  return true;
}

// A row in the shared form: the set it names and the compact body of its own attributes.
struct SharedRow {
  std::uint64_t set_id = 0;
  std::string_view own;
};

// nullopt for any other form or a truncated id.
std::optional<SharedRow> ParseSharedRow(std::string_view bytes) {
  if (bytes.empty() || static_cast<unsigned char>(bytes.front()) != kSharedAttributesFormat)
    return std::nullopt;
  bytes.remove_prefix(1);
  SharedRow row;
  if (!ConsumeCompactVarint(bytes, row.set_id)) return std::nullopt;
  row.own = bytes;
  return row;
}

Error Malformed(std::string_view what) {
  return Error{ErrorCode::kInternal, fmt::format("malformed {}", what)};
}

// The set of a shared row, through `sets`.
Result<std::string> SetBytesOf(std::uint64_t set_id, AttributeSetSource* sets) {
  if (sets == nullptr)
    return Error{ErrorCode::kInternal, fmt::format("attribute set {} cannot be read here", set_id)};
  return sets->AttributeSetBytes(set_id);
}

}  // namespace

Error AttributeSetMissing(std::uint64_t set_id) {
  return Error{ErrorCode::kNotFound, fmt::format("attribute set {} is not in the store", set_id)};
}

bool SplitSharedAttributes(const std::vector<Attribute>& attributes, std::string& set, std::string& own) {
  SharedAttributeSplitter split;  // no span before: every key looked up, the set encoded
  const bool shared = split.Split(attributes);
  set = split.set();
  own = split.own();
  return shared;
}

namespace {

// Whether two values encode to the same bytes: equal, and a double bit for bit (0.0 == -0.0, and a NaN
// equals nothing, not even itself).
bool SameEncoding(const AttributeValue& a, const AttributeValue& b) {
  const double* a_double = std::get_if<double>(&a);
  const double* b_double = std::get_if<double>(&b);
  if (a_double == nullptr || b_double == nullptr) return a == b;
  return std::bit_cast<std::uint64_t>(*a_double) == std::bit_cast<std::uint64_t>(*b_double);
}

}  // namespace

void SharedAttributeSplitter::LearnKeys(const std::vector<Attribute>& attributes) {
  const bool same_keys =
      keys_.size() == attributes.size() &&
      std::equal(keys_.begin(), keys_.end(), attributes.begin(),
                 [](const std::string& key, const Attribute& attribute) { return key == attribute.key; });
  if (same_keys) return;
  keys_.clear();
  facts_.clear();
  for (const Attribute& attribute : attributes) {
    keys_.push_back(attribute.key);
    facts_.push_back(KeyFacts{IsShareableAttributeKey(attribute.key), CompactKeyCode(attribute.key)});
  }
  unique_ = KeysAreUnique(attributes);
}

bool SharedAttributeSplitter::Split(const std::vector<Attribute>& attributes) {
  LearnKeys(attributes);
  own_.clear();
  bool same_set = !in_set_.empty();
  std::size_t shared = 0;
  for (std::size_t position = 0; position < attributes.size(); ++position) {
    const Attribute& attribute = attributes[position];
    if (!facts_[position].shareable) {
      AppendCompactAttribute(own_, attribute, facts_[position].code);
      continue;
    }
    if (same_set) {
      same_set = shared < in_set_.size() && in_set_[shared].first == position &&
                 in_set_[shared].second.key == attribute.key &&
                 SameEncoding(in_set_[shared].second.value, attribute.value);
    }
    ++shared;
  }
  if (!same_set || shared != in_set_.size()) {
    set_.assign(1, static_cast<char>(kAttributeSetFormat));
    in_set_.clear();
    for (std::size_t position = 0; position < attributes.size(); ++position) {
      if (!facts_[position].shareable) continue;
      const Attribute& attribute = attributes[position];
      AppendCompactVarint(set_, position);
      AppendCompactAttribute(set_, attribute, facts_[position].code);
      in_set_.emplace_back(position, attribute);
    }
  }
  return shared >= kLeastShared && unique_;
}

void AppendSharedAttributes(std::string& out, std::uint64_t set_id, std::string_view own) {
  out.push_back(static_cast<char>(kSharedAttributesFormat));
  AppendCompactVarint(out, set_id);
  out.append(own);
}

std::optional<std::uint64_t> SharedAttributesSetId(std::string_view bytes) {
  const auto row = ParseSharedRow(bytes);
  if (!row) return std::nullopt;
  return row->set_id;
}

Result<std::vector<Attribute>> ReadCompactOrSharedAttributes(std::string_view bytes,
                                                             AttributeSetSource* sets) {
  std::vector<Attribute> attributes;
  if (!bytes.empty() && static_cast<unsigned char>(bytes.front()) == kCompactAttributesFormat) {
    if (!ReadCompactAttributes(bytes, attributes)) return Malformed("compact attributes");
    return attributes;
  }
  const auto row = ParseSharedRow(bytes);
  if (!row) return Malformed("attributes (neither the compact nor the shared form)");
  auto set_bytes = SetBytesOf(row->set_id, sets);
  if (!set_bytes.ok()) return set_bytes.error();
  std::vector<PlacedAttribute> placed;
  if (!ReadSet(*set_bytes, placed)) return Malformed(fmt::format("attribute set {}", row->set_id));
  // The own attributes fill the positions the set leaves, in order.
  std::string_view own = row->own;
  auto next_placed = placed.begin();
  while (!own.empty() || next_placed != placed.end()) {
    if (next_placed != placed.end() && next_placed->position == attributes.size()) {
      attributes.push_back(std::move(next_placed->attribute));
      ++next_placed;
      continue;
    }
    if (own.empty())
      return Malformed(fmt::format("shared attributes (set {} has a position past them)", row->set_id));
    if (!ConsumeCompactAttribute(own, attributes.emplace_back())) return Malformed("shared attributes");
  }
  return attributes;
}

Result<std::optional<AttributeValue>> FindCompactOrSharedAttribute(std::string_view bytes,
                                                                   std::string_view key,
                                                                   AttributeSetSource* sets) {
  const auto row = ParseSharedRow(bytes);
  if (!row) return FindCompactAttribute(bytes, key);
  if (!IsShareableAttributeKey(key)) return FindInCompactBody(row->own, key);
  auto set_bytes = SetBytesOf(row->set_id, sets);
  if (!set_bytes.ok()) return set_bytes.error();
  std::vector<PlacedAttribute> placed;
  if (!ReadSet(*set_bytes, placed)) return Malformed(fmt::format("attribute set {}", row->set_id));
  for (PlacedAttribute& entry : placed) {
    if (entry.attribute.key == key) return std::optional<AttributeValue>(std::move(entry.attribute.value));
  }
  return std::optional<AttributeValue>();
}

}  // namespace sparktrace::tracing::store
