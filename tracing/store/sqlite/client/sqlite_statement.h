#pragma once
// SqliteStatement: RAII owner of one prepared SQLite statement (sqlite3_stmt), finalized on
// destruction. Binding never fails loudly on its own: the first bind error is remembered and returned by
// the next Step(), so call sites bind a whole row and check once.
//
// Threads: a statement belongs to its connection and is used by whichever single thread uses that
// connection; it is not safe for concurrent use.
// Lifetime: must be destroyed before its SqliteConnection (the connection is closed with
// sqlite3_close_v2, so a leftover statement cannot crash, only delay the close).

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sparktrace::tracing::store {

class SqliteStatement {
 public:
  // Takes ownership of a statement prepared on an open connection; `stmt` must not be null.
  explicit SqliteStatement(sqlite3_stmt* stmt);

  // Parameter indexes are 1-based, as in SQLite. Text is copied (SQLITE_TRANSIENT), so the argument
  // need not outlive the call.
  void BindText(int index, std::string_view text);
  // Bytes as a BLOB (not text: SQLite never treats them as UTF-8), copied like text.
  void BindBlob(int index, std::string_view bytes);
  // Text and bytes bound without a copy (SQLITE_STATIC), for the write loops' hot rows: they must stay
  // alive and unchanged until the statement's next Reset() (which drops the bindings) or destruction.
  void BindTextUnowned(int index, std::string_view text);
  void BindBlobUnowned(int index, std::string_view bytes);
  void BindInt64(int index, std::int64_t value);
  void BindDouble(int index, double value);
  void BindNull(int index);

  // Runs the statement one step: true when a row is available, false when it has finished.
  // Returns the first bind error instead, if any; errors carry SQLite's message.
  Result<bool> Step();
  // Steps until done, for statements that return no rows (or whose rows are of no interest).
  Result<void> Run();
  // Makes the statement ready for new bindings; cheap, call before each use.
  void Reset();
  // Makes it ready to run again with the same bindings, for a caller that binds every parameter anew
  // before each run: clearing them first (Reset) cost a statement of 32 rows' 544 parameters a span.
  void ResetKeepingBindings();

  // Column indexes are 0-based, as in SQLite; valid after Step() returned true.
  bool ColumnIsNull(int index) const;
  bool ColumnIsBlob(int index) const;
  std::int64_t ColumnInt64(int index) const;
  double ColumnDouble(int index) const;
  std::string ColumnText(int index) const;
  // The same text without a copy; valid until the next Step(), Reset() or a conversion of this column.
  std::string_view ColumnView(int index) const;
  // A BLOB column's bytes without a copy, on the same terms as ColumnView.
  std::string_view ColumnBlobView(int index) const;
  // Steps until done and returns one text column of every row (e.g. a list of trace ids).
  Result<std::vector<std::string>> CollectText(int column = 0);

  // "prepare <sql>" style context for error messages: the statement's SQL text.
  std::string_view Sql() const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
  };

  void NoteBindResult(int rc, int index);

  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  int bind_error_ = SQLITE_OK;
  int bind_error_index_ = 0;
};

}  // namespace sparktrace::tracing::store
