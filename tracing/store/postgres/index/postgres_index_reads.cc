#include "tracing/store/postgres/index/postgres_index_reads.h"

#include <spdlog/fmt/fmt.h>

#include <set>
#include <utility>

#include "tracing/span_vocabulary.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/held/postgres_held_parts.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {
namespace {

// PostgresIndexSpanColumnsSql's columns, after which ReadStoredBeforeBatch reads more.
constexpr int kIndexSpanColumns = 14;

// The Airflow parts of the traces in $1 (hex ids, text[]) whose awaited parents are known, with all a
// part keeps (increment/part_increment.h); a trace without parts has one row of NULLs after its id. Its
// parts are rows when the writer reads them (it releases a held part first, held/postgres_held_parts.h);
// held ones are read all the same, as every read of parts does.
const std::string kStoredPartsSql =
    fmt::format(R"sql(
SELECT {0}, t.awaited_parents, p.dag_id, p.task_id, p.run_id, p.try_number, p.map_index,
       p.name, p.app_id, p.start_unix_nano, p.end_unix_nano, p.span_count, p.open_count, p.resource_wait_ms,
       p.compute_ms, p.io_write_ms, p.idle_ms, p.finding_count, p.top_finding, p.top_impact, p.operation_count,
       p.failed_operation_count, p.failed_job_count
FROM traces t LEFT JOIN LATERAL (SELECT {2} FROM attempt_parts p WHERE p.airflow = 1 AND p.trace_id = t.trace_id
                                  UNION ALL {3}) p ON true
WHERE t.trace_id = ANY({1}) AND t.awaited_parents IS NOT NULL
)sql",
                TraceHexSql("t.trace_id"), IdsFromHexSql("$1"), kAttemptPartColumns,
                PostgresHeldPartRowsSql("trace_id = t.trace_id"));

}  // namespace

std::string PostgresIndexSpanColumnsSql() {
  // The set a shared row names is looked up by its key for those rows only (a join would read it for
  // every span).
  const auto stored = [](std::string_view name) { return StoredNameSql(SpanSqlDialect::kPostgres, name); };
  const std::string carries = fmt::format(
      "dag_id IS NOT NULL OR name LIKE '{}%' OR name IN ({}, {}, {}, {})", tracing::kSparkPhasePrefix,
      stored(tracing::kSparkJobSpanName), stored(tracing::kSparkConnectOperationSpanName),
      stored(tracing::kSparkApplicationSpanName), stored(tracing::kSparkConnectLifecycleSpanName));
  return fmt::format(
      "{3}, name, start_unix_nano, end_unix_nano, status_code, dag_id, task_id, run_id, try_number,\n"
      "  CASE WHEN {0} THEN attributes END,\n"
      "  CASE WHEN strpos(events, '{1}') > 0 THEN events END,\n"
      "  CASE WHEN {0} THEN (SELECT set_bytes FROM attribute_sets WHERE set_id = {2}) END",
      carries, tracing::kFindingEventName, AttributeSetIdSql("attributes"), kPostgresSpanIdReadColumns);
}

// A span and its row hold what these columns hold, and nothing else.
Result<IndexSpan> PostgresIndexSpanFrom(const PgResult& result, int row) {
  const auto text = [&](int column) { return std::string(result.Text(row, column)); };
  const auto optional = [&](int column, std::string& value) -> const std::string* {
    if (result.IsNull(row, column)) return nullptr;
    value = text(column);
    return &value;
  };
  Span span;
  span.name = NameOfStored(result.Text(row, 3));
  span.start_time_unix_nano = static_cast<std::uint64_t>(result.Int64(row, 4));
  span.end_time_unix_nano = static_cast<std::uint64_t>(result.Int64(row, 5));
  span.status_code = static_cast<StatusCode>(result.Int64(row, 6));
  if (!result.IsNull(row, 11)) {
    auto attributes = StoredAttributes(
        result.Text(row, 11),
        result.IsNull(row, 13) ? std::nullopt : std::optional<std::string_view>(result.Text(row, 13)),
        result.Text(row, 1));
    if (!attributes.ok()) return attributes.error();
    span.attributes = std::move(attributes).value();
  }
  StoredSpanRow stored;
  stored.span_id = text(1);
  if (!result.IsNull(row, 2)) stored.parent_span_id = text(2);
  std::string dag_id, task_id, run_id;
  stored.dag_id = optional(7, dag_id);
  if (stored.dag_id != nullptr && *stored.dag_id == kIdentityInSetMarker) {
    // The identity its set holds (postgres_span_columns.h), decoded with the attributes above (the
    // marker is not NULL, so they were read); a real '' reads back from them as well.
    ExtractStoredColumns(span.attributes, stored);
  } else {
    stored.task_id = optional(8, task_id);
    stored.run_id = optional(9, run_id);
    if (!result.IsNull(row, 10)) stored.try_number = result.Int64(row, 10);
  }
  if (!result.IsNull(row, 12)) stored.events_json = text(12);
  return IndexSpanOf(span, stored);
}

Result<StoredBeforeBatch> ReadStoredBeforeBatch(PgConnection& db,
                                                const std::map<std::string, std::vector<std::string>>& ids) {
  StoredBeforeBatch before;
  if (ids.empty()) return before;
  std::vector<std::string> trace_column, span_column, trace_ids;
  for (const auto& [trace_id, span_ids] : ids) {
    trace_ids.push_back(trace_id);
    // A batch's spans share a few parents: each id looked up once.
    for (const std::string& span_id : std::set<std::string>(span_ids.begin(), span_ids.end())) {
      trace_column.push_back(trace_id);
      span_column.push_back(span_id);
    }
  }
  // The walk up runs over the key columns only (UNION drops a span reached twice, and ends a cycle);
  // the spans it reached are read once, at the end. Each step looks one span up by its primary key:
  // LIMIT 1 (the key holds one row at most) keeps the lookups nested, where a join of the ids with
  // spans would be planned as a hash join over the whole table, growing with the store. The traces'
  // summary bounds come in the same answer (rows without a span id), with the map index of the part each
  // holds (held/postgres_held_parts.h) where task_map_index would be, saving a round trip a batch.
  static const std::string walk_sql =
      fmt::format(R"sql(
WITH RECURSIVE up (walk_trace, walk_span, walk_parent) AS (
  SELECT s.trace_id, s.span_id, s.parent_span_id
  FROM unnest($1::text[], $2::text[]) AS w (trace_hex, span_hex)
  CROSS JOIN LATERAL (SELECT trace_id, span_id, parent_span_id FROM spans
                      WHERE trace_id = {1} AND span_id = {2} LIMIT 1) s
  UNION
  SELECT s.trace_id, s.span_id, s.parent_span_id
  FROM up CROSS JOIN LATERAL (SELECT trace_id, span_id, parent_span_id FROM spans
                              WHERE trace_id = up.walk_trace AND span_id = up.walk_parent LIMIT 1) s
)
SELECT {0}, octet_length(attributes) + octet_length(events) + octet_length(name) + 160, task_map_index,
       NULL::bigint, NULL::bigint
FROM up CROSS JOIN LATERAL (SELECT * FROM spans WHERE trace_id = up.walk_trace AND span_id = up.walk_span
                            LIMIT 1) stored
UNION ALL
SELECT {3}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, held_map_index, start_unix_nano, end_unix_nano
FROM traces WHERE trace_id = ANY({4})
)sql",
                  PostgresIndexSpanColumnsSql(), TraceIdOfHexSql("w.trace_hex"), SpanIdOfHexSql("w.span_hex"),
                  TraceHexSql("trace_id"), IdsFromHexSql("$3"));
  auto spans = db.Query(walk_sql, {TextArray(trace_column), TextArray(span_column), TextArray(trace_ids)});
  if (!spans.ok()) return spans.error();
  std::map<std::string, std::set<std::string>> parents;  // of the spans found, by trace
  for (int row = 0; row < spans->rows(); ++row) {
    if (spans->IsNull(row, 1)) {  // a trace's bounds
      before.bounds.emplace(
          std::string(spans->Text(row, 0)),
          std::make_pair(spans->Int64(row, kIndexSpanColumns + 2), spans->Int64(row, kIndexSpanColumns + 3)));
      if (!spans->IsNull(row, kIndexSpanColumns + 1)) before.holding_parts.emplace_back(spans->Text(row, 0));
      continue;
    }
    auto index = PostgresIndexSpanFrom(*spans, row);
    if (!index.ok()) return index.error();
    const std::string trace_id(spans->Text(row, 0));
    if (!index->parent_id.empty()) parents[trace_id].insert(index->parent_id);
    PostgresStoredVersion version;
    SummarySpan& summary = version.summary;
    summary.root = spans->IsNull(row, 2);
    summary.name = NameOfStored(spans->Text(row, 3));
    summary.start_unix_nano = spans->Int64(row, 4);
    summary.end_unix_nano = spans->Int64(row, 5);
    summary.error = spans->Int64(row, 6) == 2;
    const auto text = [&](int column) -> std::optional<std::string> {
      if (spans->IsNull(row, column)) return std::nullopt;
      return std::string(spans->Text(row, column));
    };
    summary.dag_id = text(7);
    summary.task_id = text(8);
    summary.run_id = text(9);
    if (!spans->IsNull(row, 10)) summary.try_number = spans->Int64(row, 10);
    version.approx_bytes = spans->Int64(row, kIndexSpanColumns);
    if (!spans->IsNull(row, kIndexSpanColumns + 1))
      version.task_map_index = spans->Int64(row, kIndexSpanColumns + 1);
    before.ancestors[trace_id].insert_or_assign(index->span_id, *index);
    version.index = std::move(index).value();
    const std::string span_id = version.index.span_id;
    before.versions[trace_id].insert_or_assign(span_id, std::move(version));
  }
  // What the walk started from or reached as a parent, and did not find, is not stored.
  for (const auto& [trace_id, span_ids] : ids) {
    for (const std::string& span_id : span_ids) before.ancestors[trace_id].try_emplace(span_id);
  }
  for (const auto& [trace_id, parent_ids] : parents) {
    for (const std::string& span_id : parent_ids) before.ancestors[trace_id].try_emplace(span_id);
  }

  return before;
}

Result<std::optional<IndexSpan>> ReadPostgresIndexSpan(PgConnection& db, const std::string& trace_id,
                                                       const std::string& span_id) {
  static const std::string span_sql =
      fmt::format("SELECT {} FROM spans WHERE trace_id = {} AND span_id = {}", PostgresIndexSpanColumnsSql(),
                  TraceIdOfHexSql("$1"), SpanIdOfHexSql("$2"));
  auto read = db.Query(span_sql, {trace_id, span_id});
  if (!read.ok()) return read.error();
  if (read->rows() == 0) return std::optional<IndexSpan>();
  auto index = PostgresIndexSpanFrom(*read, 0);
  if (!index.ok()) return index.error();
  return std::optional<IndexSpan>(std::move(index).value());
}

Result<std::map<std::string, task_index::StoredTraceIndex>> ReadPostgresTraceIndexes(
    PgConnection& db, const std::vector<std::string>& trace_ids) {
  std::map<std::string, task_index::StoredTraceIndex> indexes;
  if (trace_ids.empty()) return indexes;
  auto rows = db.Query(kStoredPartsSql, {TextArray(trace_ids)});
  if (!rows.ok()) return rows.error();
  for (int row = 0; row < rows->rows(); ++row) {
    const std::string trace_id(rows->Text(row, 0));
    auto [at, first] = indexes.try_emplace(trace_id);
    task_index::StoredTraceIndex& index = at->second;
    if (first) {
      index.awaited = task_index::ParseAwaitedParents(rows->Text(row, 1));
      index.exact = true;
    }
    if (rows->IsNull(row, 2)) continue;  // no parts (the LEFT JOIN's row)
    // Columns 2-6 are the Airflow part's key, its figures follow (StoredPartFrom, index_columns.h).
    const ResultColumns columns(*rows, row);
    std::optional<Part> part = StoredPartFrom(columns, 7);
    if (!part) {
      index.exact = false;
      continue;
    }
    index.parts.emplace(PartKey{true,
                                TaskAttemptKey{columns.Text(2), columns.Text(3), columns.Text(4),
                                               columns.Int64(5), columns.Int64(6)},
                                ""},
                        std::move(*part));
  }
  return indexes;
}

Result<void> WritePostgresAwaitedParents(PgConnection& db,
                                         const std::map<std::string, std::optional<std::string>>& awaited) {
  if (awaited.empty()) return {};
  std::vector<std::string> trace_ids;
  std::vector<std::optional<std::string>> values;
  for (const auto& [trace_id, value] : awaited) {
    trace_ids.push_back(trace_id);
    values.push_back(value);
  }
  static const std::string update_sql = fmt::format(
      "UPDATE traces t SET awaited_parents = a.awaited FROM unnest($1::text[], $2::text[]) AS a (trace_hex, "
      "awaited) WHERE t.trace_id = {}",
      TraceIdOfHexSql("a.trace_hex"));
  auto updated = db.Query(update_sql, {TextArray(trace_ids), TextArray(values)});
  if (!updated.ok()) return updated.error();
  return {};
}

}  // namespace sparktrace::tracing::store
