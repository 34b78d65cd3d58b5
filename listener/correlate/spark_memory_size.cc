#include "listener/correlate/spark_memory_size.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <string>
#include <utility>

namespace sparktrace::listener::correlate {
namespace {

// Suffix → bytes of one unit (ByteUnit in Spark's common/utils).
constexpr std::array<std::pair<std::string_view, std::int64_t>, 11> kUnits = {{
    {"b", 1},
    {"k", std::int64_t{1} << 10},
    {"kb", std::int64_t{1} << 10},
    {"m", kMiB},
    {"mb", kMiB},
    {"g", std::int64_t{1} << 30},
    {"gb", std::int64_t{1} << 30},
    {"t", std::int64_t{1} << 40},
    {"tb", std::int64_t{1} << 40},
    {"p", std::int64_t{1} << 50},
    {"pb", std::int64_t{1} << 50},
}};

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<std::int64_t> SparkMemoryBytes(std::string_view value) {
  const std::string_view text = Trim(value);
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end == text.data() || number < 0) return std::nullopt;
  std::string suffix(end, text.data() + text.size());
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::int64_t unit = kMiB;  // no suffix: spark.executor.memory's default unit
  if (!suffix.empty()) {
    const auto* found = std::find_if(kUnits.begin(), kUnits.end(),
                                     [&suffix](const auto& entry) { return entry.first == suffix; });
    if (found == kUnits.end()) return std::nullopt;  // "1.5g", "4 gigs"
    unit = found->second;
  }
  // Whole MiB, as the JVM gets it; computed without overflowing for large units.
  std::int64_t mib = 0;
  if (unit >= kMiB) {
    const std::int64_t per_unit = unit / kMiB;
    if (number > std::numeric_limits<std::int64_t>::max() / per_unit) return std::nullopt;
    mib = number * per_unit;
  } else {
    mib = number / (kMiB / unit);
  }
  if (mib > std::numeric_limits<std::int64_t>::max() / kMiB) return std::nullopt;
  return mib * kMiB;
}

}  // namespace sparktrace::listener::correlate
