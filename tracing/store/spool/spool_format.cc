#include "tracing/store/spool/spool_format.h"

#include <charconv>
#include <cstdint>
#include <system_error>

namespace sparktrace::tracing::store {
namespace {

// ---- CRC32C (Castagnoli, reflected 0x82F63B78), one table lookup a byte. Fast enough here: the
// spool writes what a store could not take, and Open() checks at most max_bytes once.
constexpr std::array<std::uint32_t, 256> kCrc32cTable = [] {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F63B78U : crc >> 1;
    table[i] = crc;
  }
  return table;
}();
static_assert(kCrc32cTable[1] == 0xF26B8303U, "CRC32C table");

}  // namespace

std::uint32_t Crc32c(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFU;
  for (const char byte : bytes) {
    crc = kCrc32cTable[(crc ^ static_cast<std::uint8_t>(byte)) & 0xFF] ^ (crc >> 8);
  }
  return crc ^ 0xFFFFFFFFU;
}

void PutU32(char* out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (8 * i));
}

void PutU64(char* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}

std::uint32_t GetU32(const char* in) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    value |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(in[i])) << (8 * i);
  }
  return value;
}

std::uint64_t GetU64(const char* in) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(in[i])) << (8 * i);
  }
  return value;
}

std::array<char, kRecordHeaderBytes> RecordHeader(std::string_view payload) {
  std::array<char, kRecordHeaderBytes> header{};
  PutU32(header.data(), kRecordMagic);
  PutU32(header.data() + 4, static_cast<std::uint32_t>(payload.size()));
  PutU32(header.data() + 8, Crc32c(payload));
  PutU32(header.data() + 12, Crc32c(std::string_view(header.data(), 12)));
  return header;
}

std::optional<std::uint64_t> SegmentSequence(std::string_view name) {
  if (name.size() != kSegmentPrefix.size() + kSequenceDigits + kSegmentSuffix.size() ||
      !name.starts_with(kSegmentPrefix) || !name.ends_with(kSegmentSuffix)) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(kSegmentPrefix.size(), kSequenceDigits);
  std::uint64_t sequence = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), sequence);
  if (error != std::errc() || end != digits.data() + digits.size() || sequence == 0) return std::nullopt;
  return sequence;
}

}  // namespace sparktrace::tracing::store
