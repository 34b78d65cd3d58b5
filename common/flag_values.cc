#include "common/flag_values.h"

#include <charconv>
#include <string>

#include "common/units.h"

namespace sparktrace {

Result<std::uint64_t> ByteSizeFlag(const ParsedFlags& flags, std::string_view name, std::uint64_t min,
                                   std::uint64_t max) {
  auto bytes = ParseByteSize(flags.Get(name));
  if (!bytes.ok()) return FlagError(name, bytes.error());
  if (*bytes < min || *bytes > max) {
    return InvalidArgument("--" + std::string(name) + ": must be between " + FormatByteSize(min) + " and " +
                           FormatByteSize(max) + ", got " + flags.Get(name));
  }
  return *bytes;
}

Result<std::int64_t> IntegerFlag(const ParsedFlags& flags, std::string_view name, std::int64_t min,
                                 std::int64_t max) {
  const std::string& text = flags.Get(name);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return InvalidArgument("--" + std::string(name) + ": '" + text + "' is not a number from " + std::to_string(min) +
                           " to " + std::to_string(max));
  }
  return value;
}

Result<std::chrono::milliseconds> DurationFlag(const ParsedFlags& flags, std::string_view name,
                                               std::chrono::milliseconds min, std::chrono::milliseconds max) {
  auto duration = ParseDuration(flags.Get(name));
  if (!duration.ok()) return FlagError(name, duration.error());
  if (*duration < min || *duration > max) {
    const std::string range = max == std::chrono::milliseconds::max()
                                  ? "at least " + FormatDuration(min)
                                  : "between " + FormatDuration(min) + " and " + FormatDuration(max);
    return InvalidArgument("--" + std::string(name) + ": must be " + range + ", got " + flags.Get(name));
  }
  return *duration;
}

}  // namespace sparktrace
