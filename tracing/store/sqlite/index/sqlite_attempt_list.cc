#include "tracing/store/sqlite/index/sqlite_attempt_list.h"

#include <spdlog/fmt/fmt.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/index/sqlite_index_reads.h"
#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/index_columns.h"
#include "tracing/store/task_index/task_index.h"

namespace sparktrace::tracing::store {

Result<TaskAttemptPage> ListTaskAttempts(SqliteConnection& db, const TaskAttemptFilter& filter) {
  // Two arms: the task_attempts rows, and the attempts held by their trace's summary
  // (index/sqlite_summary_attempts.h), which are all without identity. Only the filters in use appear
  // in the SQL, so that SQLite can pick the matching index; values are bound, never spliced in.
  std::string where = " WHERE 1";
  // Only Airflow rows have a dag or task that is not empty, and only they are in
  // task_attempts_by_task (sqlite_schema.cc, kAirflowOnlyIndexesSchema), which SQLite uses when the query
  // says so.
  const auto names = [](const std::optional<std::string>& value) { return value && !value->empty(); };
  const bool airflow_only = filter.airflow_only || names(filter.dag_id) || names(filter.task_id);
  if (airflow_only) where += " AND airflow = 1";
  // task_attempts_by_state holds the rows that are not 'success' only (sqlite_schema.cc,
  // kCompactSpansSchema); SQLite uses a partial index when the query repeats its condition.
  if (filter.state && *filter.state != "success") where += " AND state <> 'success'";
  const std::vector<task_index::AttemptCondition> conditions = task_index::AttemptConditions(filter);
  for (const task_index::AttemptCondition& condition : conditions) {
    where += fmt::format(" AND {} ?", condition.column_op);
  }
  std::string rows_where = where;
  std::string held_trace_match;
  if (filter.trace_ids) {
    if (filter.trace_ids->empty()) return TaskAttemptPage{};
    std::string placeholders;
    for (std::size_t i = 0; i < filter.trace_ids->size(); ++i) placeholders += i == 0 ? "?" : ", ?";
    rows_where += fmt::format(
        " AND (EXISTS (SELECT 1 FROM attempt_parts p WHERE p.airflow = task_attempts.airflow AND "
        "p.dag_id = task_attempts.dag_id AND p.task_id = task_attempts.task_id AND p.run_id = "
        "task_attempts.run_id "
        "AND p.try_number = task_attempts.try_number AND p.map_index = task_attempts.map_index AND "
        "p.trace_key = task_attempts.trace_key AND p.trace_id IN ({0})) "
        // an attempt without identity may have no part row (sqlite_schema.cc, kPartsOnlyWithAppIdSchema)
        "OR (task_attempts.airflow = 0 AND task_attempts.trace_key IN ({0})) "
        // nor an Airflow part its summary holds (index/sqlite_summary_attempts.h)
        "OR (task_attempts.airflow = 1 AND EXISTS ({1} AND h.trace_id IN ({0}))))",
        placeholders, fmt::format(fmt::runtime(kHeldTracesOfRowSql), "task_attempts"));
    held_trace_match = fmt::format("trace_id IN ({})", placeholders);
  }
  // Binds one arm's parameters from `index` on: the conditions, then (rows) the parts' trace ids (BLOBs
  // since schema version 17), the trace keys of attempts without identity (BLOBs since version 10) and
  // the ids of the summaries holding a part, or (held) the summaries' trace ids.
  const auto bind = [&filter, &conditions](SqliteStatement& stmt, int index, bool held_arm) {
    if (held_arm && filter.trace_ids) {
      for (const std::string& trace_id : *filter.trace_ids) BindIdHex(stmt, index++, trace_id);
    }
    for (const task_index::AttemptCondition& condition : conditions) {
      const int at = index++;
      if (const auto* text = std::get_if<std::string>(&condition.value)) {
        stmt.BindText(at, *text);
      } else if (const auto* number = std::get_if<std::int64_t>(&condition.value)) {
        stmt.BindInt64(at, *number);
      } else {
        stmt.BindInt64(at, static_cast<std::int64_t>(std::get<std::uint64_t>(condition.value)));
      }
    }
    if (!held_arm && filter.trace_ids) {
      for (int list = 0; list < 3; ++list) {
        for (const std::string& trace_id : *filter.trace_ids) BindIdHex(stmt, index++, trace_id);
      }
    }
    return index;
  };
  // An Airflow filter leaves the held attempts out, as does a state they never have.
  const bool with_held = !airflow_only && !(filter.state && *filter.state == "running");
  const std::string held_sql = with_held ? SummaryAttemptsSql(where, held_trace_match) : std::string();
  const auto bind_both = [&](SqliteStatement& stmt) {
    const int next = bind(stmt, 1, false);
    return with_held ? bind(stmt, next, true) : next;
  };

  TaskAttemptPage page;
  std::string count_sql = "SELECT (SELECT count(*) FROM task_attempts" + rows_where + ")";
  if (with_held) count_sql += fmt::format(" + (SELECT count(*) FROM ({}))", held_sql);
  auto count = db.Prepare(count_sql);
  if (!count.ok()) return count.error();
  bind_both(*count);
  auto counted = count->Step();
  if (!counted.ok()) return counted.error();
  page.total = *counted ? count->ColumnInt64(0) : 0;

  // By start, the held arm is read from the start of the page's edge among the rows on
  // (PageStartBoundOf): that bound is one more parameter after the arm's conditions.
  std::optional<std::int64_t> held_from;
  std::string held_page_sql = held_sql;
  const std::optional<PageStartBound> bound = PageStartBoundOf(filter);
  if (with_held && bound) {
    auto edge =
        db.Prepare(fmt::format("SELECT start_unix_nano FROM task_attempts{} ORDER BY start_unix_nano {} "
                               "LIMIT 1 OFFSET ?",
                               rows_where, bound->rows_order));
    if (!edge.ok()) return edge.error();
    edge->BindInt64(bind(*edge, 1, false), bound->edge_offset);
    auto found = edge->Step();
    if (!found.ok()) return found.error();
    if (*found) {
      held_from = edge->ColumnInt64(0);
      held_page_sql = SummaryAttemptsSql(fmt::format("{} AND start_unix_nano {} ?", where, bound->held_from),
                                         held_trace_match);
    }
  }

  // The page first, of the rows as stored (a trace key, kAttemptRowColumns): newest or oldest first,
  // both arms are read in traces_by_start's and task_attempts_by_start's order and merged; by cost, the
  // rows are sorted. Then each of the page's rows gets its traces (AttemptRowColumnsSql), its rows only:
  // an Airflow attempt's are a subquery of its parts, which a sort of every row would run for every row.
  std::string arms = fmt::format("SELECT trace_key, {} FROM task_attempts{}", kAttemptRowColumns, rows_where);
  if (with_held) arms += " UNION ALL " + held_page_sql;
  const bool by_start =
      filter.order == TaskAttemptOrder::kNewestFirst || filter.order == TaskAttemptOrder::kOldestFirst;
  const std::string order = TaskAttemptOrderSql(filter.order);
  const std::string page_sql =
      by_start || !with_held ? fmt::format("{} ORDER BY {} LIMIT ? OFFSET ?", arms, order)
                             : fmt::format("SELECT * FROM ({}) ORDER BY {} LIMIT ? OFFSET ?", arms, order);
  const std::string select_sql = fmt::format("SELECT {} FROM ({}) task_attempts ORDER BY {}",
                                             AttemptRowColumnsSql(filter.max_trace_ids), page_sql, order);
  auto select = db.Prepare(select_sql);
  if (!select.ok()) return select.error();
  int next = bind_both(*select);
  if (held_from) select->BindInt64(next++, *held_from);
  select->BindInt64(next, static_cast<std::int64_t>(filter.limit));
  select->BindInt64(next + 1, static_cast<std::int64_t>(filter.offset));
  while (true) {
    auto row = select->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    page.rows.push_back(AttemptRowFrom(StatementColumns(*select)));
    BoundTraceIds(page.rows.back(), filter.max_trace_ids);
  }
  return page;
}

}  // namespace sparktrace::tracing::store
