#pragma once
// The SQLite store's file: the marks that make it ours (PRAGMA application_id, and user_version for
// the schema version), the connection's pragmas (WAL, the writer's cache and journal bounds) and the
// schema with its migrations. Kept apart from the store's reads and writes, which only need the
// schema to be current.
//
// Threads: the caller's (one connection, at open).

#include <string>

#include "common/result.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// Checks that the file is a sparktrace trace database or a new one (kInvalidArgument for a foreign
// file) and sets the connection up: query-only for a reader; for a writer the pragmas and WAL mode
// (kIo where the file system cannot hold a WAL). `path` names the file in errors.
Result<void> ConfigureSqlite(SqliteConnection& db, const std::string& path, const StoreOptions& options);

// Brings the database to SqliteSpanStore::kSchemaVersion (a writer, in one write transaction) or
// checks that it is there (a reader never migrates). Refuses a newer schema, and a new file that
// already holds other tables.
Result<void> MigrateSqlite(SqliteConnection& db, const std::string& path, bool read_only);

}  // namespace sparktrace::tracing::store
