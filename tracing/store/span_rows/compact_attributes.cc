#include "tracing/store/span_rows/compact_attributes.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/hex_digit.h"
#include "tracing/attribute_json.h"
#include "tracing/store/span_rows/compact_attribute_dictionary.h"

namespace sparktrace::tracing::store {
namespace {

// Value kinds (compact_attributes.h's layout). Stored in rows: never renumbered.
enum class Kind : unsigned char {
  kString = 0,
  kDictionaryString = 1,
  kUuid = 2,
  kInt = 3,
  kDouble = 4,
  kFalse = 5,
  kTrue = 6,
  kStringList = 7,
};

constexpr std::size_t kUuidTextSize = 36;  // 8-4-4-4-12 hex digits
constexpr std::size_t kUuidBytes = 16;

// A varint at `at` (room for 10 bytes: 64 bits, 7 a byte); returns its size. The appends below gather
// bytes and append them at once: a push_back a byte, each checking the string's capacity, was a
// writer's most frequent call (bench/store_instructions.py).
std::size_t PutVarint(char* at, std::uint64_t value) {
  std::size_t size = 0;
  while (value >= 0x80) {
    at[size++] = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  at[size++] = static_cast<char>(value);
  return size;
}

void AppendVarint(std::string& out, std::uint64_t value) {
  std::array<char, 10> bytes{};
  out.append(bytes.data(), PutVarint(bytes.data(), value));
}

// A kind byte and the varint after it.
void AppendKindAndVarint(std::string& out, Kind kind, std::uint64_t value) {
  std::array<char, 11> bytes{static_cast<char>(kind)};
  out.append(bytes.data(), 1 + PutVarint(bytes.data() + 1, value));
}

void AppendBytes(std::string& out, std::string_view bytes) {
  AppendVarint(out, bytes.size());
  out.append(bytes);
}

bool IsUuidDash(std::size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

// A canonical lower-case UUID packs into 16 bytes and unpacks to the same text; any other
// spelling (upper case, braces) stays a string.
bool PackUuid(std::string_view text, std::array<char, kUuidBytes>& out) {
  if (text.size() != kUuidTextSize) return false;
  std::size_t byte = 0;
  for (std::size_t i = 0; i < kUuidTextSize;) {
    if (IsUuidDash(i)) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const char high_char = text[i];
    const char low_char = text[i + 1];
    if ((high_char >= 'A' && high_char <= 'F') || (low_char >= 'A' && low_char <= 'F')) return false;
    const int high = HexDigitValue(high_char);
    const int low = HexDigitValue(low_char);
    if (high < 0 || low < 0) return false;
    out[byte++] = static_cast<char>(high * 16 + low);
    i += 2;
  }
  return true;
}

std::string UnpackUuid(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(kUuidTextSize);
  for (std::size_t i = 0; i < kUuidBytes; ++i) {
    if (text.size() == 8 || text.size() == 13 || text.size() == 18 || text.size() == 23) text.push_back('-');
    const auto value = static_cast<unsigned char>(bytes[i]);
    text.push_back(kDigits[value >> 4]);
    text.push_back(kDigits[value & 0x0f]);
  }
  return text;
}

void AppendString(std::string& out, const std::string& text) {
  if (const auto code = CompactValueCode(text)) {
    AppendKindAndVarint(out, Kind::kDictionaryString, *code);
    return;
  }
  std::array<char, kUuidBytes> uuid{};
  if (PackUuid(text, uuid)) {
    out.push_back(static_cast<char>(Kind::kUuid));
    out.append(uuid.data(), uuid.size());
    return;
  }
  out.push_back(static_cast<char>(Kind::kString));
  AppendBytes(out, text);
}

void AppendValue(std::string& out, const AttributeValue& value) {
  std::visit(
      [&out](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          AppendString(out, v);
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          const auto bits = static_cast<std::uint64_t>(v);
          AppendKindAndVarint(out, Kind::kInt, (bits << 1) ^ (v < 0 ? ~std::uint64_t{0} : 0));  // zig-zag
        } else if constexpr (std::is_same_v<V, double>) {
          // Infinities read back as NaN, as from the JSON form (null): the backends agree on it.
          const double stored = std::isfinite(v) ? v : std::numeric_limits<double>::quiet_NaN();
          std::uint64_t bits = 0;
          std::memcpy(&bits, &stored, sizeof bits);
          std::array<char, 9> bytes{static_cast<char>(Kind::kDouble)};  // the kind, then little-endian
          for (std::size_t i = 0; i < 8; ++i) bytes[1 + i] = static_cast<char>(bits >> (8 * i));
          out.append(bytes.data(), bytes.size());
        } else if constexpr (std::is_same_v<V, bool>) {
          out.push_back(static_cast<char>(v ? Kind::kTrue : Kind::kFalse));
        } else {
          out.push_back(static_cast<char>(Kind::kStringList));
          AppendVarint(out, v.size());
          for (const std::string& item : v) AppendBytes(out, item);
        }
      },
      value);
}

// A bounds-checked reader over one row's bytes; any read past the end fails the whole decode.
class CompactReader {
 public:
  explicit CompactReader(std::string_view bytes) : bytes_(bytes) {}

  bool AtEnd() const { return at_ == bytes_.size(); }
  // What is left to read.
  std::string_view Rest() const { return bytes_.substr(at_); }

  bool Varint(std::uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size()) return false;
      const auto byte = static_cast<unsigned char>(bytes_[at_++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  bool Bytes(std::size_t size, std::string_view& out) {
    if (bytes_.size() - at_ < size) return false;
    out = bytes_.substr(at_, size);
    at_ += size;
    return true;
  }

  bool Counted(std::string_view& out) {
    std::uint64_t size = 0;
    return Varint(size) && Bytes(size, out);
  }

  bool Key(std::string_view& key) {
    std::uint64_t code = 0;
    if (!Varint(code)) return false;
    if (code == 0) return Counted(key);
    const auto known = CompactKeyOfCode(code);
    if (!known) return false;
    key = *known;
    return true;
  }

  // Reads one value; `decode` false skips it (FindCompactAttribute passing other keys by).
  bool Value(AttributeValue* decode) {
    std::string_view kind_byte;
    if (!Bytes(1, kind_byte)) return false;
    std::string_view bytes;
    switch (static_cast<Kind>(kind_byte[0])) {
      case Kind::kString:
        if (!Counted(bytes)) return false;
        if (decode != nullptr) *decode = std::string(bytes);
        return true;
      case Kind::kDictionaryString: {
        std::uint64_t code = 0;
        if (!Varint(code)) return false;
        const auto text = CompactValueOfCode(code);
        if (!text) return false;
        if (decode != nullptr) *decode = std::string(*text);
        return true;
      }
      case Kind::kUuid:
        if (!Bytes(kUuidBytes, bytes)) return false;
        if (decode != nullptr) *decode = UnpackUuid(bytes);
        return true;
      case Kind::kInt: {
        std::uint64_t zigzag = 0;
        if (!Varint(zigzag)) return false;
        const std::uint64_t bits = (zigzag >> 1) ^ (~(zigzag & 1) + 1);
        if (decode != nullptr) *decode = static_cast<std::int64_t>(bits);
        return true;
      }
      case Kind::kDouble: {
        if (!Bytes(8, bytes)) return false;
        std::uint64_t bits = 0;
        for (int i = 7; i >= 0; --i)
          bits = (bits << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
        double value = 0;
        std::memcpy(&value, &bits, sizeof value);
        if (decode != nullptr) *decode = value;
        return true;
      }
      case Kind::kFalse:
      case Kind::kTrue:
        if (decode != nullptr) *decode = static_cast<Kind>(kind_byte[0]) == Kind::kTrue;
        return true;
      case Kind::kStringList: {
        std::uint64_t count = 0;
        if (!Varint(count)) return false;
        std::vector<std::string> items;
        for (std::uint64_t i = 0; i < count; ++i) {
          if (!Counted(bytes)) return false;
          if (decode != nullptr) items.emplace_back(bytes);
        }
        if (decode != nullptr) *decode = std::move(items);
        return true;
      }
    }
    return false;  // a kind this build does not know
  }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

bool ReadFormat(CompactReader& reader) {
  std::uint64_t format = 0;
  return reader.Varint(format) && format == kCompactAttributesFormat;
}

void AppendAttribute(std::string& out, const Attribute& attribute, std::optional<std::uint32_t> key_code) {
  if (key_code) {
    AppendVarint(out, *key_code);
  } else {
    AppendVarint(out, 0);
    AppendBytes(out, attribute.key);
  }
  AppendValue(out, attribute.value);
}

void AppendAttribute(std::string& out, const Attribute& attribute) {
  AppendAttribute(out, attribute, CompactKeyCode(attribute.key));
}

// At most what `attributes` take in the compact form, unless they hold string lists or long keys
// outside the dictionary (then the string grows as it must): a span's row is written without
// reallocating as it grows.
std::size_t CompactSizeBound(const std::vector<Attribute>& attributes) {
  constexpr std::size_t kAttributeBound = 12;  // a varint key code, a kind byte, a double or a varint
  std::size_t bound = 1 + attributes.size() * kAttributeBound;
  for (const Attribute& attribute : attributes) {
    if (const auto* text = std::get_if<std::string>(&attribute.value)) bound += text->size();
  }
  return bound;
}

}  // namespace

void AppendCompactAttributes(std::string& out, const std::vector<Attribute>& attributes) {
  out.reserve(out.size() + CompactSizeBound(attributes));
  out.push_back(static_cast<char>(kCompactAttributesFormat));
  if (KeysAreUnique(attributes)) {
    for (const Attribute& attribute : attributes) AppendAttribute(out, attribute);
    return;
  }
  for (const std::size_t index : AttributesToWrite(attributes)) AppendAttribute(out, attributes[index]);
}

bool ReadCompactAttributes(std::string_view bytes, std::vector<Attribute>& out) {
  CompactReader reader(bytes);
  if (!ReadFormat(reader)) return false;
  std::vector<Attribute> attributes;
  while (!reader.AtEnd()) {
    std::string_view key;
    AttributeValue value;
    if (!reader.Key(key) || !reader.Value(&value)) return false;
    attributes.push_back(Attribute{std::string(key), std::move(value)});
  }
  out = std::move(attributes);
  return true;
}

std::optional<AttributeValue> FindCompactAttribute(std::string_view bytes, std::string_view key) {
  CompactReader reader(bytes);
  if (!ReadFormat(reader)) return std::nullopt;
  return FindInCompactBody(reader.Rest(), key);
}

std::optional<AttributeValue> FindInCompactBody(std::string_view body, std::string_view key) {
  CompactReader reader(body);
  while (!reader.AtEnd()) {
    std::string_view stored_key;
    if (!reader.Key(stored_key)) return std::nullopt;
    if (stored_key != key) {
      if (!reader.Value(nullptr)) return std::nullopt;
      continue;
    }
    AttributeValue value;
    if (!reader.Value(&value)) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

void AppendCompactVarint(std::string& out, std::uint64_t value) { AppendVarint(out, value); }

void AppendCompactAttribute(std::string& out, const Attribute& attribute) { AppendAttribute(out, attribute); }

void AppendCompactAttribute(std::string& out, const Attribute& attribute,
                            std::optional<std::uint32_t> key_code) {
  AppendAttribute(out, attribute, key_code);
}

bool ConsumeCompactVarint(std::string_view& bytes, std::uint64_t& value) {
  CompactReader reader(bytes);
  if (!reader.Varint(value)) return false;
  bytes = reader.Rest();
  return true;
}

bool ConsumeCompactAttribute(std::string_view& bytes, Attribute& out) {
  CompactReader reader(bytes);
  std::string_view key;
  AttributeValue value;
  if (!reader.Key(key) || !reader.Value(&value)) return false;
  out = Attribute{std::string(key), std::move(value)};
  bytes = reader.Rest();
  return true;
}

}  // namespace sparktrace::tracing::store
