#include "tracing/store/span_rows/span_table_sql.h"

#include <spdlog/fmt/fmt.h>

#include "tracing/span_vocabulary.h"
#include "tracing/store/span_rows/compact_attribute_dictionary.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

std::string AttributeTextSql(SpanSqlDialect dialect, std::string_view key, std::string_view table) {
  const std::string column = table.empty() ? std::string("attributes") : fmt::format("{}.attributes", table);
  // SQLite: the compact BLOB (or an older row's JSON) through the store's own function,
  // sqlite/sqlite_attribute_function.h; its results are those ->> gave on the JSON form.
  if (dialect == SpanSqlDialect::kSqlite) return fmt::format("sparktrace_attribute({}, '{}')", column, key);
  return fmt::format("({}::json ->> '{}')", column, key);
}

std::string IndexSpanColumnsSql(SpanSqlDialect dialect) {
  const auto attribute = [dialect](std::string_view key) { return AttributeTextSql(dialect, key); };
  const auto stored = [dialect](std::string_view name) { return StoredNameSql(dialect, name); };
  const bool sqlite = dialect == SpanSqlDialect::kSqlite;
  const std::string map_index = attribute(tracing::kAirflowMapIndexKey);
  return fmt::format(
      R"sql(span_id, parent_span_id, {}, start_unix_nano, end_unix_nano, status_code,
       dag_id, task_id, run_id, try_number,
       CASE WHEN dag_id IS NOT NULL THEN {} END,
       CASE WHEN name LIKE '{}%' THEN {} END,
       CASE WHEN name IN ({}) THEN {} WHEN name IN ({}) THEN {} END,
       CASE WHEN name IN ({}) THEN {} END,
       CASE WHEN name IN ({}) THEN {} END,
       CASE WHEN name IN ({}, {}) THEN {} END,
       CASE WHEN {}(events, 'sparktrace.finding') > 0 THEN events END)sql",
      NameOfStoredSql(dialect, "name"), sqlite ? fmt::format("CAST({} AS INTEGER)", map_index) : map_index,
      tracing::kSparkPhasePrefix, attribute(tracing::kSparkPhaseDurationMsKey),
      stored(tracing::kSparkJobSpanName), attribute(tracing::kSparkJobStatusKey),
      stored(tracing::kSparkConnectOperationSpanName), attribute(tracing::kSparkConnectOperationStateKey),
      stored(tracing::kSparkApplicationSpanName), attribute(tracing::kSparkAppStatusKey),
      stored(tracing::kSparkApplicationSpanName), attribute(tracing::kSparkAppNameKey),
      stored(tracing::kSparkApplicationSpanName), stored(tracing::kSparkConnectLifecycleSpanName),
      attribute(tracing::kSparkAppIdKey), sqlite ? "instr" : "strpos");
}

std::string NameOfStoredSql(SpanSqlDialect dialect, std::string_view column) {
  const char* code = dialect == SpanSqlDialect::kSqlite ? "char" : "chr";
  std::string sql = fmt::format(
      "CASE substr({0}, 1, 1) WHEN {1}({2}) THEN '{3}' || substr({0}, 2) WHEN {1}({4}) THEN substr({0}, 2)",
      column, code, static_cast<int>(kStoredNamePrefixCode), StoredNamePrefix(),
      static_cast<int>(kStoredNameEscapeCode));
  for (const StoredWholeName& whole : StoredWholeNames())
    sql += fmt::format(" WHEN {}({}) THEN '{}'", code, static_cast<int>(whole.code), whole.name);
  sql += fmt::format(" ELSE {} END", column);
  return sql;
}

std::string StoredNameSql(SpanSqlDialect dialect, std::string_view name) {
  std::string scratch;
  const std::string_view stored = StoredName(name, scratch);
  if (stored.size() == 1 && IsStoredNameCode(stored.front())) {
    return fmt::format("{}({}), '{}'", dialect == SpanSqlDialect::kSqlite ? "char" : "chr",
                       static_cast<int>(stored.front()), name);
  }
  return fmt::format("'{}'", stored);
}

std::string MapIndexSql(SpanSqlDialect dialect, std::string_view table) {
  const std::string text = AttributeTextSql(dialect, tracing::kAirflowMapIndexKey, table);
  if (dialect == SpanSqlDialect::kSqlite) return fmt::format("coalesce(CAST({} AS INTEGER), -1)", text);
  return fmt::format("coalesce({}, '-1')", text);
}

std::string SpanReplacesStoredSql(SpanSqlDialect dialect) {
  return fmt::format(R"sql(
ON CONFLICT (trace_id, span_id) DO UPDATE SET
  parent_span_id = excluded.parent_span_id, name = excluded.name, kind = excluded.kind,
  start_unix_nano = excluded.start_unix_nano, end_unix_nano = excluded.end_unix_nano,
  status_code = excluded.status_code, status_message = excluded.status_message,
  trace_state = excluded.trace_state, attributes = excluded.attributes, events = excluded.events,
  operation_id = excluded.operation_id, session_id = excluded.session_id, dag_id = excluded.dag_id,
  task_id = excluded.task_id, run_id = excluded.run_id, try_number = excluded.try_number
WHERE excluded.name <> '{0}'
   OR (spans.name = '{0}' AND spans.dag_id IS NOT DISTINCT FROM excluded.dag_id
       AND spans.task_id IS NOT DISTINCT FROM excluded.task_id
       AND spans.run_id IS NOT DISTINCT FROM excluded.run_id
       AND spans.try_number IS NOT DISTINCT FROM excluded.try_number
       AND {1} = {2}
       AND spans.start_unix_nano = excluded.start_unix_nano AND spans.end_unix_nano <= excluded.end_unix_nano)
)sql",
                     tracing::kAirflowTaskSpanName, MapIndexSql(dialect, "spans"),
                     MapIndexSql(dialect, "excluded"));
}

// A trace that ends no earlier than it starts and ended before a time also started before it, so the
// start range holds it; the inverted ones are the second arm.
std::string TracesEndedBeforeSql(std::string_view cutoff) {
  return fmt::format(
      "SELECT trace_id FROM traces WHERE start_unix_nano < {0} AND end_unix_nano < {0} "
      "UNION ALL SELECT trace_id FROM traces WHERE end_unix_nano < start_unix_nano AND end_unix_nano < {0} "
      "AND start_unix_nano >= {0}",
      cutoff);
}

// The `limit` traces that started first end by some time E (their latest end), so the `limit` that
// ended first end by E too: they started by E, or are inverted traces that end by E. Ordering those by
// their end gives exactly them.
std::string TracesEndedFirstSql(std::string_view limit) {
  const std::string latest_end = fmt::format(
      "(SELECT max(end_unix_nano) FROM (SELECT end_unix_nano FROM traces ORDER BY start_unix_nano LIMIT {}) "
      "first_started)",
      limit);
  return fmt::format(
      "SELECT trace_id FROM (SELECT trace_id, end_unix_nano FROM traces WHERE start_unix_nano <= {0} "
      "UNION ALL SELECT trace_id, end_unix_nano FROM traces WHERE end_unix_nano < start_unix_nano "
      "AND end_unix_nano <= {0} AND start_unix_nano > {0}) ended ORDER BY end_unix_nano, trace_id LIMIT {1}",
      latest_end, limit);
}

}  // namespace sparktrace::tracing::store
