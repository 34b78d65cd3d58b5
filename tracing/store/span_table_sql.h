#pragma once
// SQL text of the spans and traces tables that both backends share: their column lists and what a span
// written again does to the stored one. One spelling, so that a column added to stored_span.h's row is
// added to both stores' writes and reads at once.
//
// Constants; thread-safe.

#include <string_view>

namespace sparktrace::tracing::store {

// Every column of spans, in StoredSpanRow's order (what the stores write).
inline constexpr std::string_view kStoredSpanColumns =
    "trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, "
    "status_message, trace_state, attributes, events, operation_id, session_id, dag_id, task_id, run_id, "
    "try_number";

// The conflict clause of the span upsert (the new row arrives as `excluded`): a span written again
// replaces the stored one, every column but its key.
//
// Except an "airflow.task" span, the one span a client makes (the Airflow plugin's task report, whose
// ids a client chooses): it replaces only the same attempt's "airflow.task" span, with the same start
// and an end no earlier. So a report naming the id of a span the proxy recorded, or of another attempt's
// task span, changes nothing, whichever proxy sharing the store takes it, and after any restart
// (docs/threat-model.md). The report route refuses such a report with 409 before it gets here, as far as
// it remembers (tracing/airflow_report_ledger.h); this is the rule that holds when it does not.
// IS NOT DISTINCT FROM: an attempt without a run id has NULL there (SQLite 3.39+ and PostgreSQL).
inline constexpr std::string_view kSpanReplacesStoredSql = R"sql(
ON CONFLICT (trace_id, span_id) DO UPDATE SET
  parent_span_id = excluded.parent_span_id, name = excluded.name, kind = excluded.kind,
  start_unix_nano = excluded.start_unix_nano, end_unix_nano = excluded.end_unix_nano,
  status_code = excluded.status_code, status_message = excluded.status_message,
  trace_state = excluded.trace_state, attributes = excluded.attributes, events = excluded.events,
  operation_id = excluded.operation_id, session_id = excluded.session_id, dag_id = excluded.dag_id,
  task_id = excluded.task_id, run_id = excluded.run_id, try_number = excluded.try_number
WHERE excluded.name <> 'airflow.task'
   OR (spans.name = 'airflow.task' AND spans.dag_id IS NOT DISTINCT FROM excluded.dag_id
       AND spans.task_id IS NOT DISTINCT FROM excluded.task_id
       AND spans.run_id IS NOT DISTINCT FROM excluded.run_id
       AND spans.try_number IS NOT DISTINCT FROM excluded.try_number
       AND spans.start_unix_nano = excluded.start_unix_nano AND spans.end_unix_nano <= excluded.end_unix_nano)
)sql";

// The columns a read selects: what StoredSpanRow's readers (SpanFromRow) and the summary readers
// (SummaryFromRow) take, in their order.
inline constexpr std::string_view kSpanReadColumns =
    "trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, "
    "status_message, trace_state, attributes, events";
inline constexpr std::string_view kSummaryReadColumns =
    "trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id, task_id, run_id, "
    "try_number";

}  // namespace sparktrace::tracing::store
