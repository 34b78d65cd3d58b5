#pragma once
// Parsing of the human-friendly quantities our flags take: byte sizes ("256MiB", "1048576") and
// durations ("150s", "500ms", "2m", "1h30m"); their rendering; durations as fractional milliseconds.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace {

// Accepts a plain integer (bytes) or an integer with a unit: B, KiB, MiB, GiB, KB, MB, GB
// (powers of 1024 for the binary units, 1000 for the decimal ones). Rejects overflow.
Result<std::uint64_t> ParseByteSize(std::string_view text);

// Accepts one or more <integer><unit> groups, units ms, s, m, h, d ("1m30s", "7d"). A bare "0" is allowed.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// "256MiB", "1.5GiB"-like rendering for logs and help texts (exact when divisible).
std::string FormatByteSize(std::uint64_t bytes);

// "150s", "2m30s", "500ms".
std::string FormatDuration(std::chrono::milliseconds duration);

// A duration in milliseconds, fraction kept (0.25 for 250 µs): what the spans' and the access log's
// `_ms` fields record.
inline double FractionalMilliseconds(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

}  // namespace sparktrace
