#include "tracing/store/task_index/attempt_row_sql.h"

#include <spdlog/fmt/fmt.h>

#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {

std::string AttemptRowUpsertSql(std::string_view greatest) {
  return fmt::format(R"sql(
ON CONFLICT (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key) DO UPDATE SET
  indexed_at = CASE WHEN task_attempts.start_unix_nano <> excluded.start_unix_nano
                      OR task_attempts.end_unix_nano <> excluded.end_unix_nano
                      OR task_attempts.span_count <> excluded.span_count
                      OR task_attempts.error_count <> excluded.error_count
                      OR task_attempts.open_count <> excluded.open_count
                      OR task_attempts.resource_wait_ms <> excluded.resource_wait_ms
                      OR task_attempts.compute_ms <> excluded.compute_ms
                      OR task_attempts.io_write_ms <> excluded.io_write_ms
                      OR task_attempts.idle_ms <> excluded.idle_ms
                      OR task_attempts.finding_count <> excluded.finding_count
                    THEN {}(excluded.indexed_at, task_attempts.indexed_at + 1)
                    ELSE task_attempts.indexed_at END,
  name = excluded.name, trace_ids = excluded.trace_ids, start_unix_nano = excluded.start_unix_nano,
  end_unix_nano = excluded.end_unix_nano, span_count = excluded.span_count, error_count = excluded.error_count,
  open_count = excluded.open_count, resource_wait_ms = excluded.resource_wait_ms, compute_ms = excluded.compute_ms,
  io_write_ms = excluded.io_write_ms, idle_ms = excluded.idle_ms, finding_count = excluded.finding_count,
  top_finding = excluded.top_finding, state = excluded.state, settles = excluded.settles
)sql",
                     greatest);
}

std::string AttemptRowReadColumnsSql(std::string_view row, std::string_view trace_list,
                                     std::string_view held_traces, std::size_t max_trace_ids) {
  std::string columns(kAttemptRowColumns);
  constexpr std::string_view kTraceIds = "trace_ids";
  const std::string parts_match = fmt::format(
      "p.airflow = 1 AND p.dag_id = {0}.dag_id AND p.task_id = {0}.task_id AND p.run_id = {0}.run_id AND "
      "p.try_number = {0}.try_number AND p.map_index = {0}.map_index AND p.trace_key = {0}.trace_key",
      row);
  // One more than the bound, so that the reader can tell a truncated list (BoundTraceIds,
  // index_columns.h). Both arms come in trace id order from their indexes: the limit stops the merge.
  const std::string limit = max_trace_ids == 0 ? std::string() : fmt::format(" LIMIT {}", max_trace_ids + 1);
  const std::string parts =
      fmt::format("(SELECT p.trace_id FROM attempt_parts p WHERE {} UNION ALL {} ORDER BY 1{}) p",
                  parts_match, fmt::format(fmt::runtime(held_traces), row), limit);
  columns.replace(columns.find(kTraceIds), kTraceIds.size(),
                  fmt::format("CASE WHEN {0}.airflow = 0 THEN {0}.trace_key ELSE (SELECT {1} FROM {2}) END",
                              row, trace_list, parts));
  return columns;
}

}  // namespace sparktrace::tracing::store
