#pragma once
// Airflow attempts' rows updated from what a batch did to their parts (increment/attempt_delta.h)
// instead of added up again from every part, on PostgreSQL: one read and one write for all of a
// batch's attempts, under their advisory locks.
//
// Threads: the connection's, inside the caller's write transaction.

#include <cstdint>
#include <set>

#include "common/result.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store {

// Adds `changes` (Airflow attempts only; the parts already written) to their attempts' rows; returns
// the attempts it could not (no row yet, or attempt_delta.h cannot tell), which the caller adds up
// from their parts. Takes the advisory locks of every attempt in `changes`, held to the transaction's
// end.
Result<std::set<PartKey>> AddToPostgresAttemptRows(PgConnection& db, const PartChanges& changes,
                                                   std::int64_t indexed_unix_nano);

}  // namespace sparktrace::tracing::store
