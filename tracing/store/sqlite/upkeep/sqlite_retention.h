#pragma once
// Retention of the SQLite store (SqliteSpanStore::EnforceRetention): deleting whole traces by age and
// then by size, and giving the freed pages back to the file system. Apart from the store's writes
// because it measures the file in pages and shrinks it, which nothing else does.
//
// Threads: the writer's thread (the exporter's), between batches; each deletion is its own write
// transaction, so readers and other writers get the database between them.

#include <chrono>
#include <string>
#include <string_view>

#include "common/result.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {

class SqliteConnection;
class SqliteAttributeSets;

// What retention deletes, by age and by size (span_rows/span_table_sql.h, TracesEndedBeforeSql; schema
// version 10 has no index on the end): the trace ids of the traces that ended before ?1 (unix ns), and
// of the ?1 traces that ended first. Exported for the test that holds them to the plain queries.
extern const std::string kSqliteTracesEndedBeforeSql;
extern const std::string kSqliteTracesEndedFirstSql;

// Deletes the traces whose last span ended before `now - options.max_age`, then, while the pages in use
// exceed options.max_bytes, the traces that ended longest ago; then runs an incremental vacuum and a
// WAL checkpoint so that the file shrinks. Also removes the attribute sets no stored span can name any
// more (rows/sqlite_attribute_sets.h), and then tells `sets`, its writer's, to forget its ids. `path`
// names the file in errors.
Result<RetentionStats> EnforceSqliteRetention(SqliteConnection& db, SqliteAttributeSets& sets,
                                              const std::string& path, const StoreOptions& options,
                                              std::chrono::system_clock::time_point now);

}  // namespace sparktrace::tracing::store
