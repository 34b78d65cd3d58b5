#include "sim/ids.h"

#include <cstdint>
#include <cstdio>
#include <random>

namespace sparktrace::sim {

std::string NewUuid() {
  // One generator per thread: no lock, and ids need to be unique, not unpredictable.
  thread_local std::mt19937_64 generator{std::random_device{}()};
  std::uint64_t high = generator();
  std::uint64_t low = generator();
  high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;    // RFC 4122 variant
  char text[37];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                static_cast<unsigned>((high >> 16) & 0xffff), static_cast<unsigned>(high & 0xffff),
                static_cast<unsigned>(low >> 48), static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return text;
}

}  // namespace sparktrace::sim
