#pragma once
// Fixed-width integers as the JVM codec streams write them: lz4-java block headers are little endian,
// snappy-java chunk lengths big endian. Reads byte by byte, so alignment and host order do not matter.

#include <cstdint>

namespace sparktrace::listener::eventlog {

inline std::uint32_t ReadLittleEndian32(const char* bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes);
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 |
         std::uint32_t{b[3]} << 24;
}

inline std::uint32_t ReadBigEndian32(const char* bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes);
  return std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 |
         std::uint32_t{b[3]};
}

}  // namespace sparktrace::listener::eventlog
