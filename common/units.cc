#include "common/units.h"

#include <array>
#include <charconv>
#include <limits>
#include <utility>

namespace sparktrace {
namespace {

// Splits "256MiB" into 256 and "MiB". Returns false when there are no leading digits.
bool SplitNumber(std::string_view text, std::uint64_t& number, std::string_view& rest) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || ptr == begin) return false;
  rest = std::string_view(ptr, static_cast<std::size_t>(end - ptr));
  return true;
}

bool MultiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return false;
  out = a * b;
  return true;
}

}  // namespace

Result<std::uint64_t> ParseByteSize(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 9> kUnits = {{
      {"", 1},
      {"B", 1},
      {"KiB", 1ULL << 10},
      {"MiB", 1ULL << 20},
      {"GiB", 1ULL << 30},
      {"KB", 1000ULL},
      {"MB", 1000ULL * 1000},
      {"GB", 1000ULL * 1000 * 1000},
      {"k", 1000ULL},
  }};
  std::uint64_t number = 0;
  std::string_view unit;
  if (!SplitNumber(text, number, unit)) {
    return InvalidArgument("'" + std::string(text) + "' is not a byte size (e.g. 268435456 or 256MiB)");
  }
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      std::uint64_t bytes = 0;
      if (!MultiplyChecked(number, factor, bytes)) {
        return InvalidArgument("'" + std::string(text) + "' is too large");
      }
      return bytes;
    }
  }
  return InvalidArgument("'" + std::string(text) + "' has an unknown unit '" + std::string(unit) +
                         "' (use B, KiB, MiB, GiB, KB, MB or GB)");
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return InvalidArgument("empty duration (e.g. 150s, 500ms, 2m)");
  std::uint64_t total_ms = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::uint64_t number = 0;
    std::string_view after;
    if (!SplitNumber(rest, number, after)) {
      return InvalidArgument("'" + std::string(text) + "' is not a duration (e.g. 150s, 500ms, 2m)");
    }
    std::uint64_t factor = 0;
    std::size_t unit_length = 0;
    if (after.starts_with("ms")) {
      factor = 1, unit_length = 2;
    } else if (after.starts_with("s")) {
      factor = 1000, unit_length = 1;
    } else if (after.starts_with("m")) {
      factor = 60'000, unit_length = 1;
    } else if (after.starts_with("h")) {
      factor = 3'600'000, unit_length = 1;
    } else if (after.starts_with("d")) {
      factor = 86'400'000, unit_length = 1;
    } else {
      return InvalidArgument("'" + std::string(text) + "' needs a unit: ms, s, m, h or d");
    }
    std::uint64_t part = 0;
    if (!MultiplyChecked(number, factor, part) ||
        total_ms > std::numeric_limits<std::int64_t>::max() - part) {
      return InvalidArgument("'" + std::string(text) + "' is too long");
    }
    total_ms += part;
    rest = after.substr(unit_length);
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(total_ms));
}

std::string FormatByteSize(std::uint64_t bytes) {
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 3> kUnits = {{
      {"GiB", 1ULL << 30},
      {"MiB", 1ULL << 20},
      {"KiB", 1ULL << 10},
  }};
  for (const auto& [name, factor] : kUnits) {
    if (bytes >= factor && bytes % factor == 0) return std::to_string(bytes / factor) + std::string(name);
  }
  return std::to_string(bytes) + "B";
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms % 60'000 == 0 && ms != 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace sparktrace
