#include "tracing/store/sqlite/rows/sqlite_new_summaries.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <utility>

#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"

namespace sparktrace::tracing::store {
namespace {

constexpr int kPerStatement = static_cast<int>(SqliteNewSummaries::kSummariesPerStatement);

// The columns a new summary writes, with the rules of kRefreshSummarySql (sqlite_span_rows.h) for
// what the batch computed them from.
constexpr std::string_view kSummaryColumns =
    "trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id, task_id, run_id, "
    "try_number, awaited_parents, attempt, map_index";
constexpr int kSummaryParameters = 13;

// Binds summary's parameters from `first` on, without copies: the summary's views outlive the run.
void BindSummary(SqliteStatement& insert, const NewSummary& summary, int first) {
  const int at = first - 1;  // parameter n of the summary is at + n
  const TraceSummaryRow& row = summary.row;
  insert.BindBlobUnowned(at + 1, summary.trace_id);
  BindStoredName(insert, at + 2, row.root_name);
  insert.BindInt64(at + 3, row.start_unix_nano);
  insert.BindInt64(at + 4, row.end_unix_nano);
  insert.BindInt64(at + 5, row.span_count);
  insert.BindInt64(at + 6, row.error_count);
  BindOptionalTextUnowned(insert, at + 7, row.dag_id);
  BindOptionalTextUnowned(insert, at + 8, row.task_id);
  BindOptionalTextUnowned(insert, at + 9, row.run_id);
  BindOptionalInt(insert, at + 10, row.try_number);
  const std::optional<std::string>* awaited = summary.awaited_parents;
  BindOptionalTextUnowned(insert, at + 11, awaited != nullptr && *awaited ? &**awaited : nullptr);
  // 1: it holds its attempt without identity, 2: its one Airflow part, whose map index it keeps
  // (index/sqlite_summary_attempts.h).
  const bool holds_part = summary.held_part_map_index.has_value();
  BindOptionalInt(insert, at + 12,
                  summary.holds_attempt ? std::optional<std::int64_t>(1)
                  : holds_part          ? std::optional<std::int64_t>(2)
                                        : std::nullopt);
  BindOptionalInt(insert, at + 13, summary.held_part_map_index);
}

std::string LookupSql() {
  std::string ids;
  for (int i = 1; i <= kPerStatement; ++i) ids += fmt::format("{}?{}", i == 1 ? "" : ", ", i);
  return fmt::format("SELECT trace_id FROM traces WHERE trace_id IN ({})", ids);
}

std::string InsertSql(int rows) {
  return fmt::format("INSERT INTO traces ({}) VALUES {}", kSummaryColumns,
                     NumberedValuesSql(rows, kSummaryParameters));
}

}  // namespace

Result<SqliteNewSummaries> SqliteNewSummaries::Prepare(SqliteConnection& db) {
  auto lookup = db.Prepare(LookupSql(), /*persistent=*/true);
  if (!lookup.ok()) return lookup.error();
  auto many = db.Prepare(InsertSql(kPerStatement), /*persistent=*/true);
  if (!many.ok()) return many.error();
  auto one = db.Prepare(InsertSql(1), /*persistent=*/true);
  if (!one.ok()) return one.error();
  return SqliteNewSummaries(std::make_unique<SqliteStatement>(std::move(lookup).value()),
                            std::make_unique<SqliteStatement>(std::move(many).value()),
                            std::make_unique<SqliteStatement>(std::move(one).value()));
}

SqliteNewSummaries::SqliteNewSummaries(std::unique_ptr<SqliteStatement> lookup,
                                       std::unique_ptr<SqliteStatement> insert_many,
                                       std::unique_ptr<SqliteStatement> insert_one)
    : lookup_(std::move(lookup)), insert_many_(std::move(insert_many)), insert_one_(std::move(insert_one)) {}

SqliteNewSummaries::SqliteNewSummaries(SqliteNewSummaries&&) noexcept = default;
SqliteNewSummaries& SqliteNewSummaries::operator=(SqliteNewSummaries&&) noexcept = default;
SqliteNewSummaries::~SqliteNewSummaries() = default;

Result<void> SqliteNewSummaries::MarkStored(std::span<const NewSummary> summaries, std::vector<bool>& is_new) {
  SqliteStatement& lookup = *lookup_;
  for (std::size_t first = 0; first < summaries.size(); first += kSummariesPerStatement) {
    const std::size_t count = std::min(kSummariesPerStatement, summaries.size() - first);
    lookup.Reset();
    // A short last chunk binds NULL to the rest: `trace_id IN (…, NULL)` matches no row by them.
    for (std::size_t i = 0; i < kSummariesPerStatement; ++i) {
      if (i < count) {
        lookup.BindBlobUnowned(static_cast<int>(i) + 1, summaries[first + i].trace_id);
      } else {
        lookup.BindNull(static_cast<int>(i) + 1);
      }
    }
    while (true) {
      auto row = lookup.Step();
      if (!row.ok()) {
        lookup.Reset();
        return row.error();
      }
      if (!*row) break;
      const std::string_view stored = lookup.ColumnBlobView(0);
      for (std::size_t i = first; i < first + count; ++i) {
        if (summaries[i].trace_id == stored) is_new[i] = false;
      }
    }
  }
  lookup.Reset();
  return {};
}

Result<void> SqliteNewSummaries::InsertNew(std::span<const NewSummary> summaries, const std::vector<bool>& is_new) {
  std::vector<const NewSummary*> fresh;
  fresh.reserve(summaries.size());
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    if (is_new[i]) fresh.push_back(&summaries[i]);
  }
  return RunManyRows(*insert_many_, *insert_one_, fresh.size(), kSummariesPerStatement, kSummaryParameters,
                     [&fresh](SqliteStatement& insert, std::size_t at, int first) {
                       BindSummary(insert, *fresh[at], first);
                     });
}

}  // namespace sparktrace::tracing::store
