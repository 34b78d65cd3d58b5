#pragma once
// The PostgreSQL store's schema and its migrations. The version lives in a one-row table
// (sparktrace_schema); a writer migrates at open under a session advisory lock, so that many
// proxies starting at once migrate once and the others wait, then find the schema current. A
// binary older than the schema refuses to write (kInvalidArgument naming both versions); readers
// never migrate.
//
// Threads: the caller's (one connection).

#include <cstdint>

#include "common/result.h"
#include "tracing/store/postgres/client/pg_connection.h"

namespace sparktrace::tracing::store {

inline constexpr std::int64_t kPostgresSchemaVersion = 16;

// The advisory lock keys (classid, objid) of this store. Class 1 serialises the writes to one
// trace and class 2 those to one task attempt (tracing/store/postgres/postgres_span_store.cc); the migration
// lock is class 0.
inline constexpr int kLockClassMigration = 0x53705400;
inline constexpr int kLockClassTrace = 0x53705401;
inline constexpr int kLockClassAttempt = 0x53705402;

// Brings the database to kPostgresSchemaVersion (writers) or checks that it is there (readers).
// `display` names the store in errors.
Result<void> MigratePostgres(PgConnection& db, const std::string& display, bool read_only);
// Brings a database at most at `version` to exactly that version (1 ≤ version ≤
// kPostgresSchemaVersion): what an older sparktrace made, for the migration tests.
Result<void> MigratePostgresTo(PgConnection& db, const std::string& display, std::int64_t version);

// The schema version the database holds now (0 for an empty database).
Result<std::int64_t> PostgresSchemaVersion(PgConnection& db);

}  // namespace sparktrace::tracing::store
