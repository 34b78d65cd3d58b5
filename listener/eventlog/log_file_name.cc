#include "listener/eventlog/log_file_name.h"

#include <charconv>

namespace sparktrace::listener::eventlog {
namespace {

constexpr std::string_view kCompactedSuffix = ".compact";
constexpr std::string_view kEventsPrefix = "events_";
constexpr std::string_view kAppStatusPrefix = "appstatus_";

bool StripSuffix(std::string_view& text, std::string_view suffix) {
  if (!text.ends_with(suffix)) return false;
  text.remove_suffix(suffix.size());
  return true;
}

bool StripPrefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::optional<SingleFileLogName> ParseSingleFileLogName(std::string_view file_name) {
  SingleFileLogName parsed;
  std::string_view rest = file_name;
  parsed.in_progress = StripSuffix(rest, kInProgressSuffix);
  parsed.final_name = std::string(rest);
  // Spark's reader takes the codec from the last dot-separated part, so do we.
  const std::size_t dot = rest.rfind('.');
  if (dot != std::string_view::npos) {
    parsed.codec_suffix = std::string(rest.substr(dot + 1));
    rest = rest.substr(0, dot);
  }
  if (rest.empty()) return std::nullopt;
  parsed.base = std::string(rest);
  parsed.codec = CodecFromSuffix(parsed.codec_suffix);
  return parsed;
}

std::optional<std::string> ParseRollingDirectoryName(std::string_view directory_name) {
  std::string_view rest = directory_name;
  if (!StripPrefix(rest, kRollingDirectoryPrefix) || rest.empty()) return std::nullopt;
  return std::string(rest);
}

std::optional<RollingEventFileName> ParseRollingEventFileName(std::string_view file_name,
                                                              std::string_view base) {
  RollingEventFileName parsed;
  std::string_view rest = file_name;
  if (!StripPrefix(rest, kEventsPrefix)) return std::nullopt;
  parsed.compacted = StripSuffix(rest, kCompactedSuffix);
  const char* const digits_end = rest.data() + rest.size();
  const auto [after_index, error] = std::from_chars(rest.data(), digits_end, parsed.index);
  if (error != std::errc() || after_index == rest.data() || parsed.index == 0) return std::nullopt;
  rest.remove_prefix(static_cast<std::size_t>(after_index - rest.data()));
  if (!StripPrefix(rest, "_") || !StripPrefix(rest, base)) return std::nullopt;
  if (!rest.empty()) {
    if (!StripPrefix(rest, ".") || rest.empty()) return std::nullopt;
    parsed.codec_suffix = std::string(rest);
  }
  parsed.codec = CodecFromSuffix(parsed.codec_suffix);
  return parsed;
}

std::optional<AppStatusMarker> ParseAppStatusFileName(std::string_view file_name, std::string_view base) {
  std::string_view rest = file_name;
  const bool in_progress = StripSuffix(rest, kInProgressSuffix);
  if (!StripPrefix(rest, kAppStatusPrefix) || rest != base) return std::nullopt;
  return in_progress ? AppStatusMarker::kInProgress : AppStatusMarker::kComplete;
}

}  // namespace sparktrace::listener::eventlog
