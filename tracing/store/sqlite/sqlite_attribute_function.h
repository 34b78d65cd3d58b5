#pragma once
// sparktrace_attribute(attributes, key): one attribute of a stored span in SQL, whichever form the
// row holds it in (the compact BLOB of schema version 6, or the JSON text of rows written before),
// as SQLite's `attributes ->> '$."key"'` gave it for JSON: text, integer, real, 1/0 for a boolean,
// a string list as its JSON text, NULL when absent (or NaN). The task index and the span upsert read
// attributes through it (span_table_sql.h); a sqlite3 shell has no such function, so ad-hoc queries
// read the well-known columns (operation_id, dag_id, ...) or go through `sparktrace traces show`.
//
// Threads: registered per connection; SQLite calls it on that connection's thread.

#include "common/result.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

inline constexpr const char* kSqliteAttributeFunction = "sparktrace_attribute";

// sparktrace_unhex(hex): the BLOB that hex text spells (a BLOB passes unchanged, anything else is
// NULL). Trace and span ids are BLOBs in spans and traces since schema version 10; SQL that holds
// ids as hex text (the migration, a JSON list of ids, a search for an id) converts them with it.
inline constexpr const char* kSqliteUnhexFunction = "sparktrace_unhex";

// Registers both functions on `db`.
Result<void> RegisterAttributeFunction(SqliteConnection& db);

}  // namespace sparktrace::tracing::store
