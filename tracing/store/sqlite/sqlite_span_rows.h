#pragma once
// The SQLite store's spans and traces tables as rows: the statements that write a span and a trace's
// summary, the column lists the reads select, and binding and reading those rows. The row layout
// itself is stored_span.h's; this is only how SQLite's statements carry it.
//
// Threads: the statement's (its connection's thread).

#include <string>
#include <string_view>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/trace_summary.h"

namespace sparktrace::tracing::store {

class SqliteStatement;

// Inserts a span or replaces the stored one with the same (trace id, span id); bound by BindSpanRow.
extern const std::string kUpsertSpanSql;
// Recomputes the summary row of trace ?1 from all its stored spans.
extern const std::string_view kRefreshSummarySql;
// Inserts the summary of a trace that has none yet, else does nothing (sqlite3_changes tells which);
// bound by BindNewSummary.
extern const std::string_view kInsertSummarySql;

void BindSpanRow(SqliteStatement& upsert, const StoredSpanRow& row);
// Binds kInsertSummarySql for a trace that the batch may create.
void BindNewSummary(SqliteStatement& insert, const std::string& trace_hex, const TraceSummaryRow& summary);

// Reads a row of kSpanReadColumns (span_table_sql.h).
Result<Span> SpanFromRow(const SqliteStatement& stmt);
// Reads a row of kSummaryReadColumns; kInternal for a malformed trace id.
Result<TraceSummary> SummaryFromRow(const SqliteStatement& stmt);

}  // namespace sparktrace::tracing::store
