#include "tracing/store/task_index/attempt_parts.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <system_error>
#include <unordered_map>

#include "tracing/attribute_json.h"
#include "tracing/finding_event.h"
#include "tracing/nearest_owner.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::store {
namespace {

// The phase spans, named kSparkPhasePrefix and the phase's name (listener/correlate/phases.h).
std::optional<SparkPhase> PhaseOf(std::string_view span_name) {
  if (!span_name.starts_with(kSparkPhasePrefix)) return std::nullopt;
  return SparkPhaseNamed(span_name.substr(kSparkPhasePrefix.size()));
}

void AddFindings(const std::string& events_json, Part& part) {
  const auto events = nlohmann::ordered_json::parse(events_json, nullptr, /*allow_exceptions=*/false);
  if (!events.is_array()) return;
  for (const auto& event : events) {
    if (!event.is_object() || event.value("name", "") != kFindingEventName) continue;
    const auto attributes = event.find("attributes");
    if (attributes == event.end() || !attributes->is_object()) continue;
    const FindingEvent finding = DecodeFindingAttributes(AttributesFromJson(*attributes));
    // A finding a rules-file suppression muted is on the page, last, but not what the task list
    // counts or leads with (as it counts in neither the metrics nor the alerts).
    if (finding.suppressed) continue;
    // A stage's finding is on the stage and on its operation's lifecycle span: counted once, by key.
    if (finding.key.empty() || part.finding_keys.insert(finding.key).second) ++part.findings;
    const double impact = finding.impact_seconds;
    // At equal impact the specific finding wins over the summary that repeats it (as on the page).
    const bool summary = finding.IsSummary();
    const bool better =
        impact > part.top_impact || (impact == part.top_impact && part.top_is_summary && !summary);
    if (!better) continue;
    part.top_impact = impact;
    part.top_is_summary = summary;
    nlohmann::json top = {{"id", finding.id},
                          {"severity", finding.severity},
                          {"title", finding.title},
                          {"impact_seconds", impact}};
    part.top_finding = top.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace

void AddSpan(const IndexSpan& span, Part& part) {
  part.start = std::min(part.start, span.start);
  part.end = std::max(part.end, span.end);
  ++part.spans;
  if (span.name == kSparkConnectOperationSpanName) {
    ++part.operations;
    if (span.error) ++part.failed_operations;
  } else if (span.name == tracing::kSparkJobSpanName && span.error) {
    ++part.failed_jobs;
  }
  if (span.open) ++part.open;
  if (span.phase_duration_ms) {
    if (auto phase = PhaseOf(span.name))
      part.phase_ms[static_cast<std::size_t>(*phase)] += *span.phase_duration_ms;
  }
  if (!span.finding_events.empty()) AddFindings(span.finding_events, part);
  if (part.app_id.empty()) part.app_id = span.app_id;
}

bool ReplaceInPart(const IndexSpan& before, const IndexSpan& now, Part& part) {
  std::uint64_t start = part.start;
  if (now.start < part.start) {
    start = now.start;
  } else if (before.start == part.start && now.start != before.start) {
    return false;  // the earliest start moves later: which span holds it now is unknown
  }
  std::uint64_t end = part.end;
  if (now.end > part.end) {
    end = now.end;
  } else if (before.end == part.end && now.end != before.end) {
    return false;
  }
  part.start = start;
  part.end = end;
  const auto change = [](bool after, bool was) { return std::int64_t{after} - std::int64_t{was}; };
  if (now.name == kSparkConnectOperationSpanName) {
    part.failed_operations += change(now.error, before.error);
  } else if (now.name == tracing::kSparkJobSpanName) {
    part.failed_jobs += change(now.error, before.error);
  }
  part.open += change(now.open, before.open);
  if (auto phase = PhaseOf(now.name)) {
    part.phase_ms[static_cast<std::size_t>(*phase)] +=
        now.phase_duration_ms.value_or(0) - before.phase_duration_ms.value_or(0);
  }
  return true;
}

namespace {

// An integer attribute, also when a producer forwarded it as text or as a double (as SQLite's CAST
// and PostgreSQL's parse of the stored JSON take them).
std::optional<std::int64_t> IntegerOf(const std::vector<Attribute>& attributes, std::string_view key) {
  for (const Attribute& attribute : attributes) {
    if (attribute.key != key) continue;
    if (const auto* number = std::get_if<std::int64_t>(&attribute.value)) return *number;
    if (const auto* real = std::get_if<double>(&attribute.value)) {
      if (std::isfinite(*real)) return static_cast<std::int64_t>(*real);
      return std::nullopt;
    }
    if (const auto* text = std::get_if<std::string>(&attribute.value)) {
      std::int64_t parsed = 0;
      auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), parsed);
      if (ec == std::errc() && end == text->data() + text->size()) return parsed;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::string TextOf(const std::vector<Attribute>& attributes, std::string_view key) {
  const std::string* text = AttributeValueOf<std::string>(attributes, key);
  return text != nullptr ? *text : std::string();
}

}  // namespace

IndexSpan IndexSpanOf(const Span& span, const StoredSpanRow& row) {
  IndexSpan index;
  index.span_id = row.span_id;
  index.parent_id = row.parent_span_id.value_or("");
  index.name = span.name;
  index.start = span.start_time_unix_nano;
  index.end = span.end_time_unix_nano;
  index.error = span.status_code == StatusCode::kError;
  // The identity columns as stored (tracing/store/span_rows/stored_span.h), as the stored-row path reads
  // them.
  if (row.dag_id != nullptr && row.task_id != nullptr) {
    TaskAttemptKey key;
    key.dag_id = *row.dag_id;
    key.task_id = *row.task_id;
    if (row.run_id != nullptr) key.run_id = *row.run_id;
    if (row.try_number) key.try_number = *row.try_number;
    key.map_index = IntegerOf(span.attributes, tracing::kAirflowMapIndexKey).value_or(-1);
    index.identity = std::move(key);
  }
  if (span.name.starts_with(tracing::kSparkPhasePrefix))
    index.phase_duration_ms = IntegerOf(span.attributes, tracing::kSparkPhaseDurationMsKey);
  if (span.name == tracing::kSparkJobSpanName)
    index.open = TextOf(span.attributes, tracing::kSparkJobStatusKey) == "running";
  // The proxy's live snapshot of a Spark 4 operation still running (docs/tracing.md, "Live progress").
  if (span.name == tracing::kSparkConnectOperationSpanName)
    index.open = TextOf(span.attributes, tracing::kSparkConnectOperationStateKey) ==
                 tracing::kSparkConnectOperationRunning;
  if (span.name == tracing::kSparkApplicationSpanName) {
    index.open = TextOf(span.attributes, tracing::kSparkAppStatusKey) == "running";
    index.app_name = TextOf(span.attributes, tracing::kSparkAppNameKey);
  }
  if (span.name == tracing::kSparkApplicationSpanName ||
      span.name == tracing::kSparkConnectLifecycleSpanName) {
    index.app_id = TextOf(span.attributes, tracing::kSparkAppIdKey);
  }
  if (row.events_json.find(tracing::kFindingEventName) != std::string::npos)
    index.finding_events = row.events_json;
  return index;
}

Part PartWithoutIdentity(const std::vector<IndexSpan>& spans) {
  Part part;
  const IndexSpan* root = nullptr;
  for (const IndexSpan& span : spans) {
    AddSpan(span, part);
    if (span.parent_id.empty() && (root == nullptr || span.start < root->start)) root = &span;
    if (part.name.empty() && !span.app_name.empty()) part.name = span.app_name;
  }
  if (part.name.empty() && root != nullptr) part.name = root->name;
  return part;
}

std::map<PartKey, Part> PartsOfTrace(const std::string& trace_id, const std::vector<IndexSpan>& spans) {
  const bool any_identity =
      std::any_of(spans.begin(), spans.end(), [](const IndexSpan& s) { return s.identity; });

  std::map<PartKey, Part> parts;
  if (!any_identity) {
    parts.emplace(PartKey{false, TaskAttemptKey{"", "", "", 0, -1}, trace_id}, PartWithoutIdentity(spans));
    return parts;
  }
  // Only spans under an attempt's span count: each is owned by its nearest ancestor with an identity.
  std::unordered_map<std::string_view, std::size_t> by_id;
  by_id.reserve(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) by_id.emplace(spans[i].span_id, i);
  const auto owners = NearestOwners(
      spans.size(),
      [&](std::size_t i) -> std::optional<std::size_t> {
        const auto parent = by_id.find(spans[i].parent_id);
        if (parent == by_id.end()) return std::nullopt;
        return parent->second;
      },
      [&](std::size_t i) { return spans[i].identity.has_value(); });
  // Spans of one owner mostly come together: its part is looked up once for them (a key is three
  // strings to copy and compare).
  std::optional<std::size_t> last_owner;
  Part* last_part = nullptr;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!owners[i]) continue;  // e.g. a session-wide call without identity in an Airflow trace
    if (owners[i] != last_owner) {
      const TaskAttemptKey& owner = *spans[*owners[i]].identity;
      last_part = &parts[PartKey{true, owner, ""}];
      if (last_part->name.empty()) last_part->name = owner.dag_id + "." + owner.task_id;
      last_owner = owners[i];
    }
    AddSpan(spans[i], *last_part);
  }
  return parts;
}

std::string_view AttemptState(std::int64_t open_count, std::int64_t error_count) {
  if (open_count > 0) return "running";
  return error_count > 0 ? "failed" : "success";
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (begin <= text.size() && !text.empty()) {
    const std::size_t comma = text.find(',', begin);
    items.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return items;
}

std::optional<PageStartBound> PageStartBoundOf(const TaskAttemptFilter& filter) {
  constexpr auto kMaxOffset = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  if (filter.limit == 0 || filter.offset > kMaxOffset - filter.limit) return std::nullopt;
  const auto edge_offset = static_cast<std::int64_t>(filter.offset + filter.limit - 1);
  switch (filter.order) {
    case TaskAttemptOrder::kNewestFirst:
      return PageStartBound{"DESC", ">=", edge_offset};
    case TaskAttemptOrder::kOldestFirst:
      return PageStartBound{"ASC", "<=", edge_offset};
    case TaskAttemptOrder::kCostDescending:
    case TaskAttemptOrder::kCostAscending:
      break;
  }
  return std::nullopt;
}

std::string TaskAttemptOrderSql(TaskAttemptOrder order) {
  constexpr std::string_view kNewest = "start_unix_nano DESC, run_id DESC, try_number DESC";
  // IS NULL is 0 or 1 in SQLite and false or true in PostgreSQL: either way the rows with a value sort
  // first, whichever the direction of the value itself.
  constexpr std::string_view kCost =
      "(settled_at IS NULL OR state = 'running'), (money IS NULL), money {0}, (core_seconds IS NULL), "
      "core_seconds {0}, {1}";
  switch (order) {
    case TaskAttemptOrder::kOldestFirst:
      return "start_unix_nano ASC, run_id ASC, try_number ASC";
    case TaskAttemptOrder::kCostDescending:
      return fmt::format(kCost, "DESC", kNewest);
    case TaskAttemptOrder::kCostAscending:
      return fmt::format(kCost, "ASC", kNewest);
    case TaskAttemptOrder::kNewestFirst:
      break;
  }
  return std::string(kNewest);
}

}  // namespace sparktrace::tracing::store
