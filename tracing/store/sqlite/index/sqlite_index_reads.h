#pragma once
// What the SQLite task index reads back (sqlite_task_index.cc writes): stored spans as the index needs
// them, a trace's parts and awaited parents for a batch's update without re-reading the trace
// (increment/part_increment.h), and the version of a span a batch replaces.
//
// Threads: the connection's, inside the caller's transaction.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/increment/part_increment.h"
#include "tracing/store/increment/summary_increment.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

// One result row of a prepared statement, as index_columns.h reads it.
class StatementColumns {
 public:
  explicit StatementColumns(const SqliteStatement& stmt) : stmt_(stmt) {}
  bool IsNull(int column) const { return stmt_.ColumnIsNull(column); }
  std::int64_t Int64(int column) const { return stmt_.ColumnInt64(column); }
  double Double(int column) const { return stmt_.ColumnDouble(column); }
  // Text, or an id column's BLOB as lower-case hex (spans' ids are BLOBs since schema version 10).
  std::string Text(int column) const;
  std::string_view View(int column) const { return stmt_.ColumnView(column); }
  // json_extract hands out a JSON number as an integer (a fraction truncated, as SQLite converts).
  std::optional<std::int64_t> JsonInteger(int column) const { return stmt_.ColumnInt64(column); }

 private:
  const SqliteStatement& stmt_;
};

// An attempt's key (a PartKey) as parameters `first` to `first` + 6, as kPartKeyMatchSql matches it.
void BindPartKey(SqliteStatement& stmt, int first, const PartKey& key);
// The same without copying its text: `key` must outlive the statement's run up to its next Reset().
void BindPartKeyUnowned(SqliteStatement& stmt, int first, const PartKey& key);
// `airflow = (?1 + 0)`, not `airflow = ?1`: a bound value compared with the column of a partial index's
// condition (sqlite_schema.cc, kAirflowOnlyIndexesSchema) makes SQLite prepare the statement again
// whenever the value is bound, every key of every batch (a fifth of a grouped batch's CPU); an
// expression does not.
inline constexpr std::string_view kPartKeyMatchSql =
    "airflow = (?1 + 0) AND dag_id = ?2 AND task_id = ?3 AND run_id = ?4 AND try_number = ?5 "
    "AND map_index = ?6 AND trace_key = ?7";

// The spans of trace ?1 as the index reads them (span_table_sql.h's IndexSpanColumnsSql).
std::string SpansForIndexSql();
// `stmt` is SpansForIndexSql(), kept prepared by the connection (PrepareCached).
Result<std::vector<IndexSpan>> ReadIndexSpans(SqliteStatement* stmt, const std::string& trace_id);

// What the index keeps of these traces; a trace not counted since schema 9 is absent (recomputed).
Result<std::map<std::string, task_index::StoredTraceIndex>> ReadStoredTraceIndexes(
    SqliteConnection& db, const std::vector<std::string>& trace_ids);

// One stored span as the index and the trace's summary count it (nullopt: not stored): the version a
// batch span replaces.
struct StoredSpanVersion {
  IndexSpan index;
  SummarySpan summary;
};
Result<std::optional<StoredSpanVersion>> ReadStoredVersion(SqliteConnection& db, std::string_view trace_id,
                                                           std::string_view span_id);
// The stored versions of some spans of one trace, by span id (hex); a span not stored is absent. The
// ids are given as their bytes (16 and 8, any order), bound without copies: they must outlive the call.
// A few queries for all, where ReadStoredVersion is one a span.
using StoredVersions = std::map<std::string, StoredSpanVersion, std::less<>>;
Result<StoredVersions> ReadStoredVersions(SqliteConnection& db, std::string_view trace_id_bytes,
                                          const std::vector<std::string_view>& span_id_bytes);

// Records the parents each trace's spans wait for (traces.awaited_parents; nullopt: NULL, unknown).
Result<void> WriteAwaitedParents(SqliteConnection& db,
                                 const std::map<std::string, std::optional<std::string>>& awaited_by_trace);

}  // namespace sparktrace::tracing::store
