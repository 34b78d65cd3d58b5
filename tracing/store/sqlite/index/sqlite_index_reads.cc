#include "tracing/store/sqlite/index/sqlite_index_reads.h"

#include <spdlog/fmt/fmt.h>

#include <utility>

#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {
namespace {

// One stored span of trace ?1 by its id ?2, as SpansForIndexSql reads it.
std::string SpanForIndexSql() { return SpansForIndexSql() + " AND span_id = ?2"; }

// The parts of a trace (its id as hex text in ?1, as a BLOB in ?2: sqlite_task_index.cc,
// kPartsOfTraceSql) with all a part keeps (increment/part_increment.h): its Airflow parts through
// attempt_parts_by_trace, its part without identity (kept only where it names an application) by
// primary key.
constexpr std::string_view kStoredPartColumns =
    "airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, app_id, start_unix_nano, "
    "end_unix_nano, span_count, open_count, resource_wait_ms, compute_ms, io_write_ms, idle_ms, "
    "finding_count, top_finding, top_impact, operation_count, failed_operation_count, failed_job_count";
const std::string& StoredPartsSql() {
  // And the part its summary holds, if it does (index/sqlite_summary_attempts.h).
  static const std::string sql = fmt::format(
      "SELECT {0} FROM attempt_parts WHERE airflow = 1 AND trace_id = ?2 UNION ALL SELECT {0} FROM "
      "attempt_parts WHERE airflow = 0 AND dag_id = '' AND task_id = '' AND run_id = '' AND try_number = 0 "
      "AND map_index = -1 AND trace_key = ?1 AND trace_id = ?2 UNION ALL SELECT {0} FROM ({1})",
      kStoredPartColumns, HeldPartRowsSql("trace_id = ?2"));
  return sql;
}

}  // namespace

std::string StatementColumns::Text(int column) const { return IdHexOfColumn(stmt_, column); }

// One span as the index needs it (span_table_sql.h: each attribute read only on the spans that can
// carry it; 20,000 stage spans need none), for one trace.
std::string SpansForIndexSql() {
  return fmt::format("SELECT {}\nFROM spans WHERE trace_id = ?1",
                     IndexSpanColumnsSql(SpanSqlDialect::kSqlite));
}

// `stmt` is SpansForIndexSql(), kept prepared by the connection (PrepareCached).
Result<std::vector<IndexSpan>> ReadIndexSpans(SqliteStatement* stmt, const std::string& trace_id) {
  stmt->Reset();
  BindIdHex(*stmt, 1, trace_id);
  std::vector<IndexSpan> spans;
  while (true) {
    auto row = stmt->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    spans.push_back(IndexSpanFrom(StatementColumns(*stmt), 0));
  }
  return spans;
}

namespace {

void BindPartKeyWith(SqliteStatement& stmt, int first, const PartKey& key, bool copy_text) {
  const auto text = [&stmt, copy_text](int index, const std::string& value) {
    if (copy_text) {
      stmt.BindText(index, value);
    } else {
      stmt.BindTextUnowned(index, value);
    }
  };
  stmt.BindInt64(first, key.airflow ? 1 : 0);
  text(first + 1, key.attempt.dag_id);
  text(first + 2, key.attempt.task_id);
  text(first + 3, key.attempt.run_id);
  stmt.BindInt64(first + 4, key.attempt.try_number);
  stmt.BindInt64(first + 5, key.attempt.map_index);
  text(first + 6, key.trace_key);
}

}  // namespace

void BindPartKey(SqliteStatement& stmt, int first, const PartKey& key) {
  BindPartKeyWith(stmt, first, key, true);
}

void BindPartKeyUnowned(SqliteStatement& stmt, int first, const PartKey& key) {
  BindPartKeyWith(stmt, first, key, false);
}

Result<std::map<std::string, task_index::StoredTraceIndex>> ReadStoredTraceIndexes(
    SqliteConnection& db, const std::vector<std::string>& trace_ids) {
  auto awaited = db.PrepareCached("SELECT awaited_parents FROM traces WHERE trace_id = ?1");
  if (!awaited.ok()) return awaited.error();
  auto parts = db.PrepareCached(StoredPartsSql());
  if (!parts.ok()) return parts.error();
  std::map<std::string, task_index::StoredTraceIndex> indexes;
  for (const std::string& trace_id : trace_ids) {
    SqliteStatement& waiting = **awaited;
    waiting.Reset();
    BindIdHex(waiting, 1, trace_id);
    auto row = waiting.Step();
    if (!row.ok()) return row.error();
    if (!*row || waiting.ColumnIsNull(0)) continue;  // unknown: recomputed
    task_index::StoredTraceIndex index;
    index.awaited = task_index::ParseAwaitedParents(waiting.ColumnView(0));
    index.exact = true;
    SqliteStatement& select = **parts;
    select.Reset();
    select.BindText(1, trace_id);
    BindIdHex(select, 2, trace_id);
    while (true) {
      auto part_row = select.Step();
      if (!part_row.ok()) return part_row.error();
      if (!*part_row) break;
      // Columns 0-6 are the part's key, its figures follow (StoredPartFrom, index_columns.h).
      std::optional<Part> part = StoredPartFrom(StatementColumns(select), 7);
      if (!part) {
        index.exact = false;
        break;
      }
      index.parts.emplace(
          PartKey{select.ColumnInt64(0) != 0,
                  TaskAttemptKey{select.ColumnText(1), select.ColumnText(2), select.ColumnText(3),
                                 select.ColumnInt64(4), select.ColumnInt64(5)},
                  select.ColumnText(6)},
          std::move(*part));
    }
    indexes.emplace(trace_id, std::move(index));
  }
  (*awaited)->Reset();  // a finished read still pins its snapshot until reset
  (*parts)->Reset();
  return indexes;
}

namespace {

// The stored span on `select`'s row, whose columns are SpansForIndexSql's.
StoredSpanVersion StoredVersionOnRow(const SqliteStatement& select) {
  // IndexSpanColumnsSql's first ten columns are the span's own (span_table_sql.cc).
  const auto text = [&select](int column) -> std::optional<std::string> {
    if (select.ColumnIsNull(column)) return std::nullopt;
    return select.ColumnText(column);
  };
  SummarySpan summary;
  summary.root = select.ColumnIsNull(1);
  summary.name = select.ColumnText(2);
  summary.start_unix_nano = select.ColumnInt64(3);
  summary.end_unix_nano = select.ColumnInt64(4);
  summary.error = select.ColumnInt64(5) == 2;
  summary.dag_id = text(6);
  summary.task_id = text(7);
  summary.run_id = text(8);
  if (!select.ColumnIsNull(9)) summary.try_number = select.ColumnInt64(9);
  return StoredSpanVersion{IndexSpanFrom(StatementColumns(select), 0), std::move(summary)};
}

// The stored spans of trace ?1 among the ids ?2 to ?(kStoredVersionsPerRead + 1); an unused one is NULL,
// which matches no span. One seek an id in one run of the statement, where a query an id ran the
// statement's program once a span (~10k instructions a span of a long trace, most of its reads).
constexpr int kStoredVersionsPerRead = 32;
const std::string& StoredVersionsSql() {
  static const std::string sql = [] {
    std::string in;
    for (int i = 0; i < kStoredVersionsPerRead; ++i) in += fmt::format("{}?{}", i == 0 ? "" : ", ", i + 2);
    return fmt::format("{} AND span_id IN ({})", SpansForIndexSql(), in);
  }();
  return sql;
}

}  // namespace

Result<std::optional<StoredSpanVersion>> ReadStoredVersion(SqliteConnection& db, std::string_view trace_id,
                                                           std::string_view span_id) {
  static const std::string span_sql = SpanForIndexSql();
  auto read = db.PrepareCached(span_sql);
  if (!read.ok()) return read.error();
  SqliteStatement& select = **read;
  select.Reset();
  BindIdHex(select, 1, trace_id);
  BindIdHex(select, 2, span_id);
  auto row = select.Step();
  if (!row.ok()) return row.error();
  std::optional<StoredSpanVersion> version;
  if (*row) version = StoredVersionOnRow(select);
  select.Reset();
  return version;
}

Result<StoredVersions> ReadStoredVersions(SqliteConnection& db, std::string_view trace_id_bytes,
                                          const std::vector<std::string_view>& span_id_bytes) {
  auto read = db.PrepareCached(StoredVersionsSql());
  if (!read.ok()) return read.error();
  SqliteStatement& select = **read;
  StoredVersions versions;
  for (std::size_t first = 0; first < span_id_bytes.size(); first += kStoredVersionsPerRead) {
    select.Reset();
    select.BindBlobUnowned(1, trace_id_bytes);
    for (int i = 0; i < kStoredVersionsPerRead; ++i) {
      const std::size_t at = first + static_cast<std::size_t>(i);
      if (at < span_id_bytes.size()) {
        select.BindBlobUnowned(i + 2, span_id_bytes[at]);
      } else {
        select.BindNull(i + 2);
      }
    }
    while (true) {
      auto row = select.Step();
      if (!row.ok()) return row.error();
      if (!*row) break;
      StoredSpanVersion version = StoredVersionOnRow(select);
      std::string span_id = version.index.span_id;
      versions.insert_or_assign(std::move(span_id), std::move(version));
    }
  }
  select.Reset();  // a finished read still pins its snapshot until reset
  return versions;
}

Result<void> WriteAwaitedParents(SqliteConnection& db,
                                 const std::map<std::string, std::optional<std::string>>& awaited_by_trace) {
  auto update = db.PrepareCached("UPDATE traces SET awaited_parents = ?2 WHERE trace_id = ?1");
  if (!update.ok()) return update.error();
  for (const auto& [trace_id, awaited] : awaited_by_trace) {
    (*update)->Reset();
    BindIdHex(**update, 1, trace_id);
    if (awaited) {
      (*update)->BindText(2, *awaited);
    } else {
      (*update)->BindNull(2);
    }
    if (auto ran = (*update)->Run(); !ran.ok()) return ran.error();
  }
  (*update)->Reset();
  return {};
}

}  // namespace sparktrace::tracing::store
