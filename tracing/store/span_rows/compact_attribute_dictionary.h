#pragma once
// The shared dictionaries of the compact attribute form (compact_attributes.h): attribute keys and
// string values that most stored spans carry, each stored as its position in the list; and the span-name
// prefix and the whole span names a stored name keeps as one byte (stored_span.h).
//
// APPEND-ONLY: stored rows hold these codes, so an entry is never removed, reordered or respelt (a
// renamed key gets a new entry at the end). The entries are literal strings, not the vocabulary's
// constants, so that editing tracing/span_vocabulary.h can never change what stored codes mean.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace sparktrace::tracing::store {

// Codes start at 1 (0 marks a key spelt out in the row).
std::optional<std::uint32_t> CompactKeyCode(std::string_view key);
std::optional<std::string_view> CompactKeyOfCode(std::uint64_t code);

// Codes start at 0.
std::optional<std::uint32_t> CompactValueCode(std::string_view value);
std::optional<std::string_view> CompactValueOfCode(std::uint64_t code);

// The span-name prefix the stores keep as one byte (stored_span.h, StoredName): a Spark Connect call's.
std::string_view StoredNamePrefix();
// The span names the stores keep as one byte each (stored_span.h, StoredName): a Spark Connect call's
// whole name and the spans sparktrace names most often, each with its code byte (0x03-0x1f, never one
// a terminal acts on).
struct StoredWholeName {
  char code;
  const char* name;
};
std::span<const StoredWholeName> StoredWholeNames();
std::optional<char> StoredWholeNameCode(std::string_view name);
std::optional<std::string_view> StoredWholeNameOf(char code);

// Whether a key's value is one a span shares with its session's others (shared/shared_attributes.h).
bool IsShareableAttributeKey(std::string_view key);

}  // namespace sparktrace::tracing::store
