#include "listener/eventlog/xxhash32.h"

#include <bit>

#include "listener/eventlog/byte_order.h"

namespace sparktrace::listener::eventlog {
namespace {

constexpr std::uint32_t kPrime1 = 0x9E3779B1U;
constexpr std::uint32_t kPrime2 = 0x85EBCA77U;
constexpr std::uint32_t kPrime3 = 0xC2B2AE3DU;
constexpr std::uint32_t kPrime4 = 0x27D4EB2FU;
constexpr std::uint32_t kPrime5 = 0x165667B1U;

std::uint32_t Round(std::uint32_t accumulator, std::uint32_t lane) {
  accumulator += lane * kPrime2;
  return std::rotl(accumulator, 13) * kPrime1;
}

}  // namespace

std::uint32_t XxHash32(std::string_view data, std::uint32_t seed) {
  const char* p = data.data();
  const char* const end = p + data.size();
  std::uint32_t hash;
  if (data.size() >= 16) {
    std::uint32_t v1 = seed + kPrime1 + kPrime2;
    std::uint32_t v2 = seed + kPrime2;
    std::uint32_t v3 = seed;
    std::uint32_t v4 = seed - kPrime1;
    for (; end - p >= 16; p += 16) {
      v1 = Round(v1, ReadLittleEndian32(p));
      v2 = Round(v2, ReadLittleEndian32(p + 4));
      v3 = Round(v3, ReadLittleEndian32(p + 8));
      v4 = Round(v4, ReadLittleEndian32(p + 12));
    }
    hash = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
  } else {
    hash = seed + kPrime5;
  }
  hash += static_cast<std::uint32_t>(data.size());
  for (; end - p >= 4; p += 4) {
    hash += ReadLittleEndian32(p) * kPrime3;
    hash = std::rotl(hash, 17) * kPrime4;
  }
  for (; p < end; ++p) {
    hash += std::uint32_t{static_cast<unsigned char>(*p)} * kPrime5;
    hash = std::rotl(hash, 11) * kPrime1;
  }
  hash ^= hash >> 15;
  hash *= kPrime2;
  hash ^= hash >> 13;
  hash *= kPrime3;
  hash ^= hash >> 16;
  return hash;
}

}  // namespace sparktrace::listener::eventlog
