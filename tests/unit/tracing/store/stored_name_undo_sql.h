#pragma once
// SQL that turns a current store's names back into what an older version wrote, in either dialect,
// for the migration tests that start from one (sqlite_store_file_test.h, postgres_schema_undo.h).

#include <spdlog/fmt/fmt.h>

#include <string>
#include <string_view>

#include "tracing/store/span_rows/compact_attribute_dictionary.h"
#include "tracing/store/span_rows/span_table_sql.h"

namespace sparktrace::tracing::store {

// The code of a text's first character in `dialect`'s SQL (SQLite's unicode(), PostgreSQL's ascii()).
inline std::string FirstCodeSql(SpanSqlDialect dialect, std::string_view text) {
  return fmt::format("{}({})", dialect == SpanSqlDialect::kSqlite ? "unicode" : "ascii", text);
}

// Before the stored names (SQLite 15, PostgreSQL 10): `table`.`column` holds every name as it is.
inline std::string UndoStoredNamesSql(SpanSqlDialect dialect, std::string_view table,
                                      std::string_view column) {
  return fmt::format("UPDATE {} SET {} = {} WHERE {} BETWEEN 1 AND 31", table, column,
                     NameOfStoredSql(dialect, column), FirstCodeSql(dialect, column));
}

// Before the whole names (SQLite 16, PostgreSQL 11): a whole name kept as one byte goes back to the
// form the version before wrote (a call's name with its prefix as one byte, any other as it is), and
// the names that start with 0x03-0x1f lose their escape byte.
inline std::string UndoWholeNamesSql(SpanSqlDialect dialect, std::string_view table,
                                     std::string_view column) {
  const std::string whole = NameOfStoredSql(dialect, column);
  const std::string escaped = fmt::format("substr({}, 2)", column);
  return fmt::format(
      "UPDATE {0} SET {1} = CASE WHEN {2} = 2 THEN CASE WHEN {3} BETWEEN 3 AND 31 THEN {4} ELSE {1} END "
      "WHEN {5} LIKE '{6}%' THEN {7}(1) || substr({5}, {8}) ELSE {5} END WHERE {2} BETWEEN 2 AND 31",
      table, column, FirstCodeSql(dialect, column), FirstCodeSql(dialect, escaped), escaped, whole,
      StoredNamePrefix(), dialect == SpanSqlDialect::kSqlite ? "char" : "chr", StoredNamePrefix().size() + 1);
}

}  // namespace sparktrace::tracing::store
