#include "tracing/store/postgres/postgres_batch_copy.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tracing/span_vocabulary.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_index/task_index.h"

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

template <std::size_t N>
std::string_view BytesOf(const std::array<std::uint8_t, N>& id) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the id's bytes as they are
  return {reinterpret_cast<const char*>(id.data()), N};
}

}  // namespace

// ON COMMIT DELETE ROWS: the tables are empty at the start of every batch without a DELETE.
const std::string_view kIncomingTablesSql =
    "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_spans (LIKE spans) ON COMMIT DELETE ROWS; "
    "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_traces (LIKE traces) ON COMMIT DELETE ROWS; "
    "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_attempts (LIKE task_attempts) ON COMMIT DELETE ROWS";

const std::string kInsertNewSummariesSql =
    "INSERT INTO traces SELECT * FROM incoming_traces ON CONFLICT (trace_id) DO NOTHING RETURNING " +
    TraceHexSql("trace_id");

// SpanCopy sends each span once (its last version in the batch): one INSERT may not touch a row twice.
//
// The conflict clause is span_table_sql.h's SpanReplacesStoredSql (which says why an "airflow.task"
// span replaces only the same attempt's), spelled over this schema's columns: the map index is
// task_map_index here, not read out of the attributes.
const std::string kMergeSql = fmt::format(R"sql(
INSERT INTO spans ({0}) SELECT {0} FROM incoming_spans
ON CONFLICT (trace_id, span_id) DO UPDATE SET
  parent_span_id = excluded.parent_span_id, name = excluded.name, kind = excluded.kind,
  start_unix_nano = excluded.start_unix_nano, end_unix_nano = excluded.end_unix_nano,
  status_code = excluded.status_code, status_message = excluded.status_message,
  trace_state = excluded.trace_state, attributes = excluded.attributes, events = excluded.events,
  operation_id = excluded.operation_id, dag_id = excluded.dag_id, task_id = excluded.task_id,
  run_id = excluded.run_id, try_number = excluded.try_number, task_map_index = excluded.task_map_index
WHERE excluded.name <> '{1}'
   OR (spans.name = '{1}' AND spans.dag_id IS NOT DISTINCT FROM excluded.dag_id
       AND spans.task_id IS NOT DISTINCT FROM excluded.task_id
       AND spans.run_id IS NOT DISTINCT FROM excluded.run_id
       AND spans.try_number IS NOT DISTINCT FROM excluded.try_number
       AND coalesce(spans.task_map_index, -1) = coalesce(excluded.task_map_index, -1)
       AND spans.start_unix_nano = excluded.start_unix_nano AND spans.end_unix_nano <= excluded.end_unix_nano)
)sql",
                                          kPostgresSpanWriteColumns, tracing::kAirflowTaskSpanName);

// Recomputed from the traces' spans, as in the SQLite store. The root is the earliest span without a
// parent, else the earliest span.
const std::string kRefreshSummariesSql =
    fmt::format(R"sql(
INSERT INTO traces (trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id, task_id,
                    run_id, try_number, approx_bytes)
SELECT trace_id,
       (array_agg(name ORDER BY parent_span_id IS NOT NULL, start_unix_nano, span_id))[1],
       min(start_unix_nano), max(end_unix_nano), count(*), count(*) FILTER (WHERE status_code = 2),
       max({1}), max({2}), max({3}), max({4}),
       sum(octet_length(attributes) + octet_length(events) + octet_length(name) + 160)
FROM spans s LEFT JOIN attribute_sets a ON {5}
WHERE trace_id = ANY({0})
GROUP BY trace_id
ON CONFLICT (trace_id) DO UPDATE SET
  root_name = excluded.root_name, start_unix_nano = excluded.start_unix_nano, end_unix_nano = excluded.end_unix_nano,
  span_count = excluded.span_count, error_count = excluded.error_count, dag_id = excluded.dag_id,
  task_id = excluded.task_id, run_id = excluded.run_id, try_number = excluded.try_number,
  approx_bytes = excluded.approx_bytes
)sql",
                IdsFromHexSql("$1"), SpanIdentitySql("s", "a", "dag_id"),
                SpanIdentitySql("s", "a", "task_id"), SpanIdentitySql("s", "a", "run_id"),
                SpanIdentitySql("s", "a", "try_number"), SpanIdentitySetJoinSql("s", "a"));

const std::string kAddToSummariesSql = fmt::format(R"sql(
UPDATE traces t SET end_unix_nano = c.end_unix_nano, span_count = t.span_count + c.spans,
  error_count = t.error_count + c.errors, approx_bytes = t.approx_bytes + c.bytes,
  dag_id = CASE WHEN c.dag_id IS NULL OR t.dag_id >= c.dag_id THEN t.dag_id ELSE c.dag_id END,
  task_id = CASE WHEN c.task_id IS NULL OR t.task_id >= c.task_id THEN t.task_id ELSE c.task_id END,
  run_id = CASE WHEN c.run_id IS NULL OR t.run_id >= c.run_id THEN t.run_id ELSE c.run_id END,
  try_number = CASE WHEN c.try_number IS NULL OR t.try_number >= c.try_number THEN t.try_number
                    ELSE c.try_number END
FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[],
            $8::text[], $9::bigint[])
     AS c (trace_hex, end_unix_nano, spans, errors, bytes, dag_id, task_id, run_id, try_number)
WHERE t.trace_id = {}
)sql",
                                                   TraceIdOfHexSql("c.trace_hex"));

const std::string_view kSummaryCopyColumns =
    "trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id, task_id, run_id, "
    "try_number, approx_bytes, awaited_parents, attempt, held_map_index";

bool MergeReplaces(const SummarySpan& stored, std::optional<std::int64_t> stored_map_index,
                   const StoredSpanRow& row, const Span& span) {
  if (row.name != tracing::kAirflowTaskSpanName) return true;
  const auto same = [](const std::string* now, const std::optional<std::string>& before) {
    return now == nullptr ? !before.has_value() : before == *now;
  };
  return stored.name == tracing::kAirflowTaskSpanName && same(row.dag_id, stored.dag_id) &&
         same(row.task_id, stored.task_id) && same(row.run_id, stored.run_id) &&
         stored.try_number == row.try_number &&
         stored_map_index.value_or(-1) == TaskMapIndexOf(span).value_or(-1) &&
         stored.start_unix_nano == row.start_unix_nano && stored.end_unix_nano <= row.end_unix_nano;
}

// As kRefreshSummariesSql counts a stored span (the name as the row keeps it, StoredName).
std::int64_t ApproxBytes(const StoredSpanRow& row) {
  std::string scratch;
  return static_cast<std::int64_t>(row.attributes.size() + StoredEvents(row).size() +
                                   StoredName(row.name, scratch).size() + 160);
}

std::string SpanCopy(const StoredBatch& batch, const BatchTraces& traces, TraceChoice choice) {
  std::string text;
  CopyRows copy(text);
  std::string name_scratch;
  for (const auto& [trace_hex, versions] : traces) {
    if (!choice.Holds(trace_hex)) continue;
    for (const auto& [span_hex, i] : versions) {
      const StoredSpanRow& row = batch.rows[i];
      const Span& span = *batch.sources[i];
      copy.Hex(BytesOf(span.trace_id));
      copy.Int(StoredSpanId(span.span_id));
      if (row.parent_span_id) {
        copy.Int(StoredSpanId(span.parent_span_id));
      } else {
        copy.Null();
      }
      copy.Text(StoredName(row.name, name_scratch));
      copy.Int(row.kind);
      copy.Int(row.start_unix_nano);
      copy.Int(row.end_unix_nano);
      copy.Int(row.status_code);
      copy.Text(row.status_message);
      copy.Text(row.trace_state);
      copy.Bytes(row.attributes);
      copy.Text(StoredEvents(row));
      AppendOptional(copy, row.operation_id);
      if (IdentityInSet(row)) {
        copy.Text(kIdentityInSetMarker);
        copy.Null();
        copy.Null();
        copy.Null();
      } else {
        AppendOptional(copy, row.dag_id);
        AppendOptional(copy, row.task_id);
        AppendOptional(copy, row.run_id);
        AppendOptional(copy, row.try_number);
      }
      AppendOptional(copy, TaskMapIndexOf(span));
      copy.End();
    }
  }
  return text;
}

std::string SummaryCopy(const StoredBatch& batch, const BatchTraces& traces,
                        const std::map<std::string, std::optional<std::string>>& awaited,
                        const std::map<std::string, std::vector<IndexSpan>>& index_spans,
                        NewSummaryClaims& claims, TraceChoice choice) {
  const std::vector<StoredSpanRow>& rows = batch.rows;
  // By start: the batch's traces then reach traces_by_start at its end in order, and PostgreSQL splits
  // its last page there, leaving the pages before full (in trace-id order they split half full).
  struct NewTrace {
    const std::string_view* trace_hex;
    const BatchSpans* versions;
    TraceSummaryRow summary;
  };
  std::vector<NewTrace> chosen;
  for (const auto& [trace_hex, versions] : traces) {
    if (choice.Holds(trace_hex)) chosen.push_back({&trace_hex, &versions, SummarizeTrace(rows, versions)});
  }
  std::stable_sort(chosen.begin(), chosen.end(), [](const NewTrace& a, const NewTrace& b) {
    return a.summary.start_unix_nano < b.summary.start_unix_nano;
  });
  std::string text;
  CopyRows copy(text);
  std::string name_scratch;
  for (const NewTrace& trace : chosen) {
    const std::string trace_hex(*trace.trace_hex);  // the key of `awaited`, `index_spans` and `holding`
    const BatchSpans& versions = *trace.versions;
    const TraceSummaryRow& summary = trace.summary;
    std::int64_t bytes = 0;
    for (const auto& [span_hex, i] : versions) bytes += ApproxBytes(rows[i]);
    copy.Hex(BytesOf(batch.sources[versions.begin()->second]->trace_id));
    copy.Text(StoredName(summary.root_name, name_scratch));
    copy.Int(summary.start_unix_nano);
    copy.Int(summary.end_unix_nano);
    copy.Int(summary.span_count);
    copy.Int(summary.error_count);
    AppendOptional(copy, summary.dag_id);
    AppendOptional(copy, summary.task_id);
    AppendOptional(copy, summary.run_id);
    AppendOptional(copy, summary.try_number);
    copy.Int(bytes);
    const auto waiting = awaited.find(trace_hex);
    AppendOptional(copy, waiting == awaited.end() || !waiting->second ? nullptr : &*waiting->second);
    const auto spans = index_spans.find(trace_hex);
    std::optional<std::int64_t> held_map_index;
    if (spans == index_spans.end()) {
      copy.Null();
    } else if (task_index::NewTraceSummaryHoldsAttempt(spans->second, summary)) {
      copy.Text("t");
    } else {
      copy.Null();
      std::map<PartKey, Part> parts = PartsOfTrace(trace_hex, spans->second);
      held_map_index = task_index::MapIndexOfHeldPart(parts, summary);
      if (held_map_index) claims.holding_parts.insert(trace_hex);
      claims.parts.emplace(trace_hex, std::move(parts));
    }
    AppendOptional(copy, held_map_index);
    copy.End();
  }
  return text;
}

}  // namespace sparktrace::tracing::store
