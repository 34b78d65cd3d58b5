#include "tracing/store/sqlite/rows/sqlite_span_upserts.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"

namespace sparktrace::tracing::store {
namespace {

// The batch's spans by (trace id, span id), the versions of one span in the batch's order.
std::vector<std::size_t> InKeyOrder(const std::vector<const Span*>& sources) {
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&sources](std::size_t a, std::size_t b) {
    return std::tie(sources[a]->trace_id, sources[a]->span_id) <
           std::tie(sources[b]->trace_id, sources[b]->span_id);
  });
  return order;
}

}  // namespace

Result<SqliteSpanUpserts> SqliteSpanUpserts::Prepare(SqliteConnection& db) {
  auto one = db.Prepare(kUpsertSpanSql, /*persistent=*/true);
  if (!one.ok()) return one.error();
  auto chunk = db.Prepare(UpsertSpansSql(static_cast<int>(kSpansPerStatement)), /*persistent=*/true);
  if (!chunk.ok()) return chunk.error();
  return SqliteSpanUpserts(std::make_unique<SqliteStatement>(std::move(one).value()),
                           std::make_unique<SqliteStatement>(std::move(chunk).value()));
}

SqliteSpanUpserts::SqliteSpanUpserts(std::unique_ptr<SqliteStatement> one,
                                     std::unique_ptr<SqliteStatement> chunk)
    : one_(std::move(one)), chunk_(std::move(chunk)) {}

SqliteSpanUpserts::SqliteSpanUpserts(SqliteSpanUpserts&&) noexcept = default;
SqliteSpanUpserts& SqliteSpanUpserts::operator=(SqliteSpanUpserts&&) noexcept = default;
SqliteSpanUpserts::~SqliteSpanUpserts() = default;

Result<std::size_t> SqliteSpanUpserts::Upsert(const std::vector<StoredSpanRow>& rows,
                                              const std::vector<const Span*>& sources) {
  const std::vector<std::size_t> order = InKeyOrder(sources);
  std::size_t next = 0;
  SqliteStatement& chunk = *chunk_;
  for (; rows.size() - next >= kSpansPerStatement; next += kSpansPerStatement) {
    chunk.Reset();
    for (std::size_t row = 0; row < kSpansPerStatement; ++row) {
      const std::size_t i = order[next + row];
      BindSpanRow(chunk, rows[i], *sources[i], 1 + static_cast<int>(row) * kSpanRowParameters);
    }
    if (auto ran = chunk.Run(); !ran.ok()) {
      chunk.Reset();
      return ran.error();
    }
  }
  chunk.Reset();  // drop the copies of the last chunk's text
  SqliteStatement& one = *one_;
  for (; next < rows.size(); ++next) {
    one.Reset();
    BindSpanRow(one, rows[order[next]], *sources[order[next]]);
    if (auto ran = one.Run(); !ran.ok()) {
      one.Reset();
      return ran.error();
    }
  }
  one.Reset();  // drop the copies of the last span's text
  return rows.size();
}

}  // namespace sparktrace::tracing::store
