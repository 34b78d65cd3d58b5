#pragma once
// How PostgresSpanStore::Write sends a batch, in COPY text (one round trip each, where row-by-row
// INSERTs would cost one per span): the spans and summaries of the traces it creates straight into
// spans and traces, the spans of traces already stored into a temporary table, which these
// statements merge into spans (and, should a created trace turn out to have stored spans, every span
// and summary so: postgres_span_store.cc). Kept apart from the store, which runs them in order under
// its transaction and trace locks.
//
// Pure functions and constant SQL text; thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/store/increment/summary_increment.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store {

// Creates this session's incoming_spans, incoming_traces and incoming_attempts (the task index's,
// postgres_task_index.cc), emptied at every COMMIT; once per session (IF NOT EXISTS would log a
// notice each time).
extern const std::string_view kIncomingTablesSql;
// Inserts the incoming summaries of traces that have none yet; RETURNING names those, the new traces.
extern const std::string kInsertNewSummariesSql;
// Upserts incoming_spans into spans.
extern const std::string kMergeSql;
// Whether kMergeSql's upsert replaces a stored span (its summary figures and task_map_index) with
// `row` (of `span`): an "airflow.task" span only with the same attempt's later report.
bool MergeReplaces(const SummarySpan& stored, std::optional<std::int64_t> stored_map_index,
                   const StoredSpanRow& row, const Span& span);
// What a span adds to traces.approx_bytes (the store's size measure, as kRefreshSummariesSql sums it).
std::int64_t ApproxBytes(const StoredSpanRow& row);
// Recomputes the summaries of the traces in $1 (a text[] of hex ids) from all their stored spans.
extern const std::string kRefreshSummariesSql;
// Adds batches to the summary rows of traces (increment/summary_increment.h's SummaryChange), one
// trace an element of each array: $1 the trace (hex), $2 its new end, $3 spans, $4 errors and $5
// approx_bytes to add, $6-$9 the batch's greatest dag, task, run and try (NULL: none), kept where they
// exceed the row's, as kRefreshSummariesSql's max() would.
extern const std::string kAddToSummariesSql;
// The columns of traces (or incoming_traces) that SummaryCopy fills.
extern const std::string_view kSummaryCopyColumns;

// Which of a batch's traces a copy holds: all of them, or those the store holds already (`stored`,
// hex ids) or those it does not (the batch creates them).
struct TraceChoice {
  const std::set<std::string, std::less<>>* stored = nullptr;  // nullptr: every trace
  bool of_stored = false;
  bool Holds(std::string_view trace_hex) const {
    return stored == nullptr || stored->contains(trace_hex) == of_stored;
  }
};

// The batch's spans in COPY text for spans or incoming_spans, kPostgresSpanWriteColumns
// (postgres_span_columns.h): each span once, its last version in the batch (`traces` says which), of
// the traces `choice` holds.
std::string SpanCopy(const StoredBatch& batch, const BatchTraces& traces, TraceChoice choice = {});
// What SummaryCopy decided of the summaries it wrote, by trace (hex).
struct NewSummaryClaims {
  // Those that hold their one Airflow part (held/postgres_held_parts.h), which then gets no row.
  std::set<std::string> holding_parts;
  // The parts of every trace but those whose summary holds their attempt (task_index.h,
  // NewTraceSummaryHoldsAttempt: nothing of theirs is indexed), computed once (PartsOfTrace).
  PartsByTrace parts;
};
// Each trace's summary as the batch alone would make it, in COPY text for traces or incoming_traces
// (columns kSummaryCopyColumns), with its awaited parents from `awaited` (absent or nullopt: NULL) and
// what it holds of the task index, computed from `index_spans` and said in `claims`, of the traces
// `choice` holds; used only for the traces the batch creates.
std::string SummaryCopy(const StoredBatch& batch, const BatchTraces& traces,
                        const std::map<std::string, std::optional<std::string>>& awaited,
                        const std::map<std::string, std::vector<IndexSpan>>& index_spans,
                        NewSummaryClaims& claims, TraceChoice choice = {});

}  // namespace sparktrace::tracing::store
