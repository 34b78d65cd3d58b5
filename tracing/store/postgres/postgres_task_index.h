#pragma once
// The PostgreSQL store's task index (tracing/store/task_attempts.h): the same parts and rows as the
// SQLite store's, computed and kept by the same code (tracing/store/task_index/task_index.h, over
// this file's TaskIndexDialect), stored in attempt_parts and task_attempts
// (tracing/store/postgres/postgres_schema.cc).
//
// Writers in several processes: the caller holds the advisory locks of the traces it refreshes;
// RefreshPostgresTaskIndex takes those of the attempts it re-adds (in lock-id order, after the trace
// locks, so that two writers can never wait on each other in a cycle), which is what keeps an
// attempt whose traces two proxies write at once from losing one proxy's part.
//
// Threads: the caller's, inside its transaction.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/postgres/index/postgres_index_reads.h"
#include "tracing/store/task_attempts.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/task_index.h"

namespace sparktrace::tracing::store {

// Recomputes the parts of these traces (hex ids) from their spans and the rows of every attempt they
// had or now have. The session must have its incoming tables (postgres_batch_copy.h).
Result<void> RefreshPostgresTaskIndex(PgConnection& db, const std::vector<std::string>& trace_ids);
// Brings the index up to date with a batch written to traces that had stored spans
// (task_index.h's Update): each trace updated from the batch's spans where they settle it, else
// recomputed. `known`: the stored spans above the batch's (ReadStoredBeforeBatch), which the update
// walks up to without a query each. The caller holds the traces' locks, as for a refresh.
Result<void> UpdatePostgresTaskIndex(PgConnection& db, const task_index::BatchOfTraces& batch,
                                     const KnownSpans& known);
// Adds traces that the current transaction created, from their parts, computed from their spans
// (PartsOfTrace; no read-back); the result is what RefreshPostgresTaskIndex would compute. A trace whose
// new summary holds its attempt (task_index.h, SummaryHoldsAttempt) is not among them; `held_parts`:
// those whose new summary holds their one part (held/postgres_held_parts.h), which then gets no row.
Result<void> IndexNewPostgresTraces(PgConnection& db, const PartsByTrace& parts_by_trace,
                                    const std::set<std::string>& held_parts);
// Drops the parts of these traces (about to be deleted) and re-adds the attempts they belonged to.
Result<void> ForgetTracesInPostgresTaskIndex(PgConnection& db, const std::vector<std::string>& trace_ids);

Result<std::vector<std::string>> PostgresTracesMatching(PgConnection& db, std::string_view text);

}  // namespace sparktrace::tracing::store
