#pragma once
// What a trace's summary row holds in place of task index rows.
//
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
// Airflow parts kept in their trace's summary row (SQLite schema version 18): a trace whose one part is
// an Airflow attempt's and says nothing its summary does not (its start, end and span count; no
// operation, failure, phase, finding, open span or application) keeps no attempt_parts row and no
// attempt_parts_by_trace entry. Its summary says so (traces.attempt = 2, the part's map index in
// traces.map_index, the rest of its key the summary's Airflow identity), and traces_held_parts finds
// the held parts by attempt. An attempt of calls each its own trace (calls with the task's identity
// and no traceparent) writes ~180 bytes and two B-tree inserts less a call.
//
// A part is either an attempt_parts row or held, never both: every read of parts reads both
// (HeldPartRowsSql), DeleteParts releases a held part with the rows, and a summary about to change is
// released first (ReleaseHeldParts), so that what the index reads back as the part is what it wrote
// (the writer's reads of a stored trace's parts then find rows only; they read held ones all the same).
//
// Threads: these run on the connection's thread, inside the caller's write transaction.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

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

// The attempts held by summaries as task_attempts rows (trace_key and the columns of kAttemptRowColumns,
// named as there), for the task list to read beside task_attempts: `where` (" WHERE …" or empty) applies to
// those columns, as on task_attempts; `trace_match`, when not empty, is a condition on the summary's
// own columns (trace_id, a BLOB).
std::string SummaryAttemptsSql(std::string_view where, std::string_view trace_match);

// Holds `part`, the only part of trace `trace_hex` and one its summary may hold
// (task_index::PartASummaryMayHold), in the trace's summary when the summary as stored says what the
// part's row would; false when it does not (the caller writes the row).
Result<bool> HoldPartInSummary(SqliteConnection& db, const std::string& trace_hex, const PartKey& key,
                               const Part& part);

// Writes the held part of each of these traces (keyed by hex id) as its attempt_parts row and clears
// the summary's claim: before the summaries change, which would change what the held part reads as.
Result<void> ReleaseHeldParts(SqliteConnection& db,
                              const std::map<std::string, std::vector<IndexSpan>>& traces);

// The parts held by summaries as attempt_parts rows (every column of attempt_parts, named as there), of
// the summaries matching `where`, a condition on traces' own columns.
std::string HeldPartRowsSql(std::string_view where);
// Inserts those rows into attempt_parts (the summaries still claim them: the caller clears that).
std::string HeldPartsIntoRowsSql(std::string_view where);

// A key's held parts, matching kPartKeyMatchSql's parameters ?1 to ?7 (index/sqlite_index_reads.h):
// only an Airflow attempt's ('' trace key) can have any.
inline constexpr std::string_view kHeldPartKeyMatchSql =
    "(?1 + 0) = 1 AND ?7 = '' AND dag_id = ?2 AND task_id = ?3 AND run_id = ?4 AND try_number = ?5 AND "
    "map_index = ?6";

// The traces holding a part of the attempt of task_attempts row `{0}` (AttemptRowReadColumnsSql's
// held_traces).
inline constexpr std::string_view kHeldTracesOfRowSql =
    "SELECT h.trace_id FROM traces h WHERE h.attempt = 2 AND h.dag_id = {0}.dag_id AND h.task_id = "
    "{0}.task_id AND h.run_id = {0}.run_id AND h.try_number = {0}.try_number AND h.map_index = "
    "{0}.map_index AND {0}.trace_key = ''";

}  // namespace sparktrace::tracing::store
