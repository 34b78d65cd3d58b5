#pragma once
// The span spool's on-disk format (span_spool.h describes it): the names of its files, the framing of
// a record (header with magic, length and CRC32C checks) and the layout of the cursor file, with the
// checksum and the little-endian fields they are written in. Apart from the spool's queue logic so
// that the byte layout is in one place, next to the checks that read it.
//
// Pure functions and constants; thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparktrace::tracing::store {

inline constexpr std::string_view kLockFileName = "lock";
inline constexpr std::string_view kCursorFileName = "cursor";
inline constexpr std::string_view kCursorTempFileName = "cursor.tmp";
inline constexpr std::string_view kSegmentPrefix = "segment-";
inline constexpr std::string_view kSegmentSuffix = ".spool";
// Zero-padded so that names sort like the numbers (for people listing the directory).
inline constexpr std::size_t kSequenceDigits = 20;

// Record header: magic, payload length, CRC32C of the payload, CRC32C of those 12 bytes. The header's
// own CRC tells a torn or overwritten header from a real one, so a garbage length is never believed.
inline constexpr std::uint32_t kRecordMagic = 0x31535453;  // "STS1" as little-endian bytes
inline constexpr std::size_t kRecordHeaderBytes = 16;
// Cursor file: magic, segment sequence, offset, CRC32C of those 20 bytes. A torn cursor (the rename
// outran the data in a power loss) fails its CRC and is ignored: at-least-once.
inline constexpr std::uint32_t kCursorMagic = 0x31435453;  // "STC1"
inline constexpr std::size_t kCursorBytes = 24;

// CRC32C (Castagnoli) of `bytes`.
std::uint32_t Crc32c(std::string_view bytes);

// Little-endian fields of the record header and the cursor.
void PutU32(char* out, std::uint32_t value);
void PutU64(char* out, std::uint64_t value);
std::uint32_t GetU32(const char* in);
std::uint64_t GetU64(const char* in);

// The header that precedes `payload` in a segment.
std::array<char, kRecordHeaderBytes> RecordHeader(std::string_view payload);

// The sequence number in a segment file's name; nullopt for any other name (the lock, the cursor,
// files that are not the spool's).
std::optional<std::uint64_t> SegmentSequence(std::string_view name);

// Where the oldest unacknowledged record starts, as the cursor file holds it.
struct Cursor {
  std::uint64_t sequence = 0;
  std::uint64_t offset = 0;
};

}  // namespace sparktrace::tracing::store
