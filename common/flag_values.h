#pragma once
// Typed values of parsed flags, each checked against its range, for every command's configuration:
// a malformed or out-of-range value is an error that names its flag (`main` prints it, exit 2).

#include <chrono>
#include <cstdint>
#include <string_view>

#include "common/flags.h"
#include "common/result.h"

namespace sparktrace {

// A byte size ("256MiB", "1048576") within [min, max]:
// "--stream-window: must be between 16KiB and 1GiB, got 2GiB".
Result<std::uint64_t> ByteSizeFlag(const ParsedFlags& flags, std::string_view name, std::uint64_t min,
                                   std::uint64_t max);

// A whole number within [min, max]: "--max-connections: '0' is not a number from 1 to 10000000".
Result<std::int64_t> IntegerFlag(const ParsedFlags& flags, std::string_view name, std::int64_t min,
                                 std::int64_t max);

// A duration ("500ms", "1h30m", a bare "0") within [min, max]: "--idle-timeout: must be between 1ms
// and 24h, got 0".
Result<std::chrono::milliseconds> DurationFlag(const ParsedFlags& flags, std::string_view name,
                                               std::chrono::milliseconds min = std::chrono::milliseconds::zero(),
                                               std::chrono::milliseconds max = std::chrono::milliseconds::max());

}  // namespace sparktrace
