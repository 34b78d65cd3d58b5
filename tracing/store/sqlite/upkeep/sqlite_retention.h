#pragma once
// Retention of the SQLite store (SqliteSpanStore::EnforceRetention): deleting whole traces by age and
// then by size, and giving the freed pages back to the file system. Apart from the store's writes
// because it measures the file in pages and shrinks it, which nothing else does.
//
// Threads: the writer's thread (the exporter's), between batches; each deletion is its own write
// transaction, so readers and other writers get the database between them.

#include <chrono>
#include <string>

#include "common/result.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// Deletes the traces whose last span ended before `now - options.max_age`, then, while the pages in use
// exceed options.max_bytes, the traces that ended longest ago; then runs an incremental vacuum and a
// WAL checkpoint so that the file shrinks. `path` names the file in errors.
Result<RetentionStats> EnforceSqliteRetention(SqliteConnection& db, const std::string& path,
                                              const StoreOptions& options,
                                              std::chrono::system_clock::time_point now);

}  // namespace sparktrace::tracing::store
