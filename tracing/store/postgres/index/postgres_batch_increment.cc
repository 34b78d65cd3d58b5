#include "tracing/store/postgres/index/postgres_batch_increment.h"

#include <algorithm>

#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/postgres_batch_copy.h"

namespace sparktrace::tracing::store {

ExistingTraceBatch ExistingTraceBatchOf(const StoredBatch& batch, const BatchTraces& traces,
                                        std::map<std::string, std::vector<IndexSpan>>& index_spans_by_trace,
                                        const std::map<std::string, std::vector<std::string>>& existing,
                                        const StoredBeforeBatch& before) {
  ExistingTraceBatch out;
  for (const auto& [trace_hex, ids] : existing) {
    const auto stored = before.versions.find(trace_hex);
    std::vector<task_index::BatchSpan> index_spans;
    std::vector<SummaryBatchSpan> summary_spans;
    std::int64_t bytes = 0;
    std::vector<IndexSpan>& batch_index_spans = index_spans_by_trace.at(trace_hex);  // in `traces`' order
    std::size_t next = 0;
    for (const auto& [span_hex, i] : traces.at(trace_hex)) {
      IndexSpan& index_now = batch_index_spans[next++];
      const StoredSpanRow& row = batch.rows[i];
      const Span& span = *batch.sources[i];
      const PostgresStoredVersion* version = nullptr;
      if (stored != before.versions.end()) {
        if (const auto found = stored->second.find(span_hex); found != stored->second.end())
          version = &found->second;
      }
      if (version != nullptr && !MergeReplaces(version->summary, version->task_map_index, row, span))
        continue;
      task_index::BatchSpan& index_span = index_spans.emplace_back();
      index_span.now = std::move(index_now);
      SummaryBatchSpan& summary_span = summary_spans.emplace_back();
      summary_span.now = SummarySpanOf(row);
      bytes += ApproxBytes(row);
      if (version != nullptr) {
        index_span.before = version->index;
        summary_span.before = version->summary;
        bytes -= version->approx_bytes;
      }
    }
    if (index_spans.empty()) continue;
    out.index.emplace(trace_hex, std::move(index_spans));
    out.summary.emplace(trace_hex, std::move(summary_spans));
    out.bytes_added.emplace(trace_hex, bytes);
  }
  return out;
}

std::map<std::string, std::vector<IndexSpan>> IndexSpansByTrace(const StoredBatch& batch,
                                                                const BatchTraces& traces) {
  std::map<std::string, std::vector<IndexSpan>> by_trace;
  for (const auto& [trace_hex, versions] : traces) {
    std::vector<IndexSpan>& spans = by_trace[std::string(trace_hex)];
    spans.reserve(versions.size());
    for (const auto& [span_hex, i] : versions) spans.push_back(IndexSpanOf(*batch.sources[i], batch.rows[i]));
  }
  return by_trace;
}

std::optional<std::string> NewTraceAwaitedParents(const std::vector<IndexSpan>& spans) {
  const bool airflow = std::any_of(spans.begin(), spans.end(),
                                   [](const IndexSpan& span) { return span.identity.has_value(); });
  if (!airflow) return std::nullopt;
  return task_index::AwaitedParentsText(task_index::AwaitedParentsOf(spans));
}

// The try numbers travel as text in the UPDATE (a NULL element of an array needs the text form).
Result<void> UpdateSummaries(PgConnection& db, const ExistingTraceBatch& existing,
                             const std::map<std::string, std::pair<std::int64_t, std::int64_t>>& bounds) {
  std::vector<std::string> recompute, trace_ids;
  std::vector<std::int64_t> ends, spans, errors, bytes;
  std::vector<std::optional<std::string>> dag_ids, task_ids, run_ids, try_numbers;
  for (const auto& [trace_hex, batch] : existing.summary) {
    const auto bound = bounds.find(trace_hex);
    std::optional<SummaryChange> change;
    if (bound != bounds.end()) change = SummaryIncrement(bound->second.first, bound->second.second, batch);
    if (!change) {
      recompute.push_back(trace_hex);
      continue;
    }
    trace_ids.push_back(trace_hex);
    ends.push_back(change->end_unix_nano);
    spans.push_back(change->spans_added);
    errors.push_back(change->errors_added);
    bytes.push_back(existing.bytes_added.at(trace_hex));
    dag_ids.push_back(change->dag_id);
    task_ids.push_back(change->task_id);
    run_ids.push_back(change->run_id);
    try_numbers.push_back(change->try_number ? std::optional<std::string>(std::to_string(*change->try_number))
                                             : std::nullopt);
  }
  if (!trace_ids.empty()) {
    // The try numbers travel as text (a NULL element needs the text form); the cast reads them back.
    auto added =
        db.Query(kAddToSummariesSql,
                 {TextArray(trace_ids), IntArray(ends), IntArray(spans), IntArray(errors), IntArray(bytes),
                  TextArray(dag_ids), TextArray(task_ids), TextArray(run_ids), TextArray(try_numbers)});
    if (!added.ok()) return added.error();
  }
  if (!recompute.empty()) {
    if (auto refreshed = db.Query(kRefreshSummariesSql, {TextArray(recompute)}); !refreshed.ok())
      return refreshed.error();
  }
  return {};
}

}  // namespace sparktrace::tracing::store
