#pragma once
// What both backends read back for the task index, from one result row: a stored span as the index
// needs it (IndexSpanFrom, over span_rows/span_table_sql.h's IndexSpanColumnsSql) and an attempt's row
// (AttemptRowFrom, over kAttemptRowColumns). `Columns` is the backend's view of one result row
// (sqlite/sqlite_task_index.cc and postgres/postgres_task_index.cc adapt their statement and result):
//   bool IsNull(int) const;  std::int64_t Int64(int) const;  double Double(int) const;
//   std::string Text(int) const;  std::string_view View(int) const;
//   // A JSON number read from an attribute: SQLite's json_extract gives an integer, PostgreSQL's
//   // ->> gives text, parsed by the backend (nullopt: not a number).
//   std::optional<std::int64_t> JsonInteger(int) const;
//
// Header only (a template); pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tracing/store/task_attempts.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {

inline constexpr std::string_view kAttemptRowColumns =
    "airflow, dag_id, task_id, run_id, try_number, map_index, name, trace_ids, start_unix_nano, "
    "end_unix_nano, "
    "span_count, error_count, open_count, resource_wait_ms, compute_ms, io_write_ms, idle_ms, finding_count, "
    "top_finding, state, indexed_at, settled_version, settled_at, core_seconds, gib_seconds, money, "
    "idle_fraction, regression";

// Every column of attempt_parts (both backends name them alike), in the order each backend's task index
// writes a part and its held parts read back (sqlite/index/sqlite_summary_attempts.h,
// postgres/held/postgres_held_parts.h).
inline constexpr std::string_view kAttemptPartColumns =
    "airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, trace_id, name, app_id, "
    "start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, compute_ms, "
    "io_write_ms, idle_ms, finding_count, top_finding, top_impact, operation_count, failed_operation_count, "
    "failed_job_count";

// A span from the columns of IndexSpanColumnsSql, the first of them at `first`.
template <typename Columns>
IndexSpan IndexSpanFrom(const Columns& columns, int first) {
  const auto at = [first](int column) { return first + column; };
  IndexSpan span;
  span.span_id = columns.Text(at(0));
  if (!columns.IsNull(at(1))) span.parent_id = columns.Text(at(1));
  span.name = columns.Text(at(2));
  span.start = static_cast<std::uint64_t>(columns.Int64(at(3)));
  span.end = static_cast<std::uint64_t>(columns.Int64(at(4)));
  span.error = columns.Int64(at(5)) == 2;
  if (!columns.IsNull(at(6)) && !columns.IsNull(at(7))) {
    TaskAttemptKey key;
    key.dag_id = columns.Text(at(6));
    key.task_id = columns.Text(at(7));
    if (!columns.IsNull(at(8))) key.run_id = columns.Text(at(8));
    if (!columns.IsNull(at(9))) key.try_number = columns.Int64(at(9));
    if (!columns.IsNull(at(10))) key.map_index = columns.JsonInteger(at(10)).value_or(-1);
    span.identity = std::move(key);
  }
  if (!columns.IsNull(at(11))) span.phase_duration_ms = columns.JsonInteger(at(11));
  span.open = (!columns.IsNull(at(12)) && columns.View(at(12)) == "running") ||
              (!columns.IsNull(at(13)) && columns.View(at(13)) == "running");
  if (!columns.IsNull(at(14))) span.app_name = columns.Text(at(14));
  if (!columns.IsNull(at(15))) span.app_id = columns.Text(at(15));
  if (!columns.IsNull(at(16))) span.finding_events = columns.Text(at(16));
  return span;
}

// A stored part's figures from its attempt_parts columns name, app_id, start_unix_nano, end_unix_nano,
// span_count, open_count, the four phase columns, finding_count, top_finding, top_impact,
// operation_count, failed_operation_count and failed_job_count, the first at `first` (both backends'
// reads for increment/part_increment.h); nullopt for a row written before the operation counts were
// kept (SQLite schema 9, PostgreSQL schema 4).
template <typename Columns>
std::optional<Part> StoredPartFrom(const Columns& columns, int first) {
  const auto at = [first](int column) { return first + column; };
  if (columns.IsNull(at(13)) || columns.IsNull(at(14)) || columns.IsNull(at(15))) return std::nullopt;
  Part part;
  part.name = columns.Text(at(0));
  if (!columns.IsNull(at(1))) part.app_id = columns.Text(at(1));
  part.start = static_cast<std::uint64_t>(columns.Int64(at(2)));
  part.end = static_cast<std::uint64_t>(columns.Int64(at(3)));
  part.spans = columns.Int64(at(4));
  part.open = columns.Int64(at(5));
  for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
    part.phase_ms[phase] = columns.Int64(at(6 + static_cast<int>(phase)));
  part.findings = columns.Int64(at(10));
  if (!columns.IsNull(at(11))) part.top_finding = columns.Text(at(11));
  part.top_impact = columns.Double(at(12));
  part.operations = columns.Int64(at(13));
  part.failed_operations = columns.Int64(at(14));
  part.failed_jobs = columns.Int64(at(15));
  return part;
}

// Keeps the first `max_trace_ids` of a row's trace ids (0: all), read with one more than that
// (AttemptRowReadColumnsSql), and says whether there were more.
inline void BoundTraceIds(TaskAttemptRow& row, std::size_t max_trace_ids) {
  if (max_trace_ids == 0 || row.trace_ids.size() <= max_trace_ids) return;
  row.trace_ids.resize(max_trace_ids);
  row.trace_ids_truncated = true;
}

// An attempt's row from the columns of kAttemptRowColumns.
template <typename Columns>
TaskAttemptRow AttemptRowFrom(const Columns& columns) {
  TaskAttemptRow row;
  row.airflow = columns.Int64(0) != 0;
  row.key =
      TaskAttemptKey{columns.Text(1), columns.Text(2), columns.Text(3), columns.Int64(4), columns.Int64(5)};
  row.name = columns.Text(6);
  row.trace_ids = SplitCommas(columns.Text(7));
  row.start_unix_nano = static_cast<std::uint64_t>(columns.Int64(8));
  row.end_unix_nano = static_cast<std::uint64_t>(columns.Int64(9));
  row.span_count = columns.Int64(10);
  row.error_count = columns.Int64(11);
  row.open_count = columns.Int64(12);
  for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase) {
    row.phase_ms[phase] = columns.Int64(13 + static_cast<int>(phase));
  }
  row.finding_count = columns.Int64(17);
  if (!columns.IsNull(18)) row.top_finding_json = columns.Text(18);
  row.state = columns.Text(19);
  row.indexed_unix_nano = static_cast<std::uint64_t>(columns.Int64(20));
  if (!columns.IsNull(22)) {
    const auto number = [&columns](int column) -> std::optional<double> {
      if (columns.IsNull(column)) return std::nullopt;
      return columns.Double(column);
    };
    SettledFigures figures;
    figures.settled_unix_nano = static_cast<std::uint64_t>(columns.Int64(22));
    figures.core_seconds = number(23);
    figures.gib_seconds = number(24);
    figures.money = number(25);
    figures.idle_fraction = number(26);
    figures.regression = columns.Int64(27) != 0;
    row.settled = figures;
    row.settled_current = !columns.IsNull(21) && columns.Int64(21) == columns.Int64(20);
  }
  return row;
}

}  // namespace sparktrace::tracing::store
