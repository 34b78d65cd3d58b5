#pragma once
// Airflow attempts' rows updated from what a batch did to their parts (increment/attempt_delta.h)
// instead of added up again from every part: an attempt made of a trace per call has as many parts
// as calls.
//
// Threads: the connection's, inside the caller's write transaction.

#include <cstdint>
#include <set>

#include "common/result.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// Adds `changes` (the parts already written) to their attempts' rows; returns the attempts it could
// not (no row yet, or attempt_delta.h cannot tell), which the caller adds up from their parts.
Result<std::set<PartKey>> AddToAttemptRows(SqliteConnection& db, const PartChanges& changes,
                                           std::int64_t indexed_unix_nano);

}  // namespace sparktrace::tracing::store
