#pragma once
// The compact form of span attributes in the SQLite store's attributes column: a BLOB about a quarter
// the size of the JSON text (tracing/attribute_json.h), which was a third of every stored span. Keys
// and frequent values of the span vocabulary are one-byte codes from shared dictionaries
// (compact_attribute_dictionary.cc, append-only: stored rows depend on every code), integers are
// varints, doubles their 8 bytes, canonical lower-case UUIDs their 16 bytes.
//
// Reads back to exactly the attributes the JSON form gives (AttributesFromJson), with its documented
// corners where the stores' conformance suite fixes them: a repeated key keeps its last value,
// written where it first appears; NaN and infinities read back as NaN. Finite doubles are kept bit
// for bit, and a string's bytes as they are (the JSON form replaces invalid UTF-8 with U+FFFD).
//
// Layout: a format byte (kCompactAttributesFormat), then per attribute
//   key:   varint code (1… from the key dictionary), or 0 followed by varint length and the bytes
//   value: a kind byte, then per kind: string (varint length, bytes) | dictionary string (varint code)
//          | uuid (16 bytes) | int (zig-zag varint) | double (8 bytes little-endian) | false | true
//          | string list (varint count, then each as varint length and bytes)
//
// Pure functions; no exceptions escape them (a std::bad_alloc aside).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing::store {

inline constexpr unsigned char kCompactAttributesFormat = 0x01;

// Appends the compact form of `attributes` to `out`.
void AppendCompactAttributes(std::string& out, const std::vector<Attribute>& attributes);

// False (and `out` untouched) when `bytes` is not the compact form (wrong format byte, truncated,
// an unknown code or kind).
bool ReadCompactAttributes(std::string_view bytes, std::vector<Attribute>& out);

// The value of `key` in compact `bytes`, decoding that value only (the SQL function
// sparktrace_attribute reads one attribute of many rows); nullopt when absent or malformed.
std::optional<AttributeValue> FindCompactAttribute(std::string_view bytes, std::string_view key);

// The layout's pieces, for the forms built on it (shared/shared_attributes.h): the Append* functions
// write one varint, or one attribute's key and value; the Consume* functions read one from the front
// of `bytes` and advance it past what they read (false, `bytes` then unspecified, when it is
// truncated or holds an unknown code or kind).
void AppendCompactVarint(std::string& out, std::uint64_t value);
void AppendCompactAttribute(std::string& out, const Attribute& attribute);
// ... with its key's code already looked up (CompactKeyCode(attribute.key), compact_attribute_dictionary.h).
void AppendCompactAttribute(std::string& out, const Attribute& attribute,
                            std::optional<std::uint32_t> key_code);
bool ConsumeCompactVarint(std::string_view& bytes, std::uint64_t& value);
bool ConsumeCompactAttribute(std::string_view& bytes, Attribute& out);
// The value of `key` among the attributes `body` holds (the layout after its format byte).
std::optional<AttributeValue> FindInCompactBody(std::string_view body, std::string_view key);

}  // namespace sparktrace::tracing::store
