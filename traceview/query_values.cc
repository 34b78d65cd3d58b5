#include "traceview/query_values.h"

#include <spdlog/fmt/fmt.h>

#include <array>
#include <charconv>
#include <map>
#include <utility>

#include "common/url_codec.h"
#include "common/utf8.h"

namespace sparktrace::traceview {
namespace {

using tracing::store::TaskAttemptOrder;

// Plain decimal digits only (no sign, no spaces): what the page and the API's links write. Too many
// digits for 64 bits is nullopt, never a wrapped value.
std::optional<std::int64_t> ParseDigits(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> ParseInRange(std::string_view text, std::int64_t low, std::int64_t high) {
  const auto value = ParseDigits(text);
  if (!value || *value < low || *value > high) return std::nullopt;
  return value;
}

// The search text (`q`): a trace id, a Spark Connect operation id or a Spark application id, all
// printable ASCII; the run id rule (spaces allowed) is the most lenient that still keeps bytes a
// store would refuse away.
bool IsValidSearch(std::string_view text) { return !text.empty() && tracing::IsValidAirflowRunId(text); }

std::optional<TaskAttemptOrder> OrderNamed(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, TaskAttemptOrder>, 4> kOrders = {{
      {"-start", TaskAttemptOrder::kNewestFirst},
      {"start", TaskAttemptOrder::kOldestFirst},
      {"-cost", TaskAttemptOrder::kCostDescending},
      {"cost", TaskAttemptOrder::kCostAscending},
  }};
  for (const auto& [text, order] : kOrders) {
    if (text == name) return order;
  }
  return std::nullopt;
}

using Query = std::map<std::string, std::string, std::less<>>;

std::optional<std::uint8_t> ParseHexByte(std::string_view two) {
  std::uint8_t byte = 0;
  const auto [end, error] = std::from_chars(two.data(), two.data() + two.size(), byte, 16);
  if (error != std::errc() || end != two.data() + two.size()) return std::nullopt;
  return byte;
}

// A parameter's value; nullopt when it is absent or empty (an empty form field).
std::optional<std::string_view> ValueOf(const Query& query, std::string_view name) {
  const auto found = query.find(name);
  if (found == query.end() || found->second.empty()) return std::nullopt;
  return std::string_view(found->second);
}

Result<void> ReadIdentityFilters(const Query& query, tracing::store::TaskAttemptFilter& filter) {
  for (const auto& [name, target] : {std::pair{"dag", &filter.dag_id}, {"task", &filter.task_id}}) {
    const auto value = ValueOf(query, name);
    if (!value) continue;
    if (!tracing::IsValidAirflowId(*value)) {
      return InvalidArgument(fmt::format("{} must be 1 to {} printable ASCII characters without spaces", name,
                                         tracing::kMaxAirflowIdLength));
    }
    *target = std::string(*value);
  }
  if (const auto state = ValueOf(query, "state")) {
    if (*state != "running" && *state != "success" && *state != "failed") {
      return InvalidArgument("state must be running, success or failed");
    }
    filter.state = std::string(*state);
  }
  return {};
}

Result<void> ReadTimeBounds(const Query& query, tracing::store::TaskAttemptFilter& filter) {
  for (const auto& [name, target] :
       {std::pair{"since", &filter.since_unix_nano}, {"until", &filter.until_unix_nano}}) {
    const auto value = ValueOf(query, name);
    if (!value) continue;
    const auto ms = ParseInRange(*value, 0, kMaxEpochMs);
    if (!ms)
      return InvalidArgument(fmt::format("{} must be epoch milliseconds from 0 to {}", name, kMaxEpochMs));
    *target = static_cast<std::uint64_t>(*ms) * 1'000'000ULL;  // cannot overflow: *ms <= kMaxEpochMs
  }
  return {};
}

Result<void> ReadPaging(const Query& query, tracing::store::TaskAttemptFilter& filter) {
  if (const auto value = ValueOf(query, "limit")) {
    const auto limit = ParseInRange(*value, 1, kMaxTaskListLimit);
    if (!limit) return InvalidArgument(fmt::format("limit must be 1 to {}", kMaxTaskListLimit));
    filter.limit = static_cast<std::size_t>(*limit);
  }
  if (const auto value = ValueOf(query, "offset")) {
    const auto offset = ParseDigits(*value);
    if (!offset) return InvalidArgument("offset must be an integer from 0 to 9223372036854775807");
    filter.offset = static_cast<std::size_t>(*offset);
  }
  if (const auto value = ValueOf(query, "sort")) {
    const auto order = OrderNamed(*value);
    if (!order) return InvalidArgument("sort must be -start, start, -cost or cost");
    filter.order = *order;
  }
  return {};
}

}  // namespace

bool IsUtf8Text(std::string_view text, std::size_t& characters) {
  characters = 0;
  while (!text.empty()) {
    const std::size_t length = Utf8SequenceLength(text);
    if (length == 0 || text.front() == '\0') return false;
    text.remove_prefix(length);
    ++characters;
  }
  return true;
}

Result<TaskListQuery> ParseTaskListQuery(std::string_view raw) {
  const Query query = ParseQuery(raw);
  TaskListQuery parsed;
  if (auto read = ReadIdentityFilters(query, parsed.filter); !read.ok()) return read.error();
  if (auto read = ReadTimeBounds(query, parsed.filter); !read.ok()) return read.error();
  if (auto read = ReadPaging(query, parsed.filter); !read.ok()) return read.error();
  if (const auto q = ValueOf(query, "q")) {
    if (!IsValidSearch(*q)) {
      return InvalidArgument(
          fmt::format("q must be 1 to {} printable ASCII characters", tracing::kMaxAirflowIdLength));
    }
    parsed.search = std::string(*q);
  }
  return parsed;
}

Result<void> CheckAddressId(std::string_view name, std::string_view value) {
  std::size_t characters = 0;
  if (!IsUtf8Text(value, characters) || characters > kMaxAddressIdCharacters) {
    return InvalidArgument(
        fmt::format("{} must be UTF-8 text of at most {} characters", name, kMaxAddressIdCharacters));
  }
  return {};
}

Result<std::int64_t> ParseTryNumber(std::string_view name, std::string_view text) {
  const auto value = ParseInRange(text, 0, tracing::kMaxAirflowInteger);
  if (!value)
    return InvalidArgument(
        fmt::format("{} must be an integer from 0 to {}", name, tracing::kMaxAirflowInteger));
  return *value;
}

Result<tracing::SpanId> ParseSqlPlanQuery(std::string_view raw) {
  const Query query = ParseQuery(raw);
  const auto value = ValueOf(query, "span");
  if (!value) return InvalidArgument("span is required: the span id of a spark.sql.execution span");
  tracing::SpanId span_id{};
  if (value->size() != 2 * span_id.size()) return InvalidArgument("span must be a span id of 16 hex digits");
  for (std::size_t i = 0; i < span_id.size(); ++i) {
    const auto byte = ParseHexByte(value->substr(2 * i, 2));
    if (!byte) return InvalidArgument("span must be a span id of 16 hex digits");
    span_id[i] = *byte;
  }
  return span_id;
}

Result<std::int64_t> ParseMapIndex(std::string_view name, std::string_view text) {
  if (text == "-1") return std::int64_t{-1};
  const auto value = ParseInRange(text, 0, tracing::kMaxAirflowInteger);
  if (!value) {
    return InvalidArgument(
        fmt::format("{} must be -1 or an integer from 0 to {}", name, tracing::kMaxAirflowInteger));
  }
  return *value;
}

}  // namespace sparktrace::traceview
