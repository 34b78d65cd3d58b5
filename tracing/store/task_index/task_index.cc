#include "tracing/store/task_index/task_index.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

namespace sparktrace::tracing::store::task_index {
namespace {

// The wall clock of this writer, as the rows' indexed_at (unix nanoseconds).
std::int64_t NowUnixNano() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<void> Refresh(TaskIndexDialect& dialect, const std::vector<std::string>& trace_ids) {
  if (trace_ids.empty()) return {};
  auto old_keys = dialect.KeysOfTraces(trace_ids);
  if (!old_keys.ok()) return old_keys.error();
  std::set<PartKey> keys = std::move(old_keys).value();
  if (auto deleted = dialect.DeleteParts(trace_ids); !deleted.ok()) return deleted.error();
  auto spans = dialect.ReadSpans(trace_ids);
  if (!spans.ok()) return spans.error();
  PartsByTrace parts_by_trace;
  std::map<std::string, std::optional<std::string>> awaited;
  for (const auto& [trace_id, trace_spans] : *spans) {
    auto parts = PartsOfTrace(trace_id, trace_spans);
    for (const auto& [key, part] : parts) keys.insert(key);
    parts_by_trace.emplace(trace_id, std::move(parts));
    awaited.emplace(trace_id, AwaitedParentsText(AwaitedParentsOf(trace_spans)));
  }
  if (auto inserted = dialect.InsertParts(parts_by_trace); !inserted.ok()) return inserted.error();
  if (auto written = dialect.WriteAwaitedParents(awaited); !written.ok()) return written.error();
  return dialect.AddUp(keys, NowUnixNano());
}

Result<void> Update(TaskIndexDialect& dialect, const BatchOfTraces& batch) {
  if (batch.empty()) return {};
  std::vector<std::string> trace_ids;
  trace_ids.reserve(batch.size());
  for (const auto& [trace_id, spans] : batch) trace_ids.push_back(trace_id);
  auto stored = dialect.ReadTraceIndexes(trace_ids);
  if (!stored.ok()) return stored.error();

  std::vector<std::string> recompute;
  std::vector<std::string> incremented;
  PartsByTrace parts_by_trace;
  std::map<std::string, std::optional<std::string>> awaited;
  PartChanges changes;
  for (const auto& [trace_id, spans] : batch) {
    const auto index = stored->find(trace_id);
    if (index == stored->end()) {
      recompute.push_back(trace_id);
      continue;
    }
    const std::string& trace = trace_id;  // a structured binding cannot be captured before C++20's clang 16
    const StoredSpanById stored_span = [&dialect, &trace](const std::string& span_id) {
      return dialect.ReadSpan(trace, span_id);
    };
    auto next = IncrementTrace(index->second, spans, stored_span);
    if (!next.ok()) return next.error();
    if (!*next) {
      recompute.push_back(trace_id);
      continue;
    }
    TraceIncrement& increment = **next;
    if (increment.awaited != index->second.awaited)
      awaited.emplace(trace_id, AwaitedParentsText(increment.awaited));
    if (increment.changed.empty()) continue;  // e.g. spans in no attempt
    for (const PartKey& key : increment.changed) {
      const auto before = index->second.parts.find(key);
      changes[key].push_back(PartChange{
          trace_id, before == index->second.parts.end() ? std::nullopt : std::optional<Part>(before->second),
          increment.parts.at(key)});
    }
    incremented.push_back(trace_id);
    parts_by_trace.emplace(trace_id, std::move(increment.parts));
  }
  if (!incremented.empty()) {
    if (auto deleted = dialect.DeleteParts(incremented); !deleted.ok()) return deleted.error();
    if (auto inserted = dialect.InsertParts(parts_by_trace); !inserted.ok()) return inserted.error();
    if (auto added = dialect.AddUpChanges(changes, NowUnixNano()); !added.ok()) return added.error();
  }
  if (auto written = dialect.WriteAwaitedParents(awaited); !written.ok()) return written.error();
  return Refresh(dialect, recompute);
}

Result<void> AddNewTraceParts(TaskIndexDialect& dialect, const PartsByTrace& parts_by_trace) {
  if (parts_by_trace.empty()) return {};
  PartChanges airflow_changes;  // their attempts may have parts in other traces: added to their rows
  std::vector<WholeAttemptPart> whole;
  for (const auto& [trace_id, parts] : parts_by_trace) {
    for (const auto& [key, part] : parts) {
      if (key.airflow) {
        airflow_changes[key].push_back(PartChange{trace_id, std::nullopt, part});
      } else {
        whole.push_back(WholeAttemptPart{&key, &trace_id, &part});
      }
    }
  }
  const std::int64_t now = NowUnixNano();
  if (auto inserted = dialect.InsertParts(parts_by_trace); !inserted.ok()) return inserted.error();
  if (!whole.empty()) {
    if (auto inserted = dialect.InsertWholeAttempts(whole, now); !inserted.ok()) return inserted.error();
  }
  return dialect.AddUpChanges(airflow_changes, now);
}

Result<void> Forget(TaskIndexDialect& dialect, const std::vector<std::string>& trace_ids) {
  if (trace_ids.empty()) return {};
  auto keys = dialect.KeysOfTraces(trace_ids);
  if (!keys.ok()) return keys.error();
  if (auto deleted = dialect.DeleteParts(trace_ids); !deleted.ok()) return deleted.error();
  return dialect.AddUp(*keys, NowUnixNano());
}

}  // namespace sparktrace::tracing::store::task_index

namespace sparktrace::tracing::store {

ChangesByIdentity SplitByIdentity(const PartChanges& changes) {
  ChangesByIdentity split;
  for (const auto& [key, part_changes] : changes) {
    if (key.airflow) {
      split.airflow.emplace(key, part_changes);
    } else {
      split.without_identity.insert(key);
    }
  }
  return split;
}

}  // namespace sparktrace::tracing::store

namespace sparktrace::tracing::store::task_index {

PartSums SumsOf(const Part& part) {
  PartSums sums;
  sums.start_unix_nano = static_cast<std::int64_t>(part.start == UINT64_MAX ? 0 : part.start);
  sums.end_unix_nano = static_cast<std::int64_t>(part.end);
  sums.span_count = part.spans;
  sums.error_count = part.Errors();
  sums.open_count = part.open;
  sums.phase_ms = part.phase_ms;
  sums.finding_count = part.findings;
  if (!part.top_finding.empty()) sums.top_finding = part.top_finding;
  return sums;
}

std::optional<NewAttemptRow> RowOfNewParts(const std::vector<PartChange>& changes) {
  if (changes.empty()) return std::nullopt;
  NewAttemptRow row;
  double top_impact = 0;
  for (std::size_t at = 0; at < changes.size(); ++at) {
    const PartChange& change = changes[at];
    if (change.before) return std::nullopt;
    const Part& part = change.after;
    const PartSums sums = SumsOf(part);
    if (at == 0) {
      row.name = part.name;
      row.sums = sums;
      top_impact = part.top_impact;
      continue;
    }
    row.name = std::max(row.name, std::string_view(part.name));
    row.sums.start_unix_nano = std::min(row.sums.start_unix_nano, sums.start_unix_nano);
    row.sums.end_unix_nano = std::max(row.sums.end_unix_nano, sums.end_unix_nano);
    row.sums.span_count += sums.span_count;
    row.sums.error_count += sums.error_count;
    row.sums.open_count += sums.open_count;
    for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
      row.sums.phase_ms[phase] += sums.phase_ms[phase];
    row.sums.finding_count += sums.finding_count;
    // The first of the greatest impact, as the parts read in key (trace id) order.
    if (sums.top_finding && (!row.sums.top_finding || part.top_impact > top_impact)) {
      row.sums.top_finding = sums.top_finding;
      top_impact = part.top_impact;
    }
  }
  return row;
}

bool HasAnythingToSettle(const PartKey& key, const Part& part) { return key.airflow || !part.app_id.empty(); }

bool SummaryMayHoldAttempt(const PartKey& key, const Part& part) {
  return !key.airflow && part.app_id.empty() && part.open == 0 && part.findings == 0 &&
         part.top_finding.empty() &&
         std::all_of(part.phase_ms.begin(), part.phase_ms.end(), [](std::int64_t ms) { return ms == 0; });
}

bool SummaryHoldsAttempt(const PartKey& key, const Part& part, const TraceSummaryRow& summary) {
  return SummaryMayHoldAttempt(key, part) && part.name == summary.root_name &&
         part.spans == summary.span_count && part.Errors() == summary.error_count &&
         part.start == static_cast<std::uint64_t>(summary.start_unix_nano) &&
         part.end == static_cast<std::uint64_t>(summary.end_unix_nano);
}

bool NewTraceSummaryHoldsAttempt(const std::vector<IndexSpan>& spans, const TraceSummaryRow& summary) {
  // A trace with an identity has no attempt without one; PartsOfTrace is then not needed.
  if (std::any_of(spans.begin(), spans.end(),
                  [](const IndexSpan& span) { return span.identity.has_value(); }))
    return false;
  // Its one part, without building PartsOfTrace's map for it (the checks read the key's identity only).
  static const PartKey kWithoutIdentity{false, TaskAttemptKey{"", "", "", 0, -1}, ""};
  return SummaryHoldsAttempt(kWithoutIdentity, PartWithoutIdentity(spans), summary);
}

bool SummaryMayHoldPart(const PartKey& key, const Part& part) {
  // What HeldPartRowsSql reads back for a held part, beside the summary's own figures: exactly this.
  return key.airflow && key.trace_key.empty() &&
         part.name == key.attempt.dag_id + "." + key.attempt.task_id && part.app_id.empty() &&
         part.start != UINT64_MAX && part.operations == 0 && part.failed_operations == 0 &&
         part.failed_jobs == 0 && part.open == 0 && part.findings == 0 && part.top_finding.empty() &&
         part.top_impact == -1 && !part.top_is_summary && part.finding_keys.empty() &&
         std::all_of(part.phase_ms.begin(), part.phase_ms.end(), [](std::int64_t ms) { return ms == 0; });
}

const std::pair<const PartKey, Part>* PartASummaryMayHold(const std::map<PartKey, Part>& parts) {
  if (parts.size() != 1 || !SummaryMayHoldPart(parts.begin()->first, parts.begin()->second)) return nullptr;
  return &*parts.begin();
}

std::optional<std::int64_t> MapIndexOfHeldPart(const std::map<PartKey, Part>& parts,
                                               const TraceSummaryRow& summary) {
  const auto* held = PartASummaryMayHold(parts);
  if (held == nullptr) return std::nullopt;
  const auto& [key, part] = *held;
  // What HoldPartInSummary's UPDATE asks of a stored summary.
  const TaskAttemptKey& attempt = key.attempt;
  const bool agrees = summary.dag_id != nullptr && *summary.dag_id == attempt.dag_id &&
                      summary.task_id != nullptr && *summary.task_id == attempt.task_id &&
                      summary.run_id != nullptr && *summary.run_id == attempt.run_id &&
                      summary.try_number == attempt.try_number && summary.span_count == part.spans &&
                      summary.start_unix_nano == static_cast<std::int64_t>(part.start) &&
                      summary.end_unix_nano == static_cast<std::int64_t>(part.end);
  if (!agrees) return std::nullopt;
  return attempt.map_index;
}

std::vector<AttemptCondition> AttemptConditions(const TaskAttemptFilter& filter) {
  std::vector<AttemptCondition> conditions;
  if (filter.dag_id) conditions.push_back({"dag_id =", *filter.dag_id});
  if (filter.task_id) conditions.push_back({"task_id =", *filter.task_id});
  if (filter.run_id) conditions.push_back({"run_id =", *filter.run_id});
  if (filter.try_number) conditions.push_back({"try_number =", *filter.try_number});
  if (filter.map_index) conditions.push_back({"map_index =", *filter.map_index});
  if (filter.state) conditions.push_back({"state =", *filter.state});
  if (filter.since_unix_nano != 0) conditions.push_back({"start_unix_nano >=", filter.since_unix_nano});
  if (filter.until_unix_nano != 0) conditions.push_back({"start_unix_nano <=", filter.until_unix_nano});
  return conditions;
}

}  // namespace sparktrace::tracing::store::task_index
