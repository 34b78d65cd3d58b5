#include "tracing/store/sqlite/client/sqlite_statement.h"

#include <spdlog/fmt/fmt.h>

#include "tracing/store/sqlite/client/sqlite_connection.h"

namespace sparktrace::tracing::store {

SqliteStatement::SqliteStatement(sqlite3_stmt* stmt) : stmt_(stmt) {}

void SqliteStatement::NoteBindResult(int rc, int index) {
  // Only the first failure is kept: later ones are usually consequences of it.
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) {
    bind_error_ = rc;
    bind_error_index_ = index;
  }
}

void SqliteStatement::BindText(int index, std::string_view text) {
  // sqlite3_bind_text64 takes the length explicitly, so embedded NULs survive and no terminator is
  // needed; SQLITE_TRANSIENT copies, which keeps the call sites free of lifetime rules.
  NoteBindResult(
      sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}

void SqliteStatement::BindBlob(int index, std::string_view bytes) {
  NoteBindResult(sqlite3_bind_blob64(stmt_.get(), index, bytes.data(), bytes.size(), SQLITE_TRANSIENT),
                 index);
}

void SqliteStatement::BindTextUnowned(int index, std::string_view text) {
  NoteBindResult(
      sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8), index);
}

void SqliteStatement::BindBlobUnowned(int index, std::string_view bytes) {
  NoteBindResult(sqlite3_bind_blob64(stmt_.get(), index, bytes.data(), bytes.size(), SQLITE_STATIC), index);
}

void SqliteStatement::BindInt64(int index, std::int64_t value) {
  NoteBindResult(sqlite3_bind_int64(stmt_.get(), index, value), index);
}

void SqliteStatement::BindDouble(int index, double value) {
  NoteBindResult(sqlite3_bind_double(stmt_.get(), index, value), index);
}

void SqliteStatement::BindNull(int index) { NoteBindResult(sqlite3_bind_null(stmt_.get(), index), index); }

Result<bool> SqliteStatement::Step() {
  if (bind_error_ != SQLITE_OK) {
    return Error{ErrorCodeForSqlite(bind_error_),
                 fmt::format("bind parameter {} of \"{}\": {}", bind_error_index_, Sql(),
                             sqlite3_errstr(bind_error_))};
  }
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(sqlite3_db_handle(stmt_.get()), rc, fmt::format("run \"{}\"", Sql()));
}

Result<void> SqliteStatement::Run() {
  while (true) {
    auto stepped = Step();
    if (!stepped.ok()) return stepped.error();
    if (!*stepped) return {};
  }
}

void SqliteStatement::Reset() {
  // sqlite3_reset repeats the last step's error code; that error was already reported by Step().
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_ = SQLITE_OK;
  bind_error_index_ = 0;
}

void SqliteStatement::ResetKeepingBindings() {
  sqlite3_reset(stmt_.get());
  bind_error_ = SQLITE_OK;
  bind_error_index_ = 0;
}

bool SqliteStatement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_.get(), index) == SQLITE_NULL;
}

bool SqliteStatement::ColumnIsBlob(int index) const {
  return sqlite3_column_type(stmt_.get(), index) == SQLITE_BLOB;
}

std::int64_t SqliteStatement::ColumnInt64(int index) const {
  return sqlite3_column_int64(stmt_.get(), index);
}

double SqliteStatement::ColumnDouble(int index) const { return sqlite3_column_double(stmt_.get(), index); }

Result<std::vector<std::string>> SqliteStatement::CollectText(int column) {
  std::vector<std::string> values;
  while (true) {
    auto row = Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    values.push_back(ColumnText(column));
  }
  return values;
}

std::string_view SqliteStatement::ColumnView(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), index));
  const int size = sqlite3_column_bytes(stmt_.get(), index);
  if (text == nullptr) return {};
  return {text, static_cast<std::size_t>(size)};
}

std::string_view SqliteStatement::ColumnBlobView(int index) const {
  // sqlite3_column_blob before sqlite3_column_bytes, as for text.
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt_.get(), index));
  const int size = sqlite3_column_bytes(stmt_.get(), index);
  if (bytes == nullptr) return {};
  return {bytes, static_cast<std::size_t>(size)};
}

std::string SqliteStatement::ColumnText(int index) const {
  // sqlite3_column_text before sqlite3_column_bytes, as SQLite documents: the byte count then refers to
  // the UTF-8 form just produced.
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), index));
  const int size = sqlite3_column_bytes(stmt_.get(), index);
  if (text == nullptr) return {};
  return std::string(text, static_cast<std::size_t>(size));
}

std::string_view SqliteStatement::Sql() const {
  const char* sql = sqlite3_sql(stmt_.get());
  return sql == nullptr ? std::string_view() : std::string_view(sql);
}

}  // namespace sparktrace::tracing::store
