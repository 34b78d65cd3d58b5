#pragma once
// Attempts kept in their trace's summary row (SQLite schema version 13; task_index/task_index.h,
// SummaryHoldsAttempt, says which): a trace without Airflow identity whose attempt adds up to nothing
// its summary does not say already has no task_attempts row. Its summary row says so
// (traces.attempt = 1), and the task list reads such traces as attempts (SummaryAttemptsSql). A call
// per trace, the store's commonest shape, then writes one index row fewer per span: ~180 bytes and two
// B-tree inserts (docs/shared-store.md).
//
// Each attempt without identity is either a task_attempts row (traces.attempt NULL) or held by its
// summary (traces.attempt = 1), never both: the writes below keep that whenever the attempt changes.
//
// Threads: these run on the connection's thread, inside the caller's write transaction.

#include <string>
#include <string_view>

#include "common/result.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_attempts.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/task_index.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// After the parts of an existing trace were recomputed: holds the attempt without identity of `key`
// (its trace key is the trace id) in its trace's summary when the summary as stored agrees: the
// caller then deletes its task_attempts row, if it had one. False when it cannot be held: the caller
// writes the row, and the summary no longer claims it (ReleaseFromSummary).
Result<bool> HoldInSummary(SqliteConnection& db, const PartKey& key, const Part& part);
// The summary of trace `trace_hex` no longer holds its attempt (it has a row, or no attempt).
Result<void> ReleaseFromSummary(SqliteConnection& db, const std::string& trace_hex);

// The attempts held by summaries as task_attempts rows (the columns of kAttemptRowColumns, named as
// there), for the task list to read beside task_attempts: `where` (" WHERE …" or empty) applies to
// those columns, as on task_attempts; `trace_match`, when not empty, is a condition on the summary's
// own columns (trace_id, a BLOB).
std::string SummaryAttemptsSql(std::string_view where, std::string_view trace_match);

}  // namespace sparktrace::tracing::store
