#include "listener/events/connect_job_tag.h"

#include <cstddef>

namespace sparktrace::listener::events {
namespace {

constexpr std::string_view kOperationTagUserPrefix = "SparkConnect_OperationTag_User_";
constexpr std::string_view kSessionMarker = "_Session_";
constexpr std::string_view kOperationMarker = "_Operation_";

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "3.5.1" matches "3.5.1", "3.5.1-amzn-0", "3.5.1.2"; not "3.5.10".
bool IsVersion(std::string_view version, std::string_view release) {
  return version.starts_with(release) &&
         (version.size() == release.size() || !IsDigit(version[release.size()]));
}

}  // namespace

bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position ? text[i] != '-' : !IsHexDigit(text[i])) return false;
  }
  return true;
}

std::optional<ConnectJobTag> ParseConnectJobTag(std::string_view tag, ConnectJobTagOrder order) {
  if (!tag.starts_with(kOperationTagUserPrefix)) return std::nullopt;
  const std::string_view rest = tag.substr(kOperationTagUserPrefix.size());

  // The operation id ends the tag; the last marker is the right one even when a user id
  // contains "_Operation_", because the operation id (a UUID) cannot contain '_'.
  const std::size_t operation_marker = rest.rfind(kOperationMarker);
  if (operation_marker == std::string_view::npos) return std::nullopt;
  const std::string_view operation_id = rest.substr(operation_marker + kOperationMarker.size());
  if (operation_id.empty() || operation_id.find('_') != std::string_view::npos) return std::nullopt;

  // "<a>_Session_<b>": the session UUID cannot contain "_Session_", the user id can. So with the
  // user first, split at the last marker; with the session first (3.5.0/3.5.1), at the first.
  const std::string_view user_and_session = rest.substr(0, operation_marker);
  const std::size_t first_marker = user_and_session.find(kSessionMarker);
  if (first_marker == std::string_view::npos) return std::nullopt;
  const std::size_t last_marker = user_and_session.rfind(kSessionMarker);
  auto before = [&](std::size_t marker) { return user_and_session.substr(0, marker); };
  auto after = [&](std::size_t marker) { return user_and_session.substr(marker + kSessionMarker.size()); };

  if (order == ConnectJobTagOrder::kDetect) {
    // Session first only when that is the one reading that puts a UUID in the session's place;
    // ids that are not UUIDs (hand-written tags) are read in the order of Spark 3.5.2+.
    const bool session_first = !IsUuid(after(last_marker)) && IsUuid(before(first_marker));
    order = session_first ? ConnectJobTagOrder::kSessionFirst : ConnectJobTagOrder::kUserFirst;
  }

  ConnectJobTag parsed;
  parsed.operation_id = std::string(operation_id);
  if (order == ConnectJobTagOrder::kUserFirst) {
    parsed.user_id = std::string(before(last_marker));
    parsed.session_id = std::string(after(last_marker));
  } else {
    parsed.session_id = std::string(before(first_marker));
    parsed.user_id = std::string(after(first_marker));
    parsed.user_session_swapped = true;
  }
  if (parsed.user_id.empty() || parsed.session_id.empty()) return std::nullopt;
  return parsed;
}

ConnectJobTagOrder ConnectJobTagOrderForSparkVersion(std::string_view spark_version) {
  if (spark_version.empty() || !IsDigit(spark_version.front())) return ConnectJobTagOrder::kDetect;
  if (IsVersion(spark_version, "3.5.0") || IsVersion(spark_version, "3.5.1")) {
    return ConnectJobTagOrder::kSessionFirst;
  }
  return ConnectJobTagOrder::kUserFirst;
}

std::vector<std::string_view> SplitJobTags(std::string_view joined_tags) {
  std::vector<std::string_view> tags;
  while (!joined_tags.empty()) {
    const std::size_t comma = joined_tags.find(',');
    const std::string_view tag = joined_tags.substr(0, comma);
    if (!tag.empty()) tags.push_back(tag);
    if (comma == std::string_view::npos) break;
    joined_tags.remove_prefix(comma + 1);
  }
  return tags;
}

}  // namespace sparktrace::listener::events
