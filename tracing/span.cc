#include "tracing/span.h"

#include <algorithm>

namespace sparktrace::tracing {
namespace {

template <std::size_t N>
std::string HexOf(const std::array<std::uint8_t, N>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(2 * N, '0');
  for (std::size_t i = 0; i < N; ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0x0f];
  }
  return hex;
}

template <std::size_t N>
bool NotAllZero(const std::array<std::uint8_t, N>& bytes) {
  return std::any_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b != 0; });
}

}  // namespace

std::string ToHex(const TraceId& id) { return HexOf(id); }
std::string ToHex(const SpanId& id) { return HexOf(id); }
bool IsValid(const TraceId& id) { return NotAllZero(id); }
bool IsValid(const SpanId& id) { return NotAllZero(id); }

}  // namespace sparktrace::tracing
