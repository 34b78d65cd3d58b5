#pragma once
// Turns a current PostgreSQL store back into what an older version wrote, for the migration tests that
// start from one (postgres_schema.cc says what each version changed). The caller sets the version.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/tracing/store/stored_name_undo_sql.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/held/postgres_held_parts.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {

// Version 16 undone: a span's identity in its row again where its set held it, '[]' for no events, the
// sets without identity columns, the summary counts bigint (the column order stays: every statement
// names its columns).
inline void UndoPostgresVersionSixteen(PgConnection& db) {
  const auto identity = [](std::string_view column) {
    return fmt::format("{} = {}", column, SpanIdentitySql("spans", "a", column));
  };
  auto undone = db.Exec(fmt::format(
      "UPDATE spans SET {}, {}, {}, {} FROM attribute_sets a WHERE {}; UPDATE spans SET events = '[]' WHERE "
      "events = ''; ALTER TABLE attribute_sets DROP COLUMN set_dag_id, DROP COLUMN set_task_id, DROP COLUMN "
      "set_run_id, DROP COLUMN set_try_number; ALTER TABLE traces ALTER COLUMN span_count TYPE bigint, ALTER "
      "COLUMN error_count TYPE bigint",
      identity("task_id"), identity("run_id"), identity("try_number"), identity("dag_id"),
      SpanIdentitySetJoinSql("spans", "a")));
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// Versions 16 and 15 undone: every part a summary holds an attempt_parts row again, and
// traces.held_map_index and traces_held_parts gone.
inline void UndoPostgresVersionFifteen(PgConnection& db) {
  UndoPostgresVersionSixteen(db);
  auto undone = db.Exec(fmt::format(
      "INSERT INTO attempt_parts ({}) {}; DROP INDEX traces_held_parts; ALTER TABLE traces DROP COLUMN "
      "held_map_index",
      kAttemptPartColumns, PostgresHeldPartRowsSql("true")));
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// Versions 15 and 14 undone: an attempt part's trace id hex text again.
inline void UndoPostgresVersionFourteen(PgConnection& db) {
  UndoPostgresVersionFifteen(db);
  auto undone =
      db.Exec(fmt::format("ALTER TABLE attempt_parts ALTER COLUMN trace_id TYPE text COLLATE \"C\" USING {}",
                          TraceHexSql("trace_id")));
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// What version 13 changed undone: the ids of spans and traces bytea again.
inline void UndoPostgresSpanIdTypes(PgConnection& db) {
  const auto bytea = [](std::string_view column, const std::string& hex) {
    return fmt::format("ALTER COLUMN {} TYPE bytea USING decode({}, 'hex')", column, hex);
  };
  auto undone = db.Exec(fmt::format(
      "ALTER TABLE spans {}, {}, {}; ALTER TABLE traces {}", bytea("trace_id", TraceHexSql("trace_id")),
      bytea("span_id", SpanHexSql("span_id")), bytea("parent_span_id", SpanHexSql("parent_span_id")),
      bytea("trace_id", TraceHexSql("trace_id"))));
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// Versions 15 to 13 undone.
inline void UndoPostgresVersionThirteen(PgConnection& db) {
  UndoPostgresVersionFourteen(db);
  UndoPostgresSpanIdTypes(db);
}

// The ids of an older version's spans and traces as version 13 keeps them, for a test that writes an
// older version's rows with today's copy (UndoPostgresSpanIdTypes turns them back). Spelled with the
// store's hex functions rather than the migration's own SQL: the two agree, or a migration test fails.
inline void UsePostgresIdsOfVersionThirteen(PgConnection& db) {
  const auto convert = [](std::string_view column, std::string_view type, const std::string& id) {
    return fmt::format("ALTER COLUMN {} TYPE {} USING {}", column, type, id);
  };
  const std::string trace = convert("trace_id", "uuid", TraceIdOfHexSql("encode(trace_id, 'hex')"));
  auto converted = db.Exec(fmt::format(
      "ALTER TABLE spans {}, {}, {}; ALTER TABLE traces {}", trace,
      convert("span_id", "bigint", SpanIdOfHexSql("encode(span_id, 'hex')")),
      convert("parent_span_id", "bigint", SpanIdOfHexSql("encode(parent_span_id, 'hex')")), trace));
  ASSERT_TRUE(converted.ok()) << converted.error().ToString();
}

// Versions 15 to 12 undone: spans.attribute_set back, last of the columns as version 8 added it,
// holding the set each shared row names.
inline void UndoPostgresVersionTwelve(PgConnection& db) {
  UndoPostgresVersionThirteen(db);
  auto undone =
      db.Exec(fmt::format("ALTER TABLE spans ADD COLUMN attribute_set bigint; UPDATE spans SET "
                          "attribute_set = {0} WHERE {0} IS NOT NULL",
                          AttributeSetIdSql("attributes")));
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// Versions 15 to 11 undone: the names as version 10 kept them (stored_name_undo_sql.h).
inline void UndoPostgresVersionEleven(PgConnection& db) {
  UndoPostgresVersionTwelve(db);
  auto undone = db.Exec(fmt::format("{}; {}", UndoWholeNamesSql(SpanSqlDialect::kPostgres, "spans", "name"),
                                    UndoWholeNamesSql(SpanSqlDialect::kPostgres, "traces", "root_name")));
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// Names back as they are (span_rows/stored_span.h, StoredName undone in SQL), what versions 10 and 11
// changed.
inline void UndoPostgresStoredNames(PgConnection& db) {
  auto undone = db.Exec(fmt::format("{}; {}", UndoStoredNamesSql(SpanSqlDialect::kPostgres, "spans", "name"),
                                    UndoStoredNamesSql(SpanSqlDialect::kPostgres, "traces", "root_name")));
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// Versions 15 to 10 undone.
inline void UndoPostgresVersionTen(PgConnection& db) {
  UndoPostgresVersionTwelve(db);
  UndoPostgresStoredNames(db);
}

// Version 9 undone: attempt_parts gets its primary key back.
inline void UndoPostgresVersionNine(PgConnection& db) {
  auto undone = db.Exec(
      "DROP INDEX attempt_parts_by_attempt; ALTER TABLE attempt_parts ADD CONSTRAINT attempt_parts_pkey "
      "PRIMARY KEY (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, trace_id)");
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

// Versions 15 to 8 undone, what version 7 wrote: every row in the shared form is rewritten as the compact
// row version 7 wrote for the same attributes, then the set table, the spans' set column and
// traces_inverted go and traces_by_end comes back.
inline void UndoPostgresVersionsAfterSeven(PgConnection& db) {
  UndoPostgresVersionTen(db);
  UndoPostgresVersionNine(db);
  auto shared = db.Exec(
      "SELECT encode(trace_id, 'hex'), encode(span_id, 'hex'), attributes, set_bytes FROM spans "
      "JOIN attribute_sets ON set_id = attribute_set");
  ASSERT_TRUE(shared.ok()) << shared.error().ToString();
  for (int row = 0; row < shared->rows(); ++row) {
    auto attributes = StoredAttributes(shared->Text(row, 2), shared->Text(row, 3), shared->Text(row, 1));
    ASSERT_TRUE(attributes.ok()) << attributes.error().ToString();
    std::string compact;
    AppendCompactAttributes(compact, *attributes);
    std::string compact_hex;
    AppendLowerHex(compact_hex, compact);
    auto updated = db.Query(
        "WITH rewritten AS (UPDATE spans SET attributes = decode($3, 'hex'), attribute_set = NULL "
        "WHERE trace_id = decode($1, 'hex') AND span_id = decode($2, 'hex') RETURNING 1) "
        "SELECT count(*) FROM rewritten",
        {std::string(shared->Text(row, 0)), std::string(shared->Text(row, 1)), compact_hex});
    ASSERT_TRUE(updated.ok()) << updated.error().ToString();
    ASSERT_EQ(updated->Int64(0, 0), 1);
  }
  auto undone = db.Exec(
      "DROP TABLE attribute_sets; ALTER TABLE spans DROP COLUMN attribute_set; DROP INDEX traces_inverted; "
      "CREATE INDEX traces_by_end ON traces (end_unix_nano)");
  ASSERT_TRUE(undone.ok()) << undone.error().ToString();
}

}  // namespace sparktrace::tracing::store
