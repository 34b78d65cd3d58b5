#include "tracing/store/sqlite/client/sqlite_connection.h"

#include <spdlog/fmt/fmt.h>

#include <cstring>
#include <mutex>
#include <string>
#include <utility>

namespace sparktrace::tracing::store {

ErrorCode ErrorCodeForSqlite(int rc) {
  switch (rc & 0xff) {  // the primary code; extended codes only refine it
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return ErrorCode::kIo;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return ErrorCode::kUnavailable;
    default:
      return ErrorCode::kInternal;
  }
}

Error SqliteError(sqlite3* db, int rc, std::string_view context) {
  // sqlite3_errmsg has the detail ("no such table: x"); sqlite3_errstr only the code's generic text,
  // which is all there is when the connection could not even be allocated.
  std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  if (db != nullptr && (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR)) {
    // "unable to open database file" alone does not say whether the directory is missing or the
    // permissions are wrong; the errno does.
    const int system_errno = sqlite3_system_errno(db);
    if (system_errno != 0) message += fmt::format(" ({})", std::strerror(system_errno));
  }
  return Error{ErrorCodeForSqlite(rc), fmt::format("{}: {}", context, message)};
}

namespace {

// SQLite counts every allocation under a global mutex for sqlite3_status(), which nothing here reads;
// off, each of the many small allocations of a write skips the lock. Process-wide, so set once,
// before SQLite initialises (it refuses afterwards, harmlessly).
void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

Result<SqliteConnection> SqliteConnection::Open(const std::string& path, int flags) {
  ConfigureSqliteOnce();
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  // sqlite3_open_v2 hands out a handle even on failure (to read the message from); own it either way.
  SqliteConnection connection(raw);
  if (rc != SQLITE_OK) return SqliteError(raw, rc, fmt::format("open {}", path));
  sqlite3_extended_result_codes(raw, 1);
  return connection;
}

Result<void> SqliteConnection::Exec(std::string_view sql) {
  const std::string text(sql);  // sqlite3_exec wants a terminated string
  const int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_.get(), rc, fmt::format("run \"{}\"", sql));
  return {};
}

Result<SqliteStatement> SqliteConnection::Prepare(std::string_view sql, bool persistent) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                    persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(db_.get(), rc, fmt::format("prepare \"{}\"", sql));
  }
  if (stmt == nullptr) return Error{ErrorCode::kInternal, fmt::format("prepare \"{}\": no statement", sql)};
  return SqliteStatement(stmt);
}

Result<SqliteStatement*> SqliteConnection::PrepareCached(std::string_view sql) {
  if (const auto found = cached_.find(std::string(sql)); found != cached_.end()) {
    found->second->Reset();
    return found->second.get();
  }
  auto prepared = Prepare(sql, /*persistent=*/true);
  if (!prepared.ok()) return prepared.error();
  const auto entry =
      cached_.emplace(std::string(sql), std::make_unique<SqliteStatement>(std::move(prepared).value())).first;
  return entry->second.get();
}

Result<std::int64_t> SqliteConnection::QueryInt64(std::string_view sql) {
  auto stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  auto row = stmt->Step();
  if (!row.ok()) return row.error();
  if (!*row) return Error{ErrorCode::kInternal, fmt::format("\"{}\" returned no row", sql)};
  return stmt->ColumnInt64(0);
}

Error SqliteConnection::LastError(std::string_view context) const {
  return SqliteError(db_.get(), sqlite3_extended_errcode(db_.get()), context);
}

}  // namespace sparktrace::tracing::store
