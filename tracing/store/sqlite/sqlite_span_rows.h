#pragma once
// The SQLite store's spans and traces tables as rows: the statements that write a span and a trace's
// summary, the column lists the reads select, and binding and reading those rows. The row layout
// itself is stored_span.h's; this is only how SQLite's statements carry it. Also the task_attempts
// rows' SQL that differs from the shared task index's (sqlite_task_index.cc), and the multi-row VALUES
// lists the writer's hot statements use.
//
// Threads: the statement's (its connection's thread).

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/increment/summary_increment.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/trace_summary.h"

namespace sparktrace::tracing::store {

class SqliteStatement;
class AttributeSetSource;

// Trace and span ids are BLOBs (16 and 8 bytes) in spans and traces since schema version 10
// (sqlite_schema.cc, kBinaryIdsSchema); the task index and every API spell them as lower-case hex.
// Binds the id that `hex` spells as a BLOB (copied); text that is no id is bound as text, matching none.
void BindIdHex(SqliteStatement& stmt, int index, std::string_view hex);
// An id column as lower-case hex (a BLOB converted; text as it is).
std::string IdHexOfColumn(const SqliteStatement& stmt, int column);
// Binds `value`, NULL for nullopt.
void BindOptionalInt(SqliteStatement& stmt, int index, std::optional<std::int64_t> value);
// Binds a span's name as the rows keep it (span_rows/stored_span.h, StoredName; schema 15 on):
// without a copy when it is kept as it is (on BindTextUnowned's terms), else its coded copy.
void BindStoredName(SqliteStatement& stmt, int index, std::string_view name);
// Binds `text` without a copy (on SqliteStatement::BindTextUnowned's terms), NULL for nullptr.
void BindOptionalTextUnowned(SqliteStatement& stmt, int index, const std::string* text);

// An id's bytes, as spans and traces store it since schema version 10 (a BLOB), without a copy.
template <std::size_t N>
std::string_view IdBytes(const std::array<std::uint8_t, N>& id) {
  return {reinterpret_cast<const char*>(id.data()), N};
}

// A trace id column (a 16-byte BLOB, or hex text) into `out`; false when it is neither.
bool TraceIdOfColumn(const SqliteStatement& stmt, int column, TraceId& out);

// "(?1, …, ?columns), (?columns+1, …), …" for `rows` rows: row r's parameters start at 1 + r * columns.
// The writer's hot statements write many rows at once, so that a statement's own cost (reset, cursors
// opened and closed, its end) is paid once for all of them; SQLite applies the rows in order, as that
// many single-row statements would.
std::string NumberedValuesSql(int rows, int columns);
// Writes `rows` rows: each whole chunk of `rows_per_statement` through `many` (a statement of that many
// rows, NumberedValuesSql), the rest one at a time through `one`. bind(statement, row, first) binds
// row `row` from parameter `first`, every one of its parameters (NULL too: what the row before bound
// stays bound otherwise). Both statements are reset after (their unowned text released), also when a
// run fails.
Result<void> RunManyRows(SqliteStatement& many, SqliteStatement& one, std::size_t rows,
                         std::size_t rows_per_statement, int parameters_per_row,
                         const std::function<void(SqliteStatement&, std::size_t row, int first)>& bind);

// Inserts a span or replaces the stored one with the same (trace id, span id); bound by BindSpanRow.
extern const std::string kUpsertSpanSql;
// The parameters one span takes in kUpsertSpanSql.
inline constexpr int kSpanRowParameters = 17;
// kUpsertSpanSql for `rows` spans in one statement (multi-row VALUES, applied in order as that many
// single-row upserts would be): row r is bound by BindSpanRow with first = 1 + r * kSpanRowParameters.
std::string UpsertSpansSql(int rows);
// Recomputes the summary row of trace ?1 from all its stored spans.
extern const std::string_view kRefreshSummarySql;

// Adds a batch to the summary row of trace ?1 (increment/summary_increment.h's SummaryChange): ?2 the
// new end, ?3 spans and ?4 errors to add, ?5-?8 the batch's greatest dag, task, run and try (NULL:
// none), kept where they exceed the row's, as kRefreshSummarySql's max() would.
extern const std::string_view kAddToSummarySql;

// Binds without copying (SqliteStatement::BindTextUnowned): `row`, and `span` (the span it was made
// from, whose ids are bound as they are), must outlive the statement's run up to its next Reset().
void BindSpanRow(SqliteStatement& upsert, const StoredSpanRow& row, const Span& span, int first = 1);
// The parameters one attempt takes in InsertAttemptsSql: its key (airflow, dag, task, run, try, map
// index, trace key), name, trace ids, the sums in task_index.h's PartSums order, state, indexed_at,
// settles (upkeep/sqlite_settlement.h, kSettlesSchema).
inline constexpr int kAttemptRowParameters = 23;
// Inserts `rows` attempts (multi-row VALUES); row r's parameters start at 1 + r * kAttemptRowParameters.
std::string InsertAttemptsSql(int rows);

// kAttemptRowColumns (task_index/index_columns.h) as this store keeps them: since schema version 8
// (sqlite_schema.cc, kCompactSpansSchema) the row of an attempt without identity holds '' for its trace
// ids, its one trace being its trace key, and the listing reads the key there. A call per trace saves
// the second copy of its id. Since version 12 an Airflow attempt's row holds '' too, and the listing
// reads its traces from its parts (attempt_parts' key orders them): a batch adding a few traces to an
// attempt of 50,000 no longer rewrites the list of all of them. At most `max_trace_ids` and one more
// (TaskAttemptFilter::max_trace_ids; 0: all).
std::string AttemptRowColumnsSql(std::size_t max_trace_ids);

// Reads a row of kSpanReadColumns (span_table_sql.h); a row in the shared form finds its attribute
// set through `sets` (rows/sqlite_attribute_sets.h).
Result<Span> SpanFromRow(const SqliteStatement& stmt, AttributeSetSource& sets);
// Reads a row of kSummaryReadColumns; kInternal for a malformed trace id.
Result<TraceSummary> SummaryFromRow(const SqliteStatement& stmt);

}  // namespace sparktrace::tracing::store
