#pragma once
// Airflow parts kept in their trace's summary row (PostgreSQL schema version 15; the SQLite store's
// version 18 does the same, sqlite/index/sqlite_summary_attempts.h): a trace whose one part is an
// Airflow attempt's and says nothing its summary does not (task_index.h, SummaryMayHoldPart) keeps no
// attempt_parts row and no attempt_parts_by_trace entry. Its summary says so: traces.held_map_index is
// the part's map index, the rest of its key the summary's Airflow identity; traces_held_parts finds an
// attempt's held parts. An attempt of calls each its own trace (calls with the task's identity and no
// traceparent) writes ~290 bytes, a row and two index entries less a call.
//
// A part is either an attempt_parts row or held, never both: every read of parts reads both
// (PostgresHeldPartRowsSql), DeleteParts releases a held part with the rows, and a summary about to change
// is released first (ReleasePostgresHeldParts), so that what the index reads back as the part is what it
// wrote.
//
// Threads: the connection's, inside the caller's write transaction, under the traces' advisory locks.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {

// The parts held by summaries as attempt_parts rows (task_index/index_columns.h's kAttemptPartColumns, named
// as there), of the summaries matching `where`, a condition on traces' own columns.
std::string PostgresHeldPartRowsSql(std::string_view where);

// Whether a summary, its columns named without a table, holds a part of the attempt whose key columns are
// those of `{0}` (a task_attempts row or kKeysCte's `k`), for a condition on traces: an index lookup of
// traces_held_parts when `{0}`'s values are known, as in a correlated or LATERAL subquery (a join with a
// UNION ALL of attempt_parts and held parts reads every held part instead: PostgreSQL does not push the
// join's condition into an arm that makes its columns).
inline constexpr std::string_view kPostgresHeldPartOfKeySql =
    "held_map_index = {0}.map_index AND dag_id = {0}.dag_id AND task_id = {0}.task_id AND run_id = "
    "{0}.run_id AND try_number = {0}.try_number AND {0}.airflow = 1 AND {0}.trace_key = ''";
// The traces holding such a part: a SELECT of their trace_id, `{0}` as there, for
// AttemptRowReadColumnsSql's held_traces and the check that an attempt has no part left.
const std::string& PostgresHeldTracesOfKeySql();

// A trace's one part its summary may hold (task_index.h, SummaryMayHoldPart), for HoldPostgresParts.
struct PartToHold {
  const std::string* trace_hex;
  const PartKey* key;
  const Part* part;
};
// Holds each part in its trace's summary where the summary as stored says what the part's row would
// (its Airflow identity, span count, start and end) and holds nothing yet: one statement for all. The
// traces (hex) whose summary now holds its part; the caller writes the others' rows.
Result<std::set<std::string>> HoldPostgresParts(PgConnection& db, const std::vector<PartToHold>& parts);

// Writes the held part of each of these traces (hex ids) as its attempt_parts row and clears the
// summary's claim, in one statement (none for no traces): before the summaries change, which would
// change what the held part reads as.
Result<void> ReleasePostgresHeldParts(PgConnection& db, const std::vector<std::string>& trace_ids);

}  // namespace sparktrace::tracing::store
