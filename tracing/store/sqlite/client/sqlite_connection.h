#pragma once
// SqliteConnection: RAII owner of one SQLite connection (sqlite3*), plus the error mapping every
// SQLite call in tracing/ uses: each failure becomes an Error carrying SQLite's own message, and, for
// file errors, the operating system's reason.
//
// Threads: a connection is opened without SQLite's per-connection mutex (SQLITE_OPEN_NOMUTEX), so it
// must be used by one thread at a time; it may be handed from thread to thread.
// Ownership: movable, not copyable; statements it prepares must be destroyed before it.

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"

namespace sparktrace::tracing::store {

class SqliteConnection {
 public:
  // Opens `path` with sqlite3_open_v2 `flags` (SQLITE_OPEN_NOMUTEX is always added) and enables
  // extended result codes. Errors name the path.
  static Result<SqliteConnection> Open(const std::string& path, int flags);

  // Runs one or more statements that take no parameters (DDL, PRAGMA, BEGIN/COMMIT).
  Result<void> Exec(std::string_view sql);
  // Prepares one statement. `persistent` hints SQLite that it will be reused many times.
  Result<SqliteStatement> Prepare(std::string_view sql, bool persistent = false);
  // The statement for `sql`, prepared on first use and kept for the connection's life, reset (no
  // bindings) each time it is handed out: for the fixed statements every write batch runs, whose
  // parsing otherwise costs as much as running them. Only for SQL text that is a constant of the
  // code, never built from values, so that the cache holds at most one entry per such constant.
  // The pointer stays valid until the connection is destroyed; one user at a time.
  Result<SqliteStatement*> PrepareCached(std::string_view sql);
  // Runs a statement that returns a single integer (e.g. "PRAGMA user_version").
  Result<std::int64_t> QueryInt64(std::string_view sql);

  // The error for the connection's most recent failure, as "<context>: <sqlite message>".
  Error LastError(std::string_view context) const;

  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };

  explicit SqliteConnection(sqlite3* db) : db_(db) {}

  std::unique_ptr<sqlite3, Closer> db_;
  // Declared after db_, so destroyed (finalized) before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<SqliteStatement>> cached_;
};

// Maps a (possibly extended) SQLite result code to our error codes: file and corruption problems are
// kIo, lock contention kUnavailable, everything else kInternal.
ErrorCode ErrorCodeForSqlite(int rc);

// The Error for result `rc` on `db` (which may be null): "<context>: <message>", where the message is
// SQLite's, followed by the OS reason for open and I/O failures.
Error SqliteError(sqlite3* db, int rc, std::string_view context);

}  // namespace sparktrace::tracing::store
