#pragma once
// The SQLite store's write transaction: the schema migration, each batch of spans, retention and
// settling all change several tables and must do so all or nothing.
//
// Threads: the connection's thread (the store's writer).

#include <functional>

#include "common/result.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// Runs `body` between BEGIN IMMEDIATE and COMMIT; rolls back when `body` fails, when COMMIT fails, or
// when an exception unwinds through.
Result<void> InWriteTransaction(SqliteConnection& db, const std::function<Result<void>()>& body);

}  // namespace sparktrace::tracing::store
