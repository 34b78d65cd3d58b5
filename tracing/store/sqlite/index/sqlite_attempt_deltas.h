#pragma once
// Airflow attempts' rows updated from what a batch did to their parts (increment/attempt_delta.h)
// instead of added up again from every part: an attempt made of a trace per call has as many parts
// as calls.
//
// Threads: the connection's, inside the caller's write transaction.

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "common/result.h"
#include "tracing/store/task_index/task_index.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// What AddToAttemptRows leaves to its caller.
struct AttemptRowsLeft {
  // Attempts with no row yet whose parts the batch created, all of them (task_index.h,
  // RowOfNewParts): their rows, to insert; the names point into the changes.
  std::vector<std::pair<const PartKey*, task_index::NewAttemptRow>> created;
  // The others attempt_delta.h cannot tell: to add up from their parts.
  std::set<PartKey> add_up;
};

// Adds `changes` (the parts already written) to their attempts' rows; returns the attempts it could
// not. `changes` must outlive the result.
Result<AttemptRowsLeft> AddToAttemptRows(SqliteConnection& db, const PartChanges& changes,
                                         std::int64_t indexed_unix_nano);

}  // namespace sparktrace::tracing::store
