#include "tracing/airflow_identity.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <ostream>

#include "common/text_trim.h"
#include "tracing/sha256.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing {
namespace {

static_assert(kMaxAirflowInteger == std::numeric_limits<std::int32_t>::max());

// Plain decimal digits only: no sign, no spaces, no hex. Leading zeros are tolerated ("02" is 2);
// the canonical key uses the number, so "02" and "2" are the same attempt.
std::optional<std::int64_t> ParseNonNegative(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.front() < '0' || text.front() > '9') return std::nullopt;
  if (value > kMaxAirflowInteger) return std::nullopt;
  return value;
}

void AppendLengthPrefixed(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += '\n';
}

}  // namespace

// Dag and task ids: Airflow allows [A-Za-z0-9_.-]; we are more lenient (any printable ASCII but
// space) so that a future Airflow rule change does not silently drop traces, while still keeping
// control bytes and non-UTF-8 out of span attributes and logs.
bool IsValidAirflowId(std::string_view id) {
  if (id.empty() || id.size() > kMaxAirflowIdLength) return false;
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

// Run ids are user-settable in Airflow ("manual__2024-01-01T00:00:00+00:00", or anything passed to
// `dags trigger -r`), so inner spaces are allowed.
bool IsValidAirflowRunId(std::string_view id) {
  if (id.size() > kMaxAirflowIdLength) return false;
  for (char c : id) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

std::string_view AirflowIdentityErrorName(AirflowIdentityError error) {
  switch (error) {
    case AirflowIdentityError::kIncomplete:
      return "incomplete";
    case AirflowIdentityError::kDuplicateHeader:
      return "duplicate_header";
    case AirflowIdentityError::kBadDagId:
      return "bad_dag_id";
    case AirflowIdentityError::kBadTaskId:
      return "bad_task_id";
    case AirflowIdentityError::kBadRunId:
      return "bad_run_id";
    case AirflowIdentityError::kBadTryNumber:
      return "bad_try_number";
    case AirflowIdentityError::kBadMapIndex:
      return "bad_map_index";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, AirflowIdentityError error) {
  return out << AirflowIdentityErrorName(error);
}

AirflowIdentityParse ParseAirflowIdentity(MetadataView metadata) {
  // Index order: dag, task, run, try, map.
  static constexpr std::array<std::string_view, 5> kHeaders = {kAirflowDagIdHeader, kAirflowTaskIdHeader,
                                                               kAirflowRunIdHeader, kAirflowTryNumberHeader,
                                                               kAirflowMapIndexHeader};
  std::array<std::optional<std::string_view>, 5> values;
  bool any_header = false;
  for (const auto& [key, raw_value] : metadata) {
    for (std::size_t i = 0; i < kHeaders.size(); ++i) {
      if (key != kHeaders[i]) continue;
      any_header = true;
      const std::string_view value = TrimBlanks(raw_value);
      if (value.empty()) break;  // "x-airflow-run-id=" in a URL template with nothing filled in
      if (values[i].has_value()) return {std::nullopt, AirflowIdentityError::kDuplicateHeader};
      values[i] = value;
      break;
    }
  }
  if (!any_header) return {};
  const auto& [dag_id, task_id, run_id, try_number, map_index] = values;
  if (!dag_id || !task_id) return {std::nullopt, AirflowIdentityError::kIncomplete};
  if (!IsValidAirflowId(*dag_id)) return {std::nullopt, AirflowIdentityError::kBadDagId};
  if (!IsValidAirflowId(*task_id)) return {std::nullopt, AirflowIdentityError::kBadTaskId};
  if (run_id && !IsValidAirflowRunId(*run_id)) return {std::nullopt, AirflowIdentityError::kBadRunId};

  AirflowIdentity identity;
  identity.dag_id = std::string(*dag_id);
  identity.task_id = std::string(*task_id);
  if (run_id) identity.run_id = std::string(*run_id);
  if (try_number) {
    const std::optional<std::int64_t> parsed = ParseNonNegative(*try_number);
    if (!parsed) return {std::nullopt, AirflowIdentityError::kBadTryNumber};
    identity.try_number = *parsed;
  }
  if (map_index) {
    const std::optional<std::int64_t> parsed =
        (*map_index == "-1") ? std::optional<std::int64_t>(-1) : ParseNonNegative(*map_index);
    if (!parsed) return {std::nullopt, AirflowIdentityError::kBadMapIndex};
    identity.map_index = *parsed;
  }
  return {std::move(identity), std::nullopt};
}

std::string CanonicalTaskAttemptKey(const AirflowIdentity& identity) {
  std::string key = "airflow-task-attempt/v1\n";
  AppendLengthPrefixed(key, identity.dag_id);
  AppendLengthPrefixed(key, identity.task_id);
  AppendLengthPrefixed(key, identity.run_id);
  key += std::to_string(identity.try_number);
  key += '\n';
  key += std::to_string(identity.map_index);
  key += '\n';
  return key;
}

TraceId DeriveTraceId(const AirflowIdentity& identity) {
  const Sha256Digest digest = Sha256::Hash(CanonicalTaskAttemptKey(identity));
  TraceId id;
  std::copy_n(digest.begin(), id.size(), id.begin());
  if (!IsValid(id)) id.back() = 1;
  return id;
}

SpanId DeriveTaskSpanId(const AirflowIdentity& identity) {
  const Sha256Digest digest = Sha256::Hash(CanonicalTaskAttemptKey(identity));
  SpanId id;
  std::copy_n(digest.begin() + 16, id.size(), id.begin());
  if (!IsValid(id)) id.back() = 1;
  return id;
}

std::vector<Attribute> ToAttributes(const AirflowIdentity& identity) {
  std::vector<Attribute> attributes;
  attributes.reserve(5);
  attributes.push_back({std::string(tracing::kAirflowDagIdKey), identity.dag_id});
  attributes.push_back({std::string(tracing::kAirflowTaskIdKey), identity.task_id});
  if (!identity.run_id.empty())
    attributes.push_back({std::string(tracing::kAirflowRunIdKey), identity.run_id});
  attributes.push_back({std::string(tracing::kAirflowTryNumberKey), identity.try_number});
  attributes.push_back({std::string(tracing::kAirflowMapIndexKey), identity.map_index});
  return attributes;
}

}  // namespace sparktrace::tracing
