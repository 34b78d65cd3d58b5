#pragma once
// The SQLite store's side of settling (tracing/store/task_attempts.h, SettledFigures): the columns the
// settled figures live in, the attempts due for settling, and the conditional update that records
// them. The figures themselves are computed by the trace view (traceview/attempt_settler.h).
//
// Threads: the connection's thread. RecordSqliteSettlement runs inside the caller's write transaction.

#include <chrono>
#include <cstdint>
#include <string_view>

#include "common/result.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// Schema version 4: the row's version (indexed_at) and its settled figures.
extern const std::string_view kSettlementSchema;
// Schema version 11: which rows have anything to settle (the `settles` column).
extern const std::string_view kSettlesSchema;

Result<DueAttempts> ListSqliteDueAttempts(SqliteConnection& db, std::chrono::system_clock::time_point now,
                                          std::chrono::milliseconds quiet, std::size_t limit);
Result<SettleClaim> RecordSqliteSettlement(SqliteConnection& db, const AttemptRef& ref,
                                           std::uint64_t indexed_unix_nano, const SettledFigures& figures);

}  // namespace sparktrace::tracing::store
