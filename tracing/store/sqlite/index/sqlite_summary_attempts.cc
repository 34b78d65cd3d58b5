#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"

#include <spdlog/fmt/fmt.h>
#include <sqlite3.h>

#include <cstdint>

#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {
namespace {

// The state of a held attempt: never running (task_index::SummaryMayHoldAttempt), failed when its
// errors, which are the summary's (SummaryHoldsAttempt), are not none; as AttemptState (attempt_parts.h)
// says.
constexpr std::string_view kHeldStateSql = "CASE WHEN error_count > 0 THEN 'failed' ELSE 'success' END";

}  // namespace

Result<bool> HoldInSummary(SqliteConnection& db, const PartKey& key, const Part& part) {
  if (!task_index::SummaryMayHoldAttempt(key, part) || key.trace_key.size() != 32) return false;
  // The summary as stored (the batch's summary writes came first, sqlite_span_store.cc): held when it
  // says what the attempt's row would.
  auto hold = db.PrepareCached(
      "UPDATE traces SET attempt = 1 WHERE trace_id = ?1 AND root_name = ?2 AND span_count = ?3 AND "
      "error_count = ?4 AND start_unix_nano = ?5 AND end_unix_nano = ?6");
  if (!hold.ok()) return hold.error();
  SqliteStatement& update = **hold;
  update.Reset();
  BindIdHex(update, 1, key.trace_key);
  BindStoredName(update, 2, part.name);  // as root_name keeps it
  update.BindInt64(3, part.spans);
  update.BindInt64(4, part.Errors());
  update.BindInt64(5, static_cast<std::int64_t>(part.start));
  update.BindInt64(6, static_cast<std::int64_t>(part.end));
  auto ran = update.Run();
  update.Reset();
  if (!ran.ok()) return ran.error();
  return sqlite3_changes(db.handle()) != 0;
}

Result<void> ReleaseFromSummary(SqliteConnection& db, const std::string& trace_hex) {
  auto release = db.PrepareCached("UPDATE traces SET attempt = NULL WHERE trace_id = ?1 AND attempt = 1");
  if (!release.ok()) return release.error();
  (*release)->Reset();
  BindIdHex(**release, 1, trace_hex);
  auto ran = (*release)->Run();
  (*release)->Reset();
  return ran;
}

std::string SummaryAttemptsSql(std::string_view where, std::string_view trace_match) {
  // A trace key and the columns of kAttemptRowColumns (index_columns.h), as a task_attempts row of an
  // attempt without identity has them: its trace id as its key and its trace list (a BLOB, read as hex;
  // the list reads the key, AttemptRowReadColumnsSql), its end as the version of
  // its figures (AttemptRevisionTag hashes the figures themselves too), nothing settled. SQLite
  // flattens the inner SELECT, so that `where` reads traces_by_start and the list merges both arms
  // in the index's order (sqlite_attempt_list.cc).
  return fmt::format(
      "SELECT * FROM (SELECT trace_id AS trace_key, 0 AS airflow, '' AS dag_id, '' AS task_id, '' AS run_id, "
      "0 AS try_number, "
      "-1 AS map_index, {} AS name, trace_id AS trace_ids, start_unix_nano, end_unix_nano, "
      "span_count, error_count, 0 AS open_count, 0 AS resource_wait_ms, 0 AS compute_ms, 0 AS io_write_ms, "
      "0 AS idle_ms, 0 AS finding_count, NULL AS top_finding, {} AS state, end_unix_nano AS indexed_at, "
      "NULL AS settled_version, NULL AS settled_at, NULL AS core_seconds, NULL AS gib_seconds, "
      "NULL AS money, NULL AS idle_fraction, NULL AS regression FROM traces WHERE attempt = 1{}){}",
      NameOfStoredSql(SpanSqlDialect::kSqlite, "root_name"), kHeldStateSql,
      trace_match.empty() ? std::string() : fmt::format(" AND {}", trace_match), where);
}

Result<bool> HoldPartInSummary(SqliteConnection& db, const std::string& trace_hex, const PartKey& key,
                               const Part& part) {
  // The summary as stored (the batch's summary writes came first, sqlite_span_store.cc), which holds
  // nothing yet (an attempt without identity it holds is released after the parts are written).
  auto hold = db.PrepareCached(
      "UPDATE traces SET attempt = 2, map_index = ?2 WHERE trace_id = ?1 AND attempt IS NULL AND dag_id = ?3 "
      "AND task_id = ?4 AND run_id = ?5 AND try_number = ?6 AND span_count = ?7 AND start_unix_nano = ?8 AND "
      "end_unix_nano = ?9");
  if (!hold.ok()) return hold.error();
  SqliteStatement& update = **hold;
  update.Reset();
  BindIdHex(update, 1, trace_hex);
  update.BindInt64(2, key.attempt.map_index);
  update.BindTextUnowned(3, key.attempt.dag_id);
  update.BindTextUnowned(4, key.attempt.task_id);
  update.BindTextUnowned(5, key.attempt.run_id);
  update.BindInt64(6, key.attempt.try_number);
  update.BindInt64(7, part.spans);
  update.BindInt64(8, static_cast<std::int64_t>(part.start));
  update.BindInt64(9, static_cast<std::int64_t>(part.end));
  auto ran = update.Run();
  update.Reset();
  if (!ran.ok()) return ran.error();
  return sqlite3_changes(db.handle()) != 0;
}

std::string HeldPartRowsSql(std::string_view where) {
  // Every figure but the summary's three is what SummaryMayHoldPart requires; a part's name is its
  // task's "dag.task" (PartsOfTrace).
  return fmt::format(
      "SELECT 1 AS airflow, dag_id, task_id, run_id, try_number, map_index, '' AS trace_key, trace_id, "
      "dag_id || '.' || task_id AS name, NULL AS app_id, start_unix_nano, end_unix_nano, span_count, "
      "0 AS error_count, 0 AS open_count, 0 AS resource_wait_ms, 0 AS compute_ms, 0 AS io_write_ms, "
      "0 AS idle_ms, 0 AS finding_count, NULL AS top_finding, -1.0 AS top_impact, 0 AS operation_count, "
      "0 AS failed_operation_count, 0 AS failed_job_count FROM traces WHERE attempt = 2 AND {}",
      where);
}

std::string HeldPartsIntoRowsSql(std::string_view where) {
  return fmt::format("INSERT INTO attempt_parts ({}) {}", kAttemptPartColumns, HeldPartRowsSql(where));
}

Result<void> ReleaseHeldParts(SqliteConnection& db,
                              const std::map<std::string, std::vector<IndexSpan>>& traces) {
  static const std::string write_sql = HeldPartsIntoRowsSql("trace_id = ?1");
  static const std::string clear_sql =
      "UPDATE traces SET attempt = NULL, map_index = NULL WHERE trace_id = ?1 AND attempt = 2";
  for (const std::string* sql : {&write_sql, &clear_sql}) {
    auto stmt = db.PrepareCached(*sql);
    if (!stmt.ok()) return stmt.error();
    SqliteStatement& run = **stmt;
    for (const auto& [trace_hex, spans] : traces) {
      run.Reset();
      BindIdHex(run, 1, trace_hex);
      if (auto ran = run.Run(); !ran.ok()) return ran.error();
    }
    run.Reset();
  }
  return {};
}

}  // namespace sparktrace::tracing::store
