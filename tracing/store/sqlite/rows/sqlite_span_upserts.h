#pragma once
// A batch's span rows upserted many to a statement, in key order.
//
// Whole chunks of kSpansPerStatement spans go in one statement, the rest one by one: a statement's
// own cost (reset, cursors opened and closed, its end) is then paid once for a chunk of spans. The
// rows go in by (trace id, span id), a span's versions in the batch's order (the upsert applies them
// in turn, the later kept as it would be alone): consecutive rows then land on the same or the next
// page of the spans table instead of one anywhere in it.
//
// Threads: the connection's (one store object, one thread at a time).

#include <cstddef>
#include <memory>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

class SqliteConnection;
class SqliteStatement;

class SqliteSpanUpserts {
 public:
  // Spans a chunked statement writes (sqlite_span_rows.h, UpsertSpansSql): 32 × 17 parameters, well
  // inside SQLite's limit, and enough that a statement's own cost is small next to its rows'.
  static constexpr std::size_t kSpansPerStatement = 32;

  // Prepares the single and the chunked upsert on the writer's connection.
  static Result<SqliteSpanUpserts> Prepare(SqliteConnection& db);

  SqliteSpanUpserts(SqliteSpanUpserts&&) noexcept;
  SqliteSpanUpserts& operator=(SqliteSpanUpserts&&) noexcept;
  ~SqliteSpanUpserts();

  // Upserts rows[i] (whose span is sources[i]) for every i; returns how many rows were written.
  Result<std::size_t> Upsert(const std::vector<StoredSpanRow>& rows, const std::vector<const Span*>& sources);

 private:
  SqliteSpanUpserts(std::unique_ptr<SqliteStatement> one, std::unique_ptr<SqliteStatement> chunk);

  std::unique_ptr<SqliteStatement> one_;    // kUpsertSpanSql
  std::unique_ptr<SqliteStatement> chunk_;  // kSpansPerStatement spans
};

}  // namespace sparktrace::tracing::store
