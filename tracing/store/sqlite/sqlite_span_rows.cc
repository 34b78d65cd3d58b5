#include "tracing/store/sqlite/sqlite_span_rows.h"

#include <spdlog/fmt/fmt.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "tracing/store/span_rows/shared/shared_attributes.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"
#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"
#include "tracing/store/task_index/attempt_row_sql.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {
namespace {

// The shared column list and conflict rule (span_table_sql.h) less session_id, which this store's
// spans table has no column for since schema version 8 (sqlite_schema.cc, kCompactSpansSchema).
std::string WithoutSessionId(std::string sql, std::string_view spelling) {
  const std::size_t at = sql.find(spelling);
  if (at != std::string::npos) sql.erase(at, spelling.size());
  return sql;
}

int HexValue(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  return -1;
}

}  // namespace

void BindOptionalInt(SqliteStatement& stmt, int index, std::optional<std::int64_t> value) {
  if (value) {
    stmt.BindInt64(index, *value);
  } else {
    stmt.BindNull(index);
  }
}

void BindStoredName(SqliteStatement& stmt, int index, std::string_view name) {
  // A name StoredName spells into `coded` (a prefix-coded or escaped one), which dies here, is bound as a
  // copy; the others (the name itself, a whole name's code byte in static storage) as they are.
  std::string coded;
  if (const std::string_view stored = StoredName(name, coded); coded.empty()) {
    stmt.BindTextUnowned(index, stored);
  } else {
    stmt.BindText(index, stored);
  }
}

void BindOptionalTextUnowned(SqliteStatement& stmt, int index, const std::string* text) {
  if (text == nullptr) {
    stmt.BindNull(index);
  } else {
    stmt.BindTextUnowned(index, *text);
  }
}

void BindIdHex(SqliteStatement& stmt, int index, std::string_view hex) {
  std::string bytes(hex.size() / 2, '\0');
  bool spelled = hex.size() % 2 == 0 && !hex.empty();
  for (std::size_t i = 0; spelled && i < bytes.size(); ++i) {
    const int high = HexValue(hex[2 * i]);
    const int low = HexValue(hex[2 * i + 1]);
    spelled = high >= 0 && low >= 0;
    bytes[i] = static_cast<char>(high * 16 + low);
  }
  if (spelled) {
    stmt.BindBlob(index, bytes);
  } else {
    stmt.BindText(index, hex);  // not an id this store wrote: matches no BLOB
  }
}

std::string IdHexOfColumn(const SqliteStatement& stmt, int column) {
  if (!stmt.ColumnIsBlob(column)) return stmt.ColumnText(column);
  static constexpr std::string_view kDigits = "0123456789abcdef";
  const std::string_view bytes = stmt.ColumnBlobView(column);
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    hex += kDigits[value >> 4];
    hex += kDigits[value & 0xf];
  }
  return hex;
}

bool TraceIdOfColumn(const SqliteStatement& stmt, int column, TraceId& out) {
  if (!stmt.ColumnIsBlob(column)) return ParseTraceHex(stmt.ColumnView(column), out);
  const std::string_view bytes = stmt.ColumnBlobView(column);
  if (bytes.size() != out.size()) return false;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(bytes[i]);
  return true;
}

std::string NumberedValuesSql(int rows, int columns) {
  std::string values;
  for (int row = 0; row < rows; ++row) {
    values += row == 0 ? "(" : ", (";
    for (int column = 0; column < columns; ++column) {
      values += fmt::format("{}?{}", column == 0 ? "" : ", ", 1 + row * columns + column);
    }
    values += ')';
  }
  return values;
}

Result<void> RunManyRows(SqliteStatement& many, SqliteStatement& one, std::size_t rows,
                         std::size_t rows_per_statement, int parameters_per_row,
                         const std::function<void(SqliteStatement&, std::size_t row, int first)>& bind) {
  std::size_t next = 0;
  many.Reset();
  for (; rows - next >= rows_per_statement; next += rows_per_statement) {
    many.ResetKeepingBindings();  // every parameter is bound again below
    for (std::size_t row = 0; row < rows_per_statement; ++row) {
      bind(many, next + row, 1 + static_cast<int>(row) * parameters_per_row);
    }
    if (auto ran = many.Run(); !ran.ok()) {
      many.Reset();
      return ran.error();
    }
  }
  many.Reset();  // drops the last chunk's bindings
  one.Reset();
  for (; next < rows; ++next) {
    one.ResetKeepingBindings();
    bind(one, next, 1);
    if (auto ran = one.Run(); !ran.ok()) {
      one.Reset();
      return ran.error();
    }
  }
  one.Reset();
  return {};
}

std::string UpsertSpansSql(int rows) {
  return fmt::format(
      "INSERT INTO spans ({}) VALUES {}{}", WithoutSessionId(std::string(kStoredSpanColumns), "session_id, "),
      NumberedValuesSql(rows, kSpanRowParameters),
      WithoutSessionId(SpanReplacesStoredSql(SpanSqlDialect::kSqlite), "session_id = excluded.session_id, "));
}

const std::string kUpsertSpanSql = UpsertSpansSql(1);

// Recomputed from the trace's spans rather than adjusted incrementally: a replaced span may change the
// trace's bounds, error count or root, and recomputing is always right.
const std::string_view kRefreshSummarySql = R"sql(
INSERT INTO traces (trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count,
                    dag_id, task_id, run_id, try_number)
SELECT ?1,
       COALESCE((SELECT name FROM spans WHERE trace_id = ?1 AND parent_span_id IS NULL
                 ORDER BY start_unix_nano, span_id LIMIT 1),
                (SELECT name FROM spans WHERE trace_id = ?1 ORDER BY start_unix_nano, span_id LIMIT 1)),
       min(start_unix_nano), max(end_unix_nano), count(*), sum(status_code = 2),
       max(dag_id), max(task_id), max(run_id), max(try_number)
FROM spans WHERE trace_id = ?1
ON CONFLICT (trace_id) DO UPDATE SET
  root_name = excluded.root_name, start_unix_nano = excluded.start_unix_nano,
  end_unix_nano = excluded.end_unix_nano, span_count = excluded.span_count,
  error_count = excluded.error_count, dag_id = excluded.dag_id, task_id = excluded.task_id,
  run_id = excluded.run_id, try_number = excluded.try_number
)sql";

const std::string_view kAddToSummarySql = R"sql(
UPDATE traces SET end_unix_nano = ?2, span_count = span_count + ?3, error_count = error_count + ?4,
  dag_id = CASE WHEN ?5 IS NULL OR dag_id >= ?5 THEN dag_id ELSE ?5 END,
  task_id = CASE WHEN ?6 IS NULL OR task_id >= ?6 THEN task_id ELSE ?6 END,
  run_id = CASE WHEN ?7 IS NULL OR run_id >= ?7 THEN run_id ELSE ?7 END,
  try_number = CASE WHEN ?8 IS NULL OR try_number >= ?8 THEN try_number ELSE ?8 END
WHERE trace_id = ?1
)sql";

void BindSpanRow(SqliteStatement& upsert, const StoredSpanRow& row, const Span& span, int first) {
  // Unowned: the row outlives the statement's run, and the writer resets the statement right after.
  // The ids are the span's bytes (BLOBs since schema version 10), the row's hex spelling of them.
  const int at = first - 1;  // parameter n of the row is at + n
  upsert.BindBlobUnowned(at + 1, IdBytes(span.trace_id));
  upsert.BindBlobUnowned(at + 2, IdBytes(span.span_id));
  if (row.parent_span_id) {
    upsert.BindBlobUnowned(at + 3, IdBytes(span.parent_span_id));
  } else {
    upsert.BindNull(at + 3);
  }
  BindStoredName(upsert, at + 4, row.name);
  upsert.BindInt64(at + 5, row.kind);
  upsert.BindInt64(at + 6, row.start_unix_nano);
  upsert.BindInt64(at + 7, row.end_unix_nano);
  upsert.BindInt64(at + 8, row.status_code);
  upsert.BindTextUnowned(at + 9, row.status_message);
  upsert.BindTextUnowned(at + 10, row.trace_state);
  upsert.BindBlobUnowned(at + 11, row.attributes);  // compact or shared: rows/sqlite_attribute_sets.h
  upsert.BindTextUnowned(at + 12, row.events_json);
  BindOptionalTextUnowned(upsert, at + 13, row.operation_id);
  BindOptionalTextUnowned(upsert, at + 14, row.dag_id);
  BindOptionalTextUnowned(upsert, at + 15, row.task_id);
  BindOptionalTextUnowned(upsert, at + 16, row.run_id);
  BindOptionalInt(upsert, at + 17, row.try_number);
}

Result<Span> SpanFromRow(const SqliteStatement& stmt, AttributeSetSource& sets) {
  StoredSpanColumns columns;
  // BLOBs since schema version 10 (the migration converts every row), taken as they are.
  columns.ids_binary = stmt.ColumnIsBlob(0);
  const auto id = [&stmt, &columns](int column) {
    return columns.ids_binary ? stmt.ColumnBlobView(column) : stmt.ColumnView(column);
  };
  columns.trace_id = id(0);
  columns.span_id = id(1);
  if (!stmt.ColumnIsNull(2)) columns.parent_span_id = id(2);
  columns.name = stmt.ColumnView(3);
  columns.kind = stmt.ColumnInt64(4);
  columns.start_unix_nano = stmt.ColumnInt64(5);
  columns.end_unix_nano = stmt.ColumnInt64(6);
  columns.status_code = stmt.ColumnInt64(7);
  columns.status_message = stmt.ColumnView(8);
  columns.trace_state = stmt.ColumnView(9);
  // A BLOB in the compact form; text for rows written before schema version 6, which stay JSON.
  columns.attributes_compact = stmt.ColumnIsBlob(10);
  columns.attributes = columns.attributes_compact ? stmt.ColumnBlobView(10) : stmt.ColumnView(10);
  columns.attribute_sets = &sets;
  columns.events_json = stmt.ColumnView(11);
  return FromStoredColumns(columns);
}

Result<TraceSummary> SummaryFromRow(const SqliteStatement& stmt) {
  TraceSummary summary;
  if (!TraceIdOfColumn(stmt, 0, summary.trace_id)) {
    return Error{ErrorCode::kInternal,
                 fmt::format("malformed trace id in trace summary: {}", IdHexOfColumn(stmt, 0))};
  }
  summary.root_name = NameOfStored(stmt.ColumnView(1));
  summary.start_time_unix_nano = FromSql(stmt.ColumnInt64(2));
  summary.end_time_unix_nano = FromSql(stmt.ColumnInt64(3));
  summary.span_count = FromSql(stmt.ColumnInt64(4));
  summary.error_count = FromSql(stmt.ColumnInt64(5));
  summary.dag_id = stmt.ColumnText(6);
  summary.task_id = stmt.ColumnText(7);
  summary.run_id = stmt.ColumnText(8);
  if (!stmt.ColumnIsNull(9)) summary.try_number = stmt.ColumnInt64(9);
  return summary;
}

std::string InsertAttemptsSql(int rows) {
  return fmt::format(R"sql(
INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, trace_ids,
                           start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms,
                           compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at,
                           settles)
VALUES {}
)sql",
                     NumberedValuesSql(rows, kAttemptRowParameters));
}

std::string AttemptRowColumnsSql(std::size_t max_trace_ids) {
  return AttemptRowReadColumnsSql("task_attempts", "group_concat(lower(hex(p.trace_id)), ',')",
                                  kHeldTracesOfRowSql, max_trace_ids);
}

}  // namespace sparktrace::tracing::store
