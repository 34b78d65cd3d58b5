#include "tracing/store/postgres/postgres_task_index.h"

#include <spdlog/fmt/fmt.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <variant>

#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/attempt_row_sql.h"
#include "tracing/store/task_index/index_columns.h"
#include "tracing/store/task_index/task_index.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store {
namespace {

// The columns PartsOfTrace needs (span_table_sql.h), after the trace id: a batch reads many traces.
// JSON values come back as text and are parsed here (a cast in SQL would fail the whole batch on one
// odd value).
std::string SpansForIndexSql() {
  return fmt::format("SELECT trace_id, {}\nFROM spans WHERE trace_id = ANY($1::text[]) ORDER BY trace_id",
                     IndexSpanColumnsSql(SpanSqlDialect::kPostgres));
}

std::optional<std::int64_t> NumberOf(std::string_view text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size()) return value;
  const std::string copy(text);  // a JSON number with a fraction or exponent
  char* parsed_end = nullptr;
  const double number = std::strtod(copy.c_str(), &parsed_end);
  if (parsed_end == copy.c_str() || !std::isfinite(number)) return std::nullopt;
  return static_cast<std::int64_t>(number);
}

// One row of a query's result, as index_columns.h reads it.
class ResultColumns {
 public:
  ResultColumns(const PgResult& result, int row) : result_(result), row_(row) {}
  bool IsNull(int column) const { return result_.IsNull(row_, column); }
  std::int64_t Int64(int column) const { return result_.Int64(row_, column); }
  double Double(int column) const { return result_.Double(row_, column); }
  std::string Text(int column) const { return std::string(result_.Text(row_, column)); }
  std::string_view View(int column) const { return result_.Text(row_, column); }
  // ->> hands out a JSON number as text: parsed here (a cast in SQL would fail the whole batch).
  std::optional<std::int64_t> JsonInteger(int column) const { return NumberOf(result_.Text(row_, column)); }

 private:
  const PgResult& result_;
  int row_;
};

Result<std::map<std::string, std::vector<IndexSpan>>> ReadSpans(PgConnection& db,
                                                                const std::vector<std::string>& trace_ids) {
  static const std::string spans_for_index_sql = SpansForIndexSql();
  auto result = db.Query(spans_for_index_sql, {TextArray(trace_ids)});
  if (!result.ok()) return result.error();
  std::map<std::string, std::vector<IndexSpan>> by_trace;
  for (int row = 0; row < result->rows(); ++row) {
    // Column 0 is the trace id; the span's columns follow.
    by_trace[std::string(result->Text(row, 0))].push_back(IndexSpanFrom(ResultColumns(*result, row), 1));
  }
  return by_trace;
}

// The keys as parallel arrays, for unnest().
struct KeyArrays {
  std::vector<std::int64_t> airflow, try_number, map_index;
  std::vector<std::string> dag_id, task_id, run_id, trace_key;
  explicit KeyArrays(const std::set<PartKey>& keys) {
    for (const PartKey& key : keys) {
      airflow.push_back(key.airflow ? 1 : 0);
      dag_id.push_back(key.attempt.dag_id);
      task_id.push_back(key.attempt.task_id);
      run_id.push_back(key.attempt.run_id);
      try_number.push_back(key.attempt.try_number);
      map_index.push_back(key.attempt.map_index);
      trace_key.push_back(key.trace_key);
    }
  }
  std::vector<PgParam> Params() const {
    return {IntArray(airflow),    TextArray(dag_id),   TextArray(task_id),  TextArray(run_id),
            IntArray(try_number), IntArray(map_index), TextArray(trace_key)};
  }
};

constexpr std::string_view kKeysCte =
    "WITH keys AS (SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::bigint[], "
    "$6::bigint[], $7::text[]) AS k(airflow, dag_id, task_id, run_id, try_number, map_index, trace_key))";
constexpr std::string_view kMatchKey =
    "p.airflow = k.airflow AND p.dag_id = k.dag_id AND p.task_id = k.task_id AND p.run_id = k.run_id AND "
    "p.try_number = k.try_number AND p.map_index = k.map_index AND p.trace_key = k.trace_key";

Result<std::set<PartKey>> KeysOfTraces(PgConnection& db, const std::vector<std::string>& trace_ids) {
  auto result = db.Query(
      "SELECT DISTINCT airflow, dag_id, task_id, run_id, try_number, map_index, trace_key FROM attempt_parts "
      "WHERE trace_id = ANY($1::text[])",
      {TextArray(trace_ids)});
  if (!result.ok()) return result.error();
  std::set<PartKey> keys;
  for (int row = 0; row < result->rows(); ++row) {
    keys.insert(PartKey{
        result->Int64(row, 0) != 0,
        TaskAttemptKey{std::string(result->Text(row, 1)), std::string(result->Text(row, 2)),
                       std::string(result->Text(row, 3)), result->Int64(row, 4), result->Int64(row, 5)},
        std::string(result->Text(row, 6))});
  }
  return keys;
}

Result<void> DeleteParts(PgConnection& db, const std::vector<std::string>& trace_ids) {
  auto deleted =
      db.Query("DELETE FROM attempt_parts WHERE trace_id = ANY($1::text[])", {TextArray(trace_ids)});
  if (!deleted.ok()) return deleted.error();
  return {};
}

// A part's key, in the column order of attempt_parts and task_attempts (as kKeysCte's arrays).
void CopyKey(CopyRows& copy, const PartKey& key) {
  copy.Int(key.airflow ? 1 : 0);
  copy.Text(key.attempt.dag_id);
  copy.Text(key.attempt.task_id);
  copy.Text(key.attempt.run_id);
  copy.Int(key.attempt.try_number);
  copy.Int(key.attempt.map_index);
  copy.Text(key.trace_key);
}

// A part's sums (task_index.h, PartSums), in the column order attempt_parts and task_attempts share.
void CopySums(CopyRows& copy, const task_index::PartSums& sums) {
  copy.Int(sums.start_unix_nano);
  copy.Int(sums.end_unix_nano);
  copy.Int(sums.span_count);
  copy.Int(sums.error_count);
  copy.Int(sums.open_count);
  for (const std::int64_t ms : sums.phase_ms) copy.Int(ms);
  copy.Int(sums.finding_count);
  if (sums.top_finding) {
    copy.Text(*sums.top_finding);
  } else {
    copy.Null();
  }
}

Result<void> InsertParts(PgConnection& db, const PartsByTrace& parts_by_trace) {
  std::string rows;
  CopyRows copy(rows);
  for (const auto& [trace_id, parts] : parts_by_trace) {
    for (const auto& [key, part] : parts) {
      CopyKey(copy, key);
      copy.Text(trace_id);
      copy.Text(part.name);
      if (part.app_id.empty()) {
        copy.Null();
      } else {
        copy.Text(part.app_id);
      }
      CopySums(copy, task_index::SumsOf(part));
      copy.Text(fmt::format("{}", part.top_impact));
      copy.End();
    }
  }
  if (rows.empty()) return {};
  return db.CopyIn(
      "COPY attempt_parts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, trace_id, "
      "name, "
      "app_id, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, "
      "compute_ms, "
      "io_write_ms, idle_ms, finding_count, top_finding, top_impact) FROM STDIN",
      rows);
}

std::string KeyText(const PartKey& key) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", key.airflow ? 1 : 0, key.attempt.dag_id,
                     key.attempt.task_id, key.attempt.run_id, key.attempt.try_number, key.attempt.map_index,
                     key.trace_key);
}

// An attempt's row is the sum of its parts; no parts left, no row. The attempts' advisory locks
// come first, in lock-id order (see the header). The upsert keeps the settled figures
// (AttemptRowUpsertSql says how the row is updated).
Result<void> Reaggregate(PgConnection& db, const std::set<PartKey>& keys, std::int64_t now) {
  if (keys.empty()) return {};
  std::vector<std::string> key_texts;
  key_texts.reserve(keys.size());
  for (const PartKey& key : keys) key_texts.push_back(KeyText(key));
  auto locked =
      db.Query(fmt::format("SELECT pg_advisory_xact_lock({}, h) FROM (SELECT DISTINCT hashtext(t) AS h "
                           "FROM unnest($1::text[]) t ORDER BY 1) ordered",
                           kLockClassAttempt),
               {TextArray(key_texts)});
  if (!locked.ok()) return locked.error();

  const KeyArrays arrays(keys);
  std::vector<PgParam> upsert_params = arrays.Params();
  upsert_params.emplace_back(std::to_string(now));
  auto upserted = db.Query(fmt::format(R"sql({}
INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, trace_ids,
                           start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms,
                           compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at)
SELECT k.airflow, k.dag_id, k.task_id, k.run_id, k.try_number, k.map_index, k.trace_key, max(p.name),
       string_agg(p.trace_id, ',' ORDER BY p.trace_id), min(p.start_unix_nano), max(p.end_unix_nano),
       sum(p.span_count), sum(p.error_count), sum(p.open_count), sum(p.resource_wait_ms), sum(p.compute_ms),
       sum(p.io_write_ms), sum(p.idle_ms), sum(p.finding_count),
       (array_agg(p.top_finding ORDER BY p.top_impact DESC) FILTER (WHERE p.top_finding IS NOT NULL))[1],
       CASE WHEN sum(p.open_count) > 0 THEN 'running' WHEN sum(p.error_count) > 0 THEN 'failed' ELSE 'success' END,
       $8::bigint
FROM keys k JOIN attempt_parts p ON {}
GROUP BY k.airflow, k.dag_id, k.task_id, k.run_id, k.try_number, k.map_index, k.trace_key
{})sql",
                                       kKeysCte, kMatchKey, AttemptRowUpsertSql("GREATEST")),
                           upsert_params);
  if (!upserted.ok()) return upserted.error();
  auto emptied = db.Query(
      fmt::format(
          "{} DELETE FROM task_attempts p USING keys k WHERE {} AND NOT EXISTS (SELECT 1 FROM attempt_parts "
          "q WHERE q.airflow = k.airflow AND q.dag_id = k.dag_id AND q.task_id = k.task_id AND q.run_id = "
          "k.run_id AND q.try_number = k.try_number AND q.map_index = k.map_index AND q.trace_key = "
          "k.trace_key)",
          kKeysCte, kMatchKey),
      arrays.Params());
  if (!emptied.ok()) return emptied.error();
  return {};
}

// The task index's SQL on one PostgreSQL connection (task_index_dialect.h): each step one statement
// over all the traces or keys at once (arrays, unnest, COPY).
class PostgresTaskIndex final : public TaskIndexDialect {
 public:
  explicit PostgresTaskIndex(PgConnection& db) : db_(db) {}

  Result<std::set<PartKey>> KeysOfTraces(const std::vector<std::string>& trace_ids) override {
    return store::KeysOfTraces(db_, trace_ids);
  }
  Result<void> DeleteParts(const std::vector<std::string>& trace_ids) override {
    return store::DeleteParts(db_, trace_ids);
  }
  Result<std::map<std::string, std::vector<IndexSpan>>> ReadSpans(
      const std::vector<std::string>& trace_ids) override {
    return store::ReadSpans(db_, trace_ids);
  }
  Result<void> InsertParts(const PartsByTrace& parts_by_trace) override {
    return store::InsertParts(db_, parts_by_trace);
  }
  Result<void> InsertWholeAttempts(const std::vector<WholeAttemptPart>& attempts, std::int64_t now) override {
    std::string rows;
    CopyRows copy(rows);
    for (const WholeAttemptPart& attempt : attempts) {
      const Part& part = *attempt.part;
      CopyKey(copy, *attempt.key);
      copy.Text(part.name);
      copy.Text(*attempt.trace_id);
      CopySums(copy, task_index::SumsOf(part));
      copy.Text(AttemptState(part.open, part.Errors()));
      copy.Int(now);
      copy.End();
    }
    if (rows.empty()) return {};
    return db_.CopyIn(
        "COPY task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, "
        "trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, "
        "compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at) FROM STDIN",
        rows);
  }
  Result<void> AddUp(const std::set<PartKey>& keys, std::int64_t now) override {
    return Reaggregate(db_, keys, now);
  }

 private:
  PgConnection& db_;
};

}  // namespace

Result<void> RefreshPostgresTaskIndex(PgConnection& db, const std::vector<std::string>& trace_ids) {
  PostgresTaskIndex dialect(db);
  return task_index::Refresh(dialect, trace_ids);
}

Result<void> IndexNewPostgresTraces(PgConnection& db,
                                    const std::map<std::string, std::vector<IndexSpan>>& traces) {
  PostgresTaskIndex dialect(db);
  return task_index::AddNewTraces(dialect, traces);
}

Result<void> ForgetTracesInPostgresTaskIndex(PgConnection& db, const std::vector<std::string>& trace_ids) {
  PostgresTaskIndex dialect(db);
  return task_index::Forget(dialect, trace_ids);
}

Result<TaskAttemptPage> ListPostgresTaskAttempts(PgConnection& db, const TaskAttemptFilter& filter) {
  // Only the filters in use appear in the SQL; values are parameters, never spliced in.
  std::vector<PgParam> params;
  const auto next = [&params](std::string value) {
    params.emplace_back(std::move(value));
    return fmt::format("${}", params.size());
  };
  std::string where = " WHERE true";
  if (filter.airflow_only) where += " AND airflow = 1";
  for (const task_index::AttemptCondition& condition : task_index::AttemptConditions(filter)) {
    if (const auto* text = std::get_if<std::string>(&condition.value)) {
      where += fmt::format(" AND {} {}", condition.column_op, next(*text));
    } else if (const auto* number = std::get_if<std::int64_t>(&condition.value)) {
      where += fmt::format(" AND {} {}::bigint", condition.column_op, next(std::to_string(*number)));
    } else {
      where += fmt::format(" AND {} {}::bigint", condition.column_op,
                           next(std::to_string(std::get<std::uint64_t>(condition.value))));
    }
  }
  if (filter.trace_ids) {
    if (filter.trace_ids->empty()) return TaskAttemptPage{};
    where += fmt::format(
        " AND EXISTS (SELECT 1 FROM attempt_parts p WHERE p.airflow = t.airflow AND p.dag_id = t.dag_id AND "
        "p.task_id = t.task_id AND p.run_id = t.run_id AND p.try_number = t.try_number AND p.map_index = "
        "t.map_index AND p.trace_key = t.trace_key AND p.trace_id = ANY({}::text[]))",
        next(TextArray(*filter.trace_ids)));
  }
  TaskAttemptPage page;
  auto count = db.Query("SELECT count(*) FROM task_attempts t" + where, params);
  if (!count.ok()) return count.error();
  page.total = count->Int64(0, 0);

  const std::string limit = next(std::to_string(filter.limit));
  const std::string offset = next(std::to_string(filter.offset));
  auto rows =
      db.Query(fmt::format("SELECT {} FROM task_attempts t{} ORDER BY {} LIMIT {}::bigint OFFSET {}::bigint",
                           kAttemptRowColumns, where, TaskAttemptOrderSql(filter.order), limit, offset),
               params);
  if (!rows.ok()) return rows.error();
  for (int row = 0; row < rows->rows(); ++row) page.rows.push_back(AttemptRowFrom(ResultColumns(*rows, row)));
  return page;
}

Result<std::vector<std::string>> PostgresTracesMatching(PgConnection& db, std::string_view text) {
  auto result = db.Query(
      "SELECT trace_id FROM traces WHERE trace_id = lower($1) "
      "UNION SELECT trace_id FROM spans WHERE operation_id = $1 "
      "UNION SELECT trace_id FROM attempt_parts WHERE app_id = $1 LIMIT 200",
      {std::string(text)});
  if (!result.ok()) return result.error();
  std::vector<std::string> traces;
  traces.reserve(static_cast<std::size_t>(result->rows()));
  for (int row = 0; row < result->rows(); ++row) traces.emplace_back(result->Text(row, 0));
  return traces;
}

}  // namespace sparktrace::tracing::store
