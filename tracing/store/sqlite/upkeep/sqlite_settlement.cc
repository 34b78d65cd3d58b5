#include "tracing/store/sqlite/upkeep/sqlite_settlement.h"

#include <spdlog/fmt/fmt.h>

#include <optional>

#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"
#include "tracing/store/task_index/attempt_row_sql.h"

namespace sparktrace::tracing::store {

// indexed_at: when the row's sums last changed (0 for rows indexed before version 4: quiet since
// long, so they settle on the first passes). settled_version: the indexed_at the figures are of;
// figures of an older version stay shown until the row settles again. The partial index holds only
// the rows due (or about to be), so listing them stays cheap however many attempts are settled.
const std::string_view kSettlementSchema = R"sql(
ALTER TABLE task_attempts ADD COLUMN indexed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_attempts ADD COLUMN settled_version INTEGER;
ALTER TABLE task_attempts ADD COLUMN settled_at INTEGER;
ALTER TABLE task_attempts ADD COLUMN core_seconds REAL;
ALTER TABLE task_attempts ADD COLUMN gib_seconds REAL;
ALTER TABLE task_attempts ADD COLUMN money REAL;
ALTER TABLE task_attempts ADD COLUMN idle_fraction REAL;
ALTER TABLE task_attempts ADD COLUMN regression INTEGER;
CREATE INDEX task_attempts_unsettled ON task_attempts (indexed_at)
  WHERE state <> 'running' AND (settled_version IS NULL OR settled_version <> indexed_at);
)sql";

// settles: 0 for an attempt with nothing to settle, a trace without Airflow identity that names no
// application (a Config call of a client without a traceparent, say): no executors, so no cost, and no
// task, so no history to regress against. Such rows were a trace each in the settling queue, which
// passes of --settle-max-per-pass could not empty under a flood of calls, and ahead of the Airflow
// attempts that ended after them. The rows written from now on say it themselves
// (sqlite_task_index.cc, BindWholeAttempt); of the rows written before, those still waiting are taken
// out of the queue here (the settled ones are not in the index and keep their figures), and the
// index is built again without any of them.
const std::string_view kSettlesSchema = R"sql(
ALTER TABLE task_attempts ADD COLUMN settles INTEGER NOT NULL DEFAULT 1;
UPDATE task_attempts SET settles = 0
  WHERE airflow = 0 AND state <> 'running' AND (settled_version IS NULL OR settled_version <> indexed_at)
    AND lower(hex(trace_key)) NOT IN (SELECT trace_id FROM attempt_parts WHERE airflow = 0 AND app_id IS NOT NULL);
DROP INDEX task_attempts_unsettled;
CREATE INDEX task_attempts_unsettled ON task_attempts (indexed_at)
  WHERE settles = 1 AND state <> 'running' AND (settled_version IS NULL OR settled_version <> indexed_at);
)sql";

namespace {

constexpr std::string_view kUnsettled = kUnsettledAttemptSql;
// `(?1 + 0)`: a bound value compared with a partial index's column would make SQLite prepare the
// statement again at every binding (sqlite_task_index.cc's kKeyMatch).
constexpr std::string_view kKeyMatch =
    "airflow = (?1 + 0) AND dag_id = ?2 AND task_id = ?3 AND run_id = ?4 AND try_number = ?5 "
    "AND map_index = ?6 "
    "AND trace_key = ?7";

void BindRef(SqliteStatement& stmt, const AttemptRef& ref) {
  stmt.BindInt64(1, ref.airflow ? 1 : 0);
  stmt.BindText(2, ref.key.dag_id);
  stmt.BindText(3, ref.key.task_id);
  stmt.BindText(4, ref.key.run_id);
  stmt.BindInt64(5, ref.key.try_number);
  stmt.BindInt64(6, ref.key.map_index);
  if (ref.airflow) {
    stmt.BindText(7, ref.trace_key);
  } else {
    BindIdHex(stmt, 7, ref.trace_key);  // a trace id, a BLOB since schema version 10
  }
}

void BindOptional(SqliteStatement& stmt, int index, const std::optional<double>& value) {
  if (value) {
    stmt.BindDouble(index, *value);
  } else {
    stmt.BindNull(index);
  }
}

std::optional<double> OptionalDouble(const SqliteStatement& stmt, int column) {
  if (stmt.ColumnIsNull(column)) return std::nullopt;
  return stmt.ColumnDouble(column);
}

std::int64_t Nanos(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

}  // namespace

Result<DueAttempts> ListSqliteDueAttempts(SqliteConnection& db, std::chrono::system_clock::time_point now,
                                          std::chrono::milliseconds quiet, std::size_t limit) {
  DueAttempts result;
  auto count = db.Prepare(fmt::format("SELECT count(*) FROM task_attempts WHERE {}", kUnsettled));
  if (!count.ok()) return count.error();
  auto counted = count->Step();
  if (!counted.ok()) return counted.error();
  result.backlog = *counted ? count->ColumnInt64(0) : 0;
  if (limit == 0) return result;

  auto select = db.Prepare(fmt::format(
      "SELECT airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, indexed_at FROM "
      "task_attempts WHERE {} AND indexed_at <= ?1 ORDER BY indexed_at LIMIT ?2",
      kUnsettled));
  if (!select.ok()) return select.error();
  select->BindInt64(1, Nanos(now) - std::chrono::duration_cast<std::chrono::nanoseconds>(quiet).count());
  select->BindInt64(2, static_cast<std::int64_t>(limit));
  while (true) {
    auto row = select->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    DueAttempt due;
    due.ref.airflow = select->ColumnInt64(0) != 0;
    due.ref.key = TaskAttemptKey{select->ColumnText(1), select->ColumnText(2), select->ColumnText(3),
                                 select->ColumnInt64(4), select->ColumnInt64(5)};
    due.ref.trace_key = IdHexOfColumn(*select, 6);
    due.indexed_unix_nano = static_cast<std::uint64_t>(select->ColumnInt64(7));
    result.due.push_back(std::move(due));
  }
  return result;
}

Result<SettleClaim> RecordSqliteSettlement(SqliteConnection& db, const AttemptRef& ref,
                                           std::uint64_t indexed_unix_nano, const SettledFigures& figures) {
  // Read and update in the caller's write transaction: SQLite has one writer at a time, so no other
  // settler can record this version between the two statements.
  auto read = db.Prepare(fmt::format(
      "SELECT settled_version, settled_at, core_seconds, gib_seconds, money, idle_fraction, regression "
      "FROM task_attempts WHERE {} AND indexed_at = ?8 AND (settled_version IS NULL OR settled_version <> "
      "?8)",
      kKeyMatch));
  if (!read.ok()) return read.error();
  BindRef(*read, ref);
  read->BindInt64(8, static_cast<std::int64_t>(indexed_unix_nano));
  auto found = read->Step();
  if (!found.ok()) return found.error();
  SettleClaim claim;
  if (!*found) return claim;
  if (!read->ColumnIsNull(1)) {
    SettledFigures previous;
    previous.settled_unix_nano = static_cast<std::uint64_t>(read->ColumnInt64(1));
    previous.core_seconds = OptionalDouble(*read, 2);
    previous.gib_seconds = OptionalDouble(*read, 3);
    previous.money = OptionalDouble(*read, 4);
    previous.idle_fraction = OptionalDouble(*read, 5);
    previous.regression = read->ColumnInt64(6) != 0;
    claim.previous = previous;
  }
  read->Reset();

  auto update =
      db.Prepare(fmt::format("UPDATE task_attempts SET settled_version = ?8, settled_at = ?9, core_seconds = "
                             "?10, gib_seconds = ?11, "
                             "money = ?12, idle_fraction = ?13, regression = ?14 WHERE {}",
                             kKeyMatch));
  if (!update.ok()) return update.error();
  BindRef(*update, ref);
  update->BindInt64(8, static_cast<std::int64_t>(indexed_unix_nano));
  update->BindInt64(9, static_cast<std::int64_t>(figures.settled_unix_nano));
  BindOptional(*update, 10, figures.core_seconds);
  BindOptional(*update, 11, figures.gib_seconds);
  BindOptional(*update, 12, figures.money);
  BindOptional(*update, 13, figures.idle_fraction);
  update->BindInt64(14, figures.regression ? 1 : 0);
  if (auto ran = update->Run(); !ran.ok()) return ran.error();
  claim.claimed = true;
  return claim;
}

}  // namespace sparktrace::tracing::store
