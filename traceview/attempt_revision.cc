#include "traceview/attempt_revision.h"

#include <spdlog/fmt/fmt.h>

#include <iterator>

#include "admin/http_caching.h"

namespace sparktrace::traceview {

std::string AttemptRevisionTag(std::span<const tracing::store::TaskAttemptRow> rows, std::size_t current,
                               std::string_view view) {
  // Every field a row contributes, length-prefixed where it is free text, so that two different sets
  // of rows never serialise alike.
  std::string revision = fmt::format("{}:{}|{}|", view.size(), view, current);
  for (const tracing::store::TaskAttemptRow& row : rows) {
    const tracing::store::TaskAttemptKey& key = row.key;
    fmt::format_to(std::back_inserter(revision), "{}|{}:{}|{}:{}|{}:{}|{}|{}|{}:{}|{}|{}|{}|{}|{}|{}|{}|",
                   row.airflow, key.dag_id.size(), key.dag_id, key.task_id.size(), key.task_id,
                   key.run_id.size(), key.run_id, key.try_number, key.map_index, row.state.size(), row.state,
                   row.indexed_unix_nano, row.start_unix_nano, row.end_unix_nano, row.span_count,
                   row.error_count, row.open_count, row.trace_ids.size());
    for (const std::string& trace_id : row.trace_ids) revision += trace_id;
    // What the index derives with the figures, in case one changes alone.
    fmt::format_to(std::back_inserter(revision), "|{}:{}|{}|{}:{}|{}|{}|{}|{}", row.name.size(), row.name,
                   row.finding_count, row.top_finding_json.size(), row.top_finding_json, row.phase_ms[0],
                   row.phase_ms[1], row.phase_ms[2], row.phase_ms[3]);
    if (row.settled) {
      fmt::format_to(std::back_inserter(revision), "|s{}|{}", row.settled->settled_unix_nano, row.settled_current);
    }
    revision += '\n';
  }
  const std::string tag = admin::EntityTag(revision);  // "\"<32 hex>\""
  return "\"r" + tag.substr(1);
}

}  // namespace sparktrace::traceview
