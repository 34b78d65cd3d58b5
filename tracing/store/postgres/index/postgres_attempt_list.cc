#include "tracing/store/postgres/index/postgres_attempt_list.h"

#include <spdlog/fmt/fmt.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/held/postgres_held_parts.h"
#include "tracing/store/postgres/index/postgres_index_reads.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/attempt_row_sql.h"
#include "tracing/store/task_index/index_columns.h"
#include "tracing/store/task_index/task_index.h"

namespace sparktrace::tracing::store {
namespace {

// kAttemptRowColumns (index_columns.h) with an attempt's traces: the row of an attempt without
// identity leaves trace_ids empty, its one trace being its trace key (postgres_schema.cc, version 3),
// and an Airflow attempt's traces are read from its parts (version 6), rows and held ones (version 15).
// Read from task_attempts as `t`; at most `max_trace_ids` traces and one more (0: all).
std::string AttemptRowReadColumns(std::size_t max_trace_ids) {
  return AttemptRowReadColumnsSql(
      "t", fmt::format("string_agg({}, ',' ORDER BY p.trace_id)", TraceHexSql("p.trace_id")),
      PostgresHeldTracesOfKeySql(), max_trace_ids);
}

// The attempts held by their trace's summary (task_index.h, SummaryHoldsAttempt) as task_attempts rows
// named `t` (AttemptRowReadColumns reads them as it reads a row; an attempt without identity's one
// trace is its trace key): its end is the version of its figures, nothing is settled. `trace_match`
// narrows the summaries read by their own key (" AND trace_id = …", or empty).
std::string HeldAttemptsSql(std::string_view trace_match) {
  return fmt::format(
      "(SELECT 0 AS airflow, ''::text AS dag_id, ''::text AS task_id, ''::text AS run_id, 0::bigint AS "
      "try_number, -1::bigint AS map_index, {} COLLATE \"C\" AS trace_key, {} AS "
      "name, ''::text AS trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, 0::bigint AS "
      "open_count, 0::bigint AS resource_wait_ms, 0::bigint AS compute_ms, 0::bigint AS io_write_ms, "
      "0::bigint "
      "AS idle_ms, 0::bigint AS finding_count, NULL::text AS top_finding, CASE WHEN error_count > 0 THEN "
      "'failed' ELSE 'success' END AS state, end_unix_nano AS indexed_at, NULL::bigint AS settled_version, "
      "NULL::bigint AS settled_at, NULL::double precision AS core_seconds, NULL::double precision AS "
      "gib_seconds, NULL::double precision AS money, NULL::double precision AS idle_fraction, NULL::integer "
      "AS regression FROM traces WHERE attempt{}) t",
      TraceHexSql("trace_id"), NameOfStoredSql(SpanSqlDialect::kPostgres, "root_name"), trace_match);
}

}  // namespace

Result<TaskAttemptPage> ListPostgresTaskAttempts(PgConnection& db, const TaskAttemptFilter& filter) {
  // Only the filters in use appear in the SQL; values are parameters, never spliced in.
  std::vector<PgParam> params;
  const auto next = [&params](std::string value) {
    params.emplace_back(std::move(value));
    return fmt::format("${}", params.size());
  };
  std::string where = " WHERE true";
  // Only Airflow rows have a dag or task that is not empty, and only they are in task_attempts_by_task
  // (postgres_schema.cc, version 3), which PostgreSQL uses when the query says so.
  const auto names = [](const std::optional<std::string>& value) { return value && !value->empty(); };
  if (filter.airflow_only || names(filter.dag_id) || names(filter.task_id)) where += " AND airflow = 1";
  for (const task_index::AttemptCondition& condition : task_index::AttemptConditions(filter)) {
    if (const auto* text = std::get_if<std::string>(&condition.value)) {
      where += fmt::format(" AND {} {}", condition.column_op, next(*text));
    } else if (const auto* number = std::get_if<std::int64_t>(&condition.value)) {
      where += fmt::format(" AND {} {}::bigint", condition.column_op, next(std::to_string(*number)));
    } else {
      where += fmt::format(" AND {} {}::bigint", condition.column_op,
                           next(std::to_string(std::get<std::uint64_t>(condition.value))));
    }
  }
  std::string held_trace_match;
  if (filter.trace_ids) {
    if (filter.trace_ids->empty()) return TaskAttemptPage{};
    // The Airflow attempts through their parts, the others by key (kWithoutIdentityKey): a semi-join
    // PostgreSQL drives from the ids, then task_attempts' primary key.
    const std::string ids = next(TextArray(*filter.trace_ids));
    // The ids as stored: only a trace id's hex (a uuid's input fails on anything else; a search may pass
    // any text).
    const std::string stored_ids =
        fmt::format("ARRAY(SELECT {} FROM unnest({}::text[]) id WHERE id ~ '^[0-9a-f]{{32}}$')",
                    TraceIdOfHexSql("id"), ids);
    where += fmt::format(
        " AND (t.trace_key, t.airflow, t.dag_id, t.task_id, t.run_id, t.try_number, t.map_index) IN ("
        "SELECT p.trace_key, p.airflow, p.dag_id, p.task_id, p.run_id, p.try_number, p.map_index "
        "FROM attempt_parts p WHERE p.airflow = 1 AND p.trace_id = ANY({1}) "
        "UNION SELECT p.trace_key, p.airflow, p.dag_id, p.task_id, p.run_id, p.try_number, p.map_index "
        "FROM ({2}) p "
        "UNION SELECT id COLLATE \"C\", 0, '', '', '', 0, -1 FROM unnest({0}::text[]) id)",
        ids, stored_ids, PostgresHeldPartRowsSql(fmt::format("trace_id = ANY({})", stored_ids)));
    // The summaries' own key, so that a held attempt is found by it rather than by a scan.
    held_trace_match = fmt::format(" AND trace_id = ANY({})", stored_ids);
  }
  // The attempts held by their trace's summary (task_index.h, SummaryHoldsAttempt) beside the rows,
  // under the same conditions (its columns are a row's): none when the filter asks for Airflow ones.
  const bool airflow_only = filter.airflow_only || names(filter.dag_id) || names(filter.task_id);
  const std::string held = airflow_only ? std::string() : HeldAttemptsSql(held_trace_match) + where;
  TaskAttemptPage page;
  std::string count_sql = "SELECT (SELECT count(*) FROM task_attempts t" + where + ")";
  if (!held.empty()) count_sql += " + (SELECT count(*) FROM " + held + ")";
  auto count = db.Query(count_sql, params);
  if (!count.ok()) return count.error();
  page.total = count->Int64(0, 0);

  // By start, the held arm is read from the start of the page's edge among the rows on
  // (PageStartBoundOf), through traces_by_start.
  std::string held_page = held;
  if (const std::optional<PageStartBound> bound = PageStartBoundOf(filter); bound && !held.empty()) {
    auto edge =
        db.Query(fmt::format("SELECT start_unix_nano FROM task_attempts t{} ORDER BY start_unix_nano {} "
                             "LIMIT 1 OFFSET {}",
                             where, bound->rows_order, bound->edge_offset),
                 params);
    if (!edge.ok()) return edge.error();
    if (edge->rows() == 1) {
      held_page += fmt::format(" AND start_unix_nano {} {}::bigint", bound->held_from,
                               next(std::to_string(edge->Int64(0, 0))));
    }
  }
  const std::string limit = next(std::to_string(filter.limit));
  const std::string offset = next(std::to_string(filter.offset));
  // The page first, of the rows as stored (a trace key, kAttemptRowColumns), then each of its rows gets
  // its traces (AttemptRowReadColumns): an Airflow attempt's are a subquery of its parts, which
  // PostgreSQL ran for every row of the store before sorting them (110 ms of a 130 ms page over
  // 20,000 attempts).
  std::string arms = fmt::format("SELECT trace_key, {} FROM task_attempts t{}", kAttemptRowColumns, where);
  if (!held.empty()) {
    arms += fmt::format(" UNION ALL SELECT trace_key, {} FROM {}", kAttemptRowColumns, held_page);
  }
  const std::string order = TaskAttemptOrderSql(filter.order);
  auto rows =
      db.Query(fmt::format("SELECT {} FROM (SELECT * FROM ({}) t ORDER BY {} LIMIT {}::bigint OFFSET "
                           "{}::bigint) t ORDER BY {}",
                           AttemptRowReadColumns(filter.max_trace_ids), arms, order, limit, offset, order),
               params);
  if (!rows.ok()) return rows.error();
  for (int row = 0; row < rows->rows(); ++row) {
    page.rows.push_back(AttemptRowFrom(ResultColumns(*rows, row)));
    BoundTraceIds(page.rows.back(), filter.max_trace_ids);
  }
  return page;
}

}  // namespace sparktrace::tracing::store
