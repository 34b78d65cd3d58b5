#pragma once
// SQL text of the spans and traces tables that both backends share: their column lists and what a span
// written again does to the stored one. One spelling, so that a column added to stored_span.h's row is
// added to both stores' writes and reads at once.
//
// Constants and pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

namespace sparktrace::tracing::store {

// Every column of spans, in StoredSpanRow's order (what the stores write).
inline constexpr std::string_view kStoredSpanColumns =
    "trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, "
    "status_message, trace_state, attributes, events, operation_id, session_id, dag_id, task_id, run_id, "
    "try_number";

// Where the backends' SQL differs: reading one attribute out of the stored attributes JSON text.
enum class SpanSqlDialect : std::uint8_t { kSqlite, kPostgres };

// The SQL of one attribute's value as text (NULL when the span has none) read from the attributes
// column, `table`.attributes or the unqualified column for an empty `table`. `key` is a vocabulary key
// (tracing/span_vocabulary.h), not a path: sparktrace_attribute(attributes, 'airflow.map_index') in
// SQLite (sqlite/sqlite_attribute_function.h), attributes::json ->> 'airflow.map_index' in PostgreSQL.
std::string AttributeTextSql(SpanSqlDialect dialect, std::string_view key, std::string_view table = "");

// The SQL of a span's Airflow map index as the task index takes it (task_attempts.h): the
// airflow.map_index attribute, -1 when the span has none. An integer in SQLite, its decimal text in
// PostgreSQL: for comparing two rows of one backend.
std::string MapIndexSql(SpanSqlDialect dialect, std::string_view table);

// The columns of a span the task index adds up (sqlite_task_index.cc, postgres_task_index.cc read
// them into IndexSpan, in this order): its tree, times, status and identity, then the few attributes
// the index needs, each read only on the spans that can carry it (every ->> parses the attributes
// text again, and a trace is re-read on every write that touches it), and the events of spans with
// a finding. The map index is an integer in SQLite, its text in PostgreSQL.
std::string IndexSpanColumnsSql(SpanSqlDialect dialect);

// SQL reading a column of names kept by StoredName (stored_span.h) back as the names.
std::string NameOfStoredSql(SpanSqlDialect dialect, std::string_view column);
// The SQL list of the values a column of names kept by StoredName holds for `name`, for `IN (…)`: its
// literal, or its code byte and, for rows written before the code (which keep their names), its
// literal. What a query that looks for a span by its name compares the column with.
std::string StoredNameSql(SpanSqlDialect dialect, std::string_view name);

// The conflict clause of the span upsert (the new row arrives as `excluded`): a span written again
// replaces the stored one, every column but its key.
//
// Except an "airflow.task" span, the one span a client makes (the Airflow plugin's task report, whose
// ids a client chooses): it replaces only the same attempt's "airflow.task" span (dag, task, run, try
// and map index: Airflow 2.10 gives the mapped instances of a task one span id), with the same start
// and an end no earlier. So a report naming the id of a span the proxy recorded, or of another
// attempt's task span, changes nothing, whichever proxy sharing the store takes it, and after any
// restart (docs/threat-model.md). The report route refuses such a report with 409 before it gets here,
// as far as it remembers (tracing/airflow_report_ledger.h); this is the rule that holds when it does
// not. IS NOT DISTINCT FROM: an attempt without a run id has NULL there (SQLite 3.39+ and PostgreSQL).
std::string SpanReplacesStoredSql(SpanSqlDialect dialect);

// What retention deletes, by age and by size, in either store: the trace ids of the traces that ended
// before `cutoff`, and of the `limit` traces that ended first ((end, trace id) ascending), each the SQL
// of a parameter (SQLite "?1", PostgreSQL "$1::bigint"). Both read traces by their start
// (traces_by_start) and the traces that end before they start (spans with an inverted clock; normally
// none) through traces_inverted, a partial index of those only: an index on the end cost every trace a
// B-tree insert and ~35-50 bytes for a query run once a minute. Each picks exactly the traces the plain
// query on the end picks (sqlite_schema_v10_test.cc and postgres_attribute_sets_test.cc hold them to it).
std::string TracesEndedBeforeSql(std::string_view cutoff);
std::string TracesEndedFirstSql(std::string_view limit);

// The columns a read selects: what StoredSpanRow's readers (SpanFromRow) and the summary readers
// (SummaryFromRow) take, in their order.
inline constexpr std::string_view kSpanReadColumns =
    "trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, "
    "status_message, trace_state, attributes, events";
inline constexpr std::string_view kSummaryReadColumns =
    "trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id, task_id, run_id, "
    "try_number";

}  // namespace sparktrace::tracing::store
