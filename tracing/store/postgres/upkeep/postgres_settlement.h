#pragma once
// The PostgreSQL store's side of settling (tracing/store/task_attempts.h, SettledFigures): the
// attempts due for settling and the conditional update that records their figures, in the columns
// of schema version 2 (tracing/store/postgres/postgres_schema.cc). Several proxies settle one shared
// database: the update claims a row version at most once, whoever asks.
//
// Threads: the caller's connection.

#include <chrono>
#include <cstdint>

#include "common/result.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::tracing::store {

Result<DueAttempts> ListPostgresDueAttempts(PgConnection& db, std::chrono::system_clock::time_point now,
                                            std::chrono::milliseconds quiet, std::size_t limit);
Result<SettleClaim> RecordPostgresSettlement(PgConnection& db, const AttemptRef& ref,
                                             std::uint64_t indexed_unix_nano, const SettledFigures& figures);

}  // namespace sparktrace::tracing::store
