#include "tracing/store/postgres/held/postgres_held_parts.h"

#include <spdlog/fmt/fmt.h>

#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {

std::string PostgresHeldPartRowsSql(std::string_view where) {
  // Every figure but the summary's three is what SummaryMayHoldPart requires (no error: no operation, no
  // failed job); a part's name is its task's "dag.task" (PartsOfTrace).
  return fmt::format(
      "SELECT 1 AS airflow, dag_id, task_id, run_id, try_number, held_map_index AS map_index, "
      "''::text COLLATE \"C\" AS trace_key, trace_id, dag_id || '.' || task_id AS name, NULL::text AS "
      "app_id, start_unix_nano, end_unix_nano, span_count, 0::bigint AS error_count, 0::bigint AS "
      "open_count, 0::bigint AS resource_wait_ms, 0::bigint AS compute_ms, 0::bigint AS io_write_ms, "
      "0::bigint AS idle_ms, 0::bigint AS finding_count, NULL::text AS top_finding, -1::double precision AS "
      "top_impact, 0::bigint AS operation_count, 0::bigint AS failed_operation_count, 0::bigint AS "
      "failed_job_count FROM traces WHERE held_map_index IS NOT NULL AND {}",
      where);
}

const std::string& PostgresHeldTracesOfKeySql() {
  static const std::string sql = fmt::format("SELECT trace_id FROM traces WHERE {}", kPostgresHeldPartOfKeySql);
  return sql;
}

Result<std::set<std::string>> HoldPostgresParts(PgConnection& db, const std::vector<PartToHold>& parts) {
  std::set<std::string> held;
  if (parts.empty()) return held;
  std::vector<std::string> trace_hex, dag_id, task_id, run_id;
  std::vector<std::int64_t> try_number, map_index, spans, starts, ends;
  for (const PartToHold& hold : parts) {
    trace_hex.push_back(*hold.trace_hex);
    dag_id.push_back(hold.key->attempt.dag_id);
    task_id.push_back(hold.key->attempt.task_id);
    run_id.push_back(hold.key->attempt.run_id);
    try_number.push_back(hold.key->attempt.try_number);
    map_index.push_back(hold.key->attempt.map_index);
    spans.push_back(hold.part->spans);
    starts.push_back(static_cast<std::int64_t>(hold.part->start));
    ends.push_back(static_cast<std::int64_t>(hold.part->end));
  }
  // The summaries as stored (the batch's summary writes came first, postgres_span_store.cc), holding
  // nothing yet (an attempt without identity one holds is released after the parts are written).
  static const std::string hold_sql = fmt::format(R"sql(
UPDATE traces t SET held_map_index = c.map_index
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[],
            $8::bigint[], $9::bigint[])
     AS c (trace_hex, dag_id, task_id, run_id, try_number, map_index, spans, start_unix_nano, end_unix_nano)
WHERE t.trace_id = {} AND t.attempt IS NULL AND t.held_map_index IS NULL AND t.dag_id = c.dag_id
  AND t.task_id = c.task_id AND t.run_id = c.run_id AND t.try_number = c.try_number AND t.span_count = c.spans
  AND t.start_unix_nano = c.start_unix_nano AND t.end_unix_nano = c.end_unix_nano
RETURNING c.trace_hex)sql",
                                                  TraceIdOfHexSql("c.trace_hex"));
  auto result = db.Query(hold_sql, {TextArray(trace_hex), TextArray(dag_id), TextArray(task_id),
                                    TextArray(run_id), IntArray(try_number), IntArray(map_index),
                                    IntArray(spans), IntArray(starts), IntArray(ends)});
  if (!result.ok()) return result.error();
  for (int row = 0; row < result->rows(); ++row) held.emplace(result->Text(row, 0));
  return held;
}

Result<void> ReleasePostgresHeldParts(PgConnection& db, const std::vector<std::string>& trace_ids) {
  if (trace_ids.empty()) return {};
  // Both parts of a statement read the rows as they were before it: the rows are written from the
  // summaries' claims that the UPDATE clears.
  static const std::string release_sql = fmt::format(
      "WITH cleared AS (UPDATE traces SET held_map_index = NULL WHERE trace_id = ANY({0}) AND held_map_index "
      "IS NOT NULL) INSERT INTO attempt_parts ({1}) {2}",
      IdsFromHexSql("$1"), kAttemptPartColumns,
      PostgresHeldPartRowsSql(fmt::format("trace_id = ANY({})", IdsFromHexSql("$1"))));
  auto released = db.Query(release_sql, {TextArray(trace_ids)});
  if (!released.ok()) return released.error();
  return {};
}

}  // namespace sparktrace::tracing::store
