#pragma once
// What the PostgreSQL store reads back to update a trace's summary and task index from a batch
// without re-reading the trace (increment/part_increment.h, increment/summary_increment.h), each in
// one statement for all the batch's traces: on PostgreSQL a round trip costs more than the rows it
// reads, so nothing here is read span by span. The stored versions of the batch's spans, the stored
// spans above them and the traces' summary bounds come in one query before the upsert; the parts and
// awaited parents of the traces in another; the awaited parents go back in one UPDATE.
//
// Threads: the caller's, inside its write transaction, under the traces' advisory locks.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/increment/part_increment.h"
#include "tracing/store/increment/summary_increment.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {

// One row of a query's result, as index_columns.h reads it.
class ResultColumns {
 public:
  ResultColumns(const PgResult& result, int row) : result_(result), row_(row) {}
  bool IsNull(int column) const { return result_.IsNull(row_, column); }
  std::int64_t Int64(int column) const { return result_.Int64(row_, column); }
  double Double(int column) const { return result_.Double(row_, column); }
  std::string Text(int column) const { return std::string(result_.Text(row_, column)); }
  std::string_view View(int column) const { return result_.Text(row_, column); }

 private:
  const PgResult& result_;
  int row_;
};

// The columns a stored span is read with for the index (span_rows/span_table_sql.h's
// IndexSpanColumnsSql, spelled for this schema), the trace id (hex) first: its tree, times, status and
// identity columns, its attributes only on the spans that can carry one the index reads (compact
// bytea: a stage or call span needs none), its events only when they hold a finding.
std::string PostgresIndexSpanColumnsSql();
// A row of those columns (from column 0) as the index takes a span being written (IndexSpanOf).
Result<IndexSpan> PostgresIndexSpanFrom(const PgResult& result, int row);

// One stored span as the index and the trace's summary count it: the version a batch span replaces.
struct PostgresStoredVersion {
  IndexSpan index;
  SummarySpan summary;
  std::int64_t approx_bytes = 0;               // what it adds to traces.approx_bytes
  std::optional<std::int64_t> task_map_index;  // spans.task_map_index (the upsert's rule compares it)
};

// Stored spans by trace (hex) and span id (hex); nullopt: known not to be stored.
using KnownSpans = std::map<std::string, std::map<std::string, std::optional<IndexSpan>>>;

struct StoredBeforeBatch {
  // The stored version of each batch span that has one, by trace and span id.
  std::map<std::string, std::map<std::string, PostgresStoredVersion, std::less<>>, std::less<>> versions;
  // Every stored span on the way up from the batch's spans and their parents, and the ids that walk
  // found missing: what part_increment.h's walk asks for, answered without a query each.
  KnownSpans ancestors;
  // The traces' summary bounds (start, end), for SummaryIncrement.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> bounds;
  // The traces whose summary holds their part (held/postgres_held_parts.h), to release before the
  // summaries change.
  std::vector<std::string> holding_parts;
};
// For these traces (hex) and, by trace, the ids of the batch's spans and of their parents.
Result<StoredBeforeBatch> ReadStoredBeforeBatch(PgConnection& db,
                                                const std::map<std::string, std::vector<std::string>>& ids);

// One stored span of a trace (nullopt: not stored), for a walk that left what ReadStoredBeforeBatch
// knew.
Result<std::optional<IndexSpan>> ReadPostgresIndexSpan(PgConnection& db, const std::string& trace_id,
                                                       const std::string& span_id);

// What the index keeps of these traces; a trace not counted since schema 4 (awaited parents NULL) is
// absent, one with a part written before is not exact (both recomputed).
Result<std::map<std::string, task_index::StoredTraceIndex>> ReadPostgresTraceIndexes(
    PgConnection& db, const std::vector<std::string>& trace_ids);

// Records the parents each trace's spans wait for (traces.awaited_parents; nullopt: NULL, unknown).
Result<void> WritePostgresAwaitedParents(PgConnection& db,
                                         const std::map<std::string, std::optional<std::string>>& awaited);

}  // namespace sparktrace::tracing::store
