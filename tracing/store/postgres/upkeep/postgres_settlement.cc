#include "tracing/store/postgres/upkeep/postgres_settlement.h"

#include <spdlog/fmt/fmt.h>

#include <optional>
#include <string>
#include <vector>

#include "tracing/store/task_index/attempt_row_sql.h"

namespace sparktrace::tracing::store {
namespace {

constexpr std::string_view kUnsettled = kUnsettledAttemptSql;

std::int64_t Nanos(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

PgParam Number(const std::optional<double>& value) {
  if (!value) return std::nullopt;
  return fmt::format("{}", *value);  // the shortest text that reads back as the same double
}

}  // namespace

Result<DueAttempts> ListPostgresDueAttempts(PgConnection& db, std::chrono::system_clock::time_point now,
                                            std::chrono::milliseconds quiet, std::size_t limit) {
  DueAttempts result;
  auto count = db.Exec(fmt::format("SELECT count(*) FROM task_attempts WHERE {}", kUnsettled));
  if (!count.ok()) return count.error();
  result.backlog = count->Int64(0, 0);
  if (limit == 0) return result;
  const std::int64_t cutoff =
      Nanos(now) - std::chrono::duration_cast<std::chrono::nanoseconds>(quiet).count();
  auto rows = db.Query(
      fmt::format(
          "SELECT airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, indexed_at FROM "
          "task_attempts WHERE {} AND indexed_at <= $1::bigint ORDER BY indexed_at LIMIT $2::bigint",
          kUnsettled),
      {std::to_string(cutoff), std::to_string(limit)});
  if (!rows.ok()) return rows.error();
  for (int row = 0; row < rows->rows(); ++row) {
    DueAttempt due;
    due.ref.airflow = rows->Int64(row, 0) != 0;
    due.ref.key = TaskAttemptKey{std::string(rows->Text(row, 1)), std::string(rows->Text(row, 2)),
                                 std::string(rows->Text(row, 3)), rows->Int64(row, 4), rows->Int64(row, 5)};
    due.ref.trace_key = std::string(rows->Text(row, 6));
    due.indexed_unix_nano = static_cast<std::uint64_t>(rows->Int64(row, 7));
    result.due.push_back(std::move(due));
  }
  return result;
}

Result<SettleClaim> RecordPostgresSettlement(PgConnection& db, const AttemptRef& ref,
                                             std::uint64_t indexed_unix_nano, const SettledFigures& figures) {
  // One statement: `old` locks the row (FOR UPDATE) and re-reads it once a concurrent settler's update
  // has committed, so the second of two settlers finds settled_version already at this version and
  // updates nothing. RETURNING gives the figures the update replaced.
  auto updated = db.Query(
      R"sql(
WITH old AS (
  SELECT airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, settled_at, core_seconds,
         gib_seconds, money, idle_fraction, regression
  FROM task_attempts
  WHERE airflow = $1::int AND dag_id = $2 AND task_id = $3 AND run_id = $4 AND try_number = $5::bigint
    AND map_index = $6::bigint AND trace_key = $7 AND indexed_at = $8::bigint
    AND settled_version IS DISTINCT FROM $8::bigint
  FOR UPDATE)
UPDATE task_attempts t SET settled_version = $8::bigint, settled_at = $9::bigint,
  core_seconds = $10::double precision, gib_seconds = $11::double precision, money = $12::double precision,
  idle_fraction = $13::double precision, regression = $14::int
FROM old
WHERE t.airflow = old.airflow AND t.dag_id = old.dag_id AND t.task_id = old.task_id AND t.run_id = old.run_id
  AND t.try_number = old.try_number AND t.map_index = old.map_index AND t.trace_key = old.trace_key
RETURNING old.settled_at, old.core_seconds, old.gib_seconds, old.money, old.idle_fraction, old.regression
)sql",
      {std::to_string(ref.airflow ? 1 : 0), ref.key.dag_id, ref.key.task_id, ref.key.run_id,
       std::to_string(ref.key.try_number), std::to_string(ref.key.map_index), ref.trace_key,
       std::to_string(indexed_unix_nano), std::to_string(figures.settled_unix_nano),
       Number(figures.core_seconds), Number(figures.gib_seconds), Number(figures.money),
       Number(figures.idle_fraction), std::to_string(figures.regression ? 1 : 0)});
  if (!updated.ok()) return updated.error();
  SettleClaim claim;
  if (updated->rows() == 0) return claim;
  claim.claimed = true;
  if (!updated->IsNull(0, 0)) {
    const auto number = [&](int column) -> std::optional<double> {
      if (updated->IsNull(0, column)) return std::nullopt;
      return updated->Double(0, column);
    };
    SettledFigures previous;
    previous.settled_unix_nano = static_cast<std::uint64_t>(updated->Int64(0, 0));
    previous.core_seconds = number(1);
    previous.gib_seconds = number(2);
    previous.money = number(3);
    previous.idle_fraction = number(4);
    previous.regression = updated->Int64(0, 5) != 0;
    claim.previous = previous;
  }
  return claim;
}

}  // namespace sparktrace::tracing::store
