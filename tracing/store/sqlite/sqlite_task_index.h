#pragma once
// The SQLite store's task index (tracing/store/task_attempts.h): its tables, kept up to date on every
// write, so that the trace view lists a page of tasks from an index instead of scanning spans. What
// changes on a write is decided once for both backends (tracing/store/task_index/task_index.h); this
// file gives it SQLite's SQL (a TaskIndexDialect) and lists pages.
//
// Threads: these functions run on the connection's thread, inside the caller's transaction for the
// writes (SqliteSpanStore::Write, retention, migration).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/task_attempts.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/task_index.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// Recomputes the parts of these traces (hex ids) from their spans and the rows of every attempt they
// had or now have. Call inside the write transaction that changed the spans.
Result<void> RefreshTaskIndex(SqliteConnection& db, const std::vector<std::string>& trace_ids);
// Adds traces that the current transaction created (none of their spans was stored before), from their
// parts, computed from the spans themselves (PartsOfTrace): no read-back. The result is what
// RefreshTaskIndex would compute. A trace whose summary row, written by the same transaction, holds its
// attempt (index/sqlite_summary_attempts.h) is not among them; `held_parts`: those whose summary row holds
// their one part (index/sqlite_summary_attempts.h), which then gets no row.
Result<void> IndexNewTraces(SqliteConnection& db, const PartsByTrace& parts_by_trace,
                            const std::set<std::string>& held_parts);
// Brings the index up to date with a batch written to traces that had spans already, re-reading only
// the traces whose parts the batch alone cannot settle (task_index/task_index.h, Update).
Result<void> UpdateTaskIndex(SqliteConnection& db, const task_index::BatchOfTraces& batch);
// Drops the parts of these traces (about to be deleted) and re-adds the attempts they belonged to.
Result<void> ForgetTracesInTaskIndex(SqliteConnection& db, const std::vector<std::string>& trace_ids);

// The traces a search text names: a trace id, a Spark Connect operation id, or a Spark application id.
Result<std::vector<std::string>> TracesMatching(SqliteConnection& db, std::string_view text);

}  // namespace sparktrace::tracing::store
