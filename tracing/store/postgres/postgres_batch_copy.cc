#include "tracing/store/postgres/postgres_batch_copy.h"

#include <spdlog/fmt/fmt.h>

#include <cstdint>
#include <optional>
#include <string>

#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/span_rows/span_table_sql.h"

namespace sparktrace::tracing::store {
namespace {

void AppendOptional(CopyRows& copy, std::optional<std::int64_t> value) {
  if (value) {
    copy.Int(*value);
  } else {
    copy.Null();
  }
}

void AppendOptional(CopyRows& copy, const std::string* text) {
  if (text == nullptr) {
    copy.Null();
  } else {
    copy.Text(*text);
  }
}

// The bytes a span adds to the store's size measure (approx_bytes, as kRefreshSummariesSql sums it).
std::int64_t ApproxBytes(const StoredSpanRow& row) {
  return static_cast<std::int64_t>(row.attributes.size() + row.events_json.size() + row.name.size() + 160);
}

}  // namespace

// ON COMMIT DELETE ROWS: the tables are empty at the start of every batch without a DELETE.
const std::string_view kIncomingTablesSql =
    "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_spans (seq bigint NOT NULL, LIKE spans) ON COMMIT DELETE "
    "ROWS; "
    "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_traces (LIKE traces) ON COMMIT DELETE ROWS";

const std::string_view kInsertNewSummariesSql =
    "INSERT INTO traces SELECT * FROM incoming_traces ON CONFLICT (trace_id) DO NOTHING RETURNING trace_id";

// The last version of a span in the batch wins (DISTINCT ON … seq DESC): one INSERT may not touch
// a row twice.
const std::string kMergeSql = fmt::format(
    "INSERT INTO spans ({0})\nSELECT DISTINCT ON (trace_id, span_id) {0}\n"
    "FROM incoming_spans ORDER BY trace_id, span_id, seq DESC{1}",
    kStoredSpanColumns, SpanReplacesStoredSql(SpanSqlDialect::kPostgres));

// Recomputed from the traces' spans, as in the SQLite store. The root is the earliest span without a
// parent, else the earliest span.
const std::string_view kRefreshSummariesSql = R"sql(
INSERT INTO traces (trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id, task_id,
                    run_id, try_number, approx_bytes)
SELECT trace_id,
       (array_agg(name ORDER BY parent_span_id IS NOT NULL, start_unix_nano, span_id))[1],
       min(start_unix_nano), max(end_unix_nano), count(*), count(*) FILTER (WHERE status_code = 2),
       max(dag_id), max(task_id), max(run_id), max(try_number),
       sum(octet_length(attributes) + octet_length(events) + octet_length(name) + 160)
FROM spans WHERE trace_id = ANY($1::text[]) GROUP BY trace_id
ON CONFLICT (trace_id) DO UPDATE SET
  root_name = excluded.root_name, start_unix_nano = excluded.start_unix_nano, end_unix_nano = excluded.end_unix_nano,
  span_count = excluded.span_count, error_count = excluded.error_count, dag_id = excluded.dag_id,
  task_id = excluded.task_id, run_id = excluded.run_id, try_number = excluded.try_number,
  approx_bytes = excluded.approx_bytes
)sql";

std::string SpanCopy(const std::vector<StoredSpanRow>& rows) {
  std::string text;
  CopyRows copy(text);
  std::int64_t seq = 0;
  for (const StoredSpanRow& row : rows) {
    copy.Int(seq++);
    copy.Text(row.trace_id);
    copy.Text(row.span_id);
    if (row.parent_span_id) {
      copy.Text(*row.parent_span_id);
    } else {
      copy.Null();
    }
    copy.Text(row.name);
    copy.Int(row.kind);
    copy.Int(row.start_unix_nano);
    copy.Int(row.end_unix_nano);
    copy.Int(row.status_code);
    copy.Text(row.status_message);
    copy.Text(row.trace_state);
    copy.Text(row.attributes);
    copy.Text(row.events_json);
    AppendOptional(copy, row.operation_id);
    AppendOptional(copy, row.session_id);
    AppendOptional(copy, row.dag_id);
    AppendOptional(copy, row.task_id);
    AppendOptional(copy, row.run_id);
    AppendOptional(copy, row.try_number);
    copy.End();
  }
  return text;
}

std::string SummaryCopy(const std::vector<StoredSpanRow>& rows, const BatchTraces& traces) {
  std::string text;
  CopyRows copy(text);
  for (const auto& [trace_hex, versions] : traces) {
    const TraceSummaryRow summary = SummarizeTrace(rows, versions);
    std::int64_t bytes = 0;
    for (const auto& [span_hex, i] : versions) bytes += ApproxBytes(rows[i]);
    copy.Text(trace_hex);
    copy.Text(summary.root_name);
    copy.Int(summary.start_unix_nano);
    copy.Int(summary.end_unix_nano);
    copy.Int(summary.span_count);
    copy.Int(summary.error_count);
    AppendOptional(copy, summary.dag_id);
    AppendOptional(copy, summary.task_id);
    AppendOptional(copy, summary.run_id);
    AppendOptional(copy, summary.try_number);
    copy.Int(bytes);
    copy.End();
  }
  return text;
}

}  // namespace sparktrace::tracing::store
