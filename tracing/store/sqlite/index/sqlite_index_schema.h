#pragma once
// The SQLite store's task index tables as schema versions create and change them (sqlite_schema.cc
// runs them in order; kept here, beside the index's SQL, to keep that file within its size).

#include <string_view>

namespace sparktrace::tracing::store {

// The task index's tables (tracing/store/sqlite/sqlite_task_index.cc fills and reads them).
// Parts are per (attempt, trace); `trace_key` is "" for an Airflow attempt (whose row adds up all its
// traces) and the trace id for a trace without identity (one row per trace). Integer times are unix
// nanoseconds, as in spans.
inline constexpr std::string_view kTaskIndexSchema = R"sql(
CREATE TABLE attempt_parts (
  airflow         INTEGER NOT NULL,  -- 1: an Airflow task attempt, 0: a trace without identity
  dag_id          TEXT    NOT NULL,
  task_id         TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  try_number      INTEGER NOT NULL,
  map_index       INTEGER NOT NULL,
  trace_key       TEXT    NOT NULL,
  trace_id        TEXT    NOT NULL,
  name            TEXT    NOT NULL,
  app_id          TEXT,
  start_unix_nano INTEGER NOT NULL,
  end_unix_nano   INTEGER NOT NULL,
  span_count      INTEGER NOT NULL,
  error_count     INTEGER NOT NULL,
  open_count      INTEGER NOT NULL,
  resource_wait_ms INTEGER NOT NULL,
  compute_ms      INTEGER NOT NULL,
  io_write_ms     INTEGER NOT NULL,
  idle_ms         INTEGER NOT NULL,
  finding_count   INTEGER NOT NULL,
  top_finding     TEXT,
  top_impact      REAL    NOT NULL,
  PRIMARY KEY (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, trace_id)
) WITHOUT ROWID;
CREATE INDEX attempt_parts_by_trace ON attempt_parts (trace_id);
CREATE INDEX attempt_parts_by_app ON attempt_parts (app_id) WHERE app_id IS NOT NULL;

CREATE TABLE task_attempts (
  airflow         INTEGER NOT NULL,
  dag_id          TEXT    NOT NULL,
  task_id         TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  try_number      INTEGER NOT NULL,
  map_index       INTEGER NOT NULL,
  trace_key       TEXT    NOT NULL,
  name            TEXT    NOT NULL,
  trace_ids       TEXT    NOT NULL,  -- comma-separated
  start_unix_nano INTEGER NOT NULL,
  end_unix_nano   INTEGER NOT NULL,
  span_count      INTEGER NOT NULL,
  error_count     INTEGER NOT NULL,
  open_count      INTEGER NOT NULL,
  resource_wait_ms INTEGER NOT NULL,
  compute_ms      INTEGER NOT NULL,
  io_write_ms     INTEGER NOT NULL,
  idle_ms         INTEGER NOT NULL,
  finding_count   INTEGER NOT NULL,
  top_finding     TEXT,
  state           TEXT    NOT NULL,  -- running | failed | success
  PRIMARY KEY (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key)
) WITHOUT ROWID;
CREATE INDEX task_attempts_by_start ON task_attempts (start_unix_nano);
CREATE INDEX task_attempts_by_task ON task_attempts (dag_id, task_id, start_unix_nano);
CREATE INDEX task_attempts_by_state ON task_attempts (state, start_unix_nano);
)sql";

// Version 17: an attempt part's trace id a BLOB (its 16 bytes) as spans and traces keep theirs since
// version 10; it was 32-character hex text. In the row and again in attempt_parts_by_trace (whose
// entries, the table being WITHOUT ROWID, also repeat the part's key): ~35 bytes a call for an attempt
// of a call per trace. SQLite stores a BLOB in the TEXT-declared column as it is (a column's affinity
// converts numbers only), so the table keeps its declaration and its rows are converted in place;
// sparktrace_unhex() leaves an id that is a BLOB already unchanged. The trace key stays text: '' for
// every Airflow part, the hex id for a part without identity.
inline constexpr std::string_view kPartTraceIdBlobsSchema =
    "UPDATE attempt_parts SET trace_id = sparktrace_unhex(trace_id)";

// Version 18: a trace whose one part is an Airflow attempt's, and says nothing its summary does not,
// keeps the part in its summary row (index/sqlite_summary_attempts.h): `attempt` 2, the part's map index in
// `map_index` (NULL on every other row), the rest of its key the summary's Airflow identity. The
// partial index finds an attempt's held parts; the other rows have no entry. Parts written before stay
// rows until their trace is indexed again.
inline constexpr std::string_view kHeldPartsSchema = R"sql(
ALTER TABLE traces ADD COLUMN map_index INTEGER;
CREATE INDEX traces_held_parts ON traces (dag_id, task_id, run_id, try_number, map_index) WHERE attempt = 2;
)sql";

}  // namespace sparktrace::tracing::store
