#pragma once
// What a PostgreSQL batch changes in the traces it writes to: for a trace it creates, the parents its
// spans wait for (recorded with its summary row, so that its next batch is added to its index); for a
// trace with stored spans, each span with the version it replaces, and the summary rows added to
// (increment/summary_increment.h) or recomputed. postgres_span_store.cc runs these in its write
// transaction, under the traces' locks.
//
// Threads: the caller's.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "tracing/store/increment/summary_increment.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/postgres/index/postgres_index_reads.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/task_index.h"

namespace sparktrace::tracing::store {

// What a batch writes to traces that had stored spans, for their summaries and task index: each span
// with the version it replaces (ReadStoredBeforeBatch's), but for a span the upsert keeps the stored
// version of (MergeReplaces), which changes nothing.
struct ExistingTraceBatch {
  task_index::BatchOfTraces index;
  std::map<std::string, std::vector<SummaryBatchSpan>> summary;
  std::map<std::string, std::int64_t> bytes_added;  // to approx_bytes, by trace
};

// The batch's spans of the traces in `existing` (the ids ReadStoredBeforeBatch was given, by trace),
// with what `before` found; `index_spans_by_trace` (IndexSpansByTrace's) gives up their index spans.
ExistingTraceBatch ExistingTraceBatchOf(const StoredBatch& batch, const BatchTraces& traces,
                                        std::map<std::string, std::vector<IndexSpan>>& index_spans_by_trace,
                                        const std::map<std::string, std::vector<std::string>>& existing,
                                        const StoredBeforeBatch& before);

// Each trace's spans as the index takes them (IndexSpanOf), in the order `traces` lists them.
std::map<std::string, std::vector<IndexSpan>> IndexSpansByTrace(const StoredBatch& batch,
                                                                const BatchTraces& traces);

// The awaited parents of a trace the batch creates (all its spans are the batch's), so that its next
// batch can be added to its index rather than recompute it; nullopt (NULL) for a trace without
// Airflow identity, which every batch recomputes anyway (part_increment.h), as a call per trace is:
// its row stays as small as before.
std::optional<std::string> NewTraceAwaitedParents(const std::vector<IndexSpan>& spans);

// The summary rows of the traces a batch wrote to that had stored spans: the batch added to a row
// where the batch alone tells (summary_increment.h), in one UPDATE for all; the others recomputed from
// all their spans, in one statement. `bounds`: the rows' (start, end) before the batch.
Result<void> UpdateSummaries(PgConnection& db, const ExistingTraceBatch& existing,
                             const std::map<std::string, std::pair<std::int64_t, std::int64_t>>& bounds);

}  // namespace sparktrace::tracing::store
