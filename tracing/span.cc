#include "tracing/span.h"

#include <algorithm>

namespace sparktrace::tracing {
namespace {

// The hex digits of `bytes`, spelled on the stack: a string is then made or grown once, with no
// zero-filling first (the store writers spell three ids a span).
template <std::size_t N>
std::array<char, 2 * N> HexDigitsOf(const std::array<std::uint8_t, N>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::array<char, 2 * N> digits{};
  for (std::size_t i = 0; i < N; ++i) {
    digits[2 * i] = kDigits[bytes[i] >> 4];
    digits[2 * i + 1] = kDigits[bytes[i] & 0x0f];
  }
  return digits;
}

template <std::size_t N>
void AppendHexOf(const std::array<std::uint8_t, N>& bytes, std::string& out) {
  const auto digits = HexDigitsOf(bytes);
  out.append(digits.data(), digits.size());
}

template <std::size_t N>
std::string HexOf(const std::array<std::uint8_t, N>& bytes) {
  const auto digits = HexDigitsOf(bytes);
  return std::string(digits.data(), digits.size());
}

template <std::size_t N>
bool NotAllZero(const std::array<std::uint8_t, N>& bytes) {
  return std::any_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b != 0; });
}

}  // namespace

std::string ToHex(const TraceId& id) { return HexOf(id); }
std::string ToHex(const SpanId& id) { return HexOf(id); }
void AppendHex(const TraceId& id, std::string& out) { AppendHexOf(id, out); }
void AppendHex(const SpanId& id, std::string& out) { AppendHexOf(id, out); }
bool IsValid(const TraceId& id) { return NotAllZero(id); }
bool IsValid(const SpanId& id) { return NotAllZero(id); }

std::optional<TraceId> ParseTraceId(std::string_view hex) {
  TraceId id{};
  if (hex.size() != 2 * id.size()) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < id.size(); ++i) {
    const int high = nibble(hex[2 * i]);
    const int low = nibble(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    id[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  if (!IsValid(id)) return std::nullopt;
  return id;
}

}  // namespace sparktrace::tracing
