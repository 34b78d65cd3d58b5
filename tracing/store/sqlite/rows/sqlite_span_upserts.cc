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
  auto ran = RunManyRows(*chunk_, *one_, rows.size(), kSpansPerStatement, kSpanRowParameters,
                         [&](SqliteStatement& upsert, std::size_t at, int first) {
                           BindSpanRow(upsert, rows[order[at]], *sources[order[at]], first);
                         });
  if (!ran.ok()) return ran.error();
  return rows.size();
}

}  // namespace sparktrace::tracing::store
