#include "tracing/store/postgres/postgres_schema.h"

#include <spdlog/fmt/fmt.h>

#include <string_view>

#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {
namespace {

// Ids are lower-case hex text, as in the SQLite store, so that `psql … WHERE trace_id = '4bf9…'`
// works; COLLATE "C" keeps their order and the indexes byte-wise whatever the database's locale.
// approx_bytes adds up the spans' text (the retention's size measure: PostgreSQL does not shrink
// its files after a DELETE, so their size cannot tell when enough has been deleted).
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE spans (
  trace_id        text COLLATE "C" NOT NULL,
  span_id         text COLLATE "C" NOT NULL,
  parent_span_id  text COLLATE "C",
  name            text    NOT NULL,
  kind            integer NOT NULL,
  start_unix_nano bigint  NOT NULL,
  end_unix_nano   bigint  NOT NULL,
  status_code     integer NOT NULL,
  status_message  text    NOT NULL,
  trace_state     text    NOT NULL,
  attributes      text    NOT NULL,
  events          text    NOT NULL,
  operation_id    text,
  session_id      text,
  dag_id          text,
  task_id         text,
  run_id          text,
  try_number      bigint,
  PRIMARY KEY (trace_id, span_id)
);
CREATE INDEX spans_by_operation ON spans (operation_id) WHERE operation_id IS NOT NULL;

CREATE TABLE traces (
  trace_id        text COLLATE "C" PRIMARY KEY,
  root_name       text    NOT NULL,
  start_unix_nano bigint  NOT NULL,
  end_unix_nano   bigint  NOT NULL,
  span_count      bigint  NOT NULL,
  error_count     bigint  NOT NULL,
  dag_id          text,
  task_id         text,
  run_id          text,
  try_number      bigint,
  approx_bytes    bigint  NOT NULL
);
CREATE INDEX traces_by_start ON traces (start_unix_nano);
CREATE INDEX traces_by_end ON traces (end_unix_nano);

CREATE TABLE attempt_parts (
  airflow          integer NOT NULL,
  dag_id           text    NOT NULL,
  task_id          text    NOT NULL,
  run_id           text    NOT NULL,
  try_number       bigint  NOT NULL,
  map_index        bigint  NOT NULL,
  trace_key        text COLLATE "C" NOT NULL,
  trace_id         text COLLATE "C" NOT NULL,
  name             text    NOT NULL,
  app_id           text,
  start_unix_nano  bigint  NOT NULL,
  end_unix_nano    bigint  NOT NULL,
  span_count       bigint  NOT NULL,
  error_count      bigint  NOT NULL,
  open_count       bigint  NOT NULL,
  resource_wait_ms bigint  NOT NULL,
  compute_ms       bigint  NOT NULL,
  io_write_ms      bigint  NOT NULL,
  idle_ms          bigint  NOT NULL,
  finding_count    bigint  NOT NULL,
  top_finding      text,
  top_impact       double precision NOT NULL,
  PRIMARY KEY (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, trace_id)
);
CREATE INDEX attempt_parts_by_trace ON attempt_parts (trace_id);
CREATE INDEX attempt_parts_by_app ON attempt_parts (app_id) WHERE app_id IS NOT NULL;

CREATE TABLE task_attempts (
  airflow          integer NOT NULL,
  dag_id           text    NOT NULL,
  task_id          text    NOT NULL,
  run_id           text    NOT NULL,
  try_number       bigint  NOT NULL,
  map_index        bigint  NOT NULL,
  trace_key        text COLLATE "C" NOT NULL,
  name             text    NOT NULL,
  trace_ids        text    NOT NULL,
  start_unix_nano  bigint  NOT NULL,
  end_unix_nano    bigint  NOT NULL,
  span_count       bigint  NOT NULL,
  error_count      bigint  NOT NULL,
  open_count       bigint  NOT NULL,
  resource_wait_ms bigint  NOT NULL,
  compute_ms       bigint  NOT NULL,
  io_write_ms      bigint  NOT NULL,
  idle_ms          bigint  NOT NULL,
  finding_count    bigint  NOT NULL,
  top_finding      text,
  state            text    NOT NULL,
  PRIMARY KEY (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key)
);
CREATE INDEX task_attempts_by_start ON task_attempts (start_unix_nano);
CREATE INDEX task_attempts_by_task ON task_attempts (dag_id, task_id, start_unix_nano);
CREATE INDEX task_attempts_by_state ON task_attempts (state, start_unix_nano);
)sql";

// Version 2: the attempt row's version and its settled figures, as in the SQLite store
// (tracing/store/sqlite/upkeep/sqlite_settlement.cc says what each column means). Rows indexed before have
// indexed_at 0: quiet since long, they settle on the first passes.
constexpr std::string_view kSchemaV2 = R"sql(
ALTER TABLE task_attempts ADD COLUMN indexed_at bigint NOT NULL DEFAULT 0,
  ADD COLUMN settled_version bigint, ADD COLUMN settled_at bigint, ADD COLUMN core_seconds double precision,
  ADD COLUMN gib_seconds double precision, ADD COLUMN money double precision,
  ADD COLUMN idle_fraction double precision, ADD COLUMN regression integer;
CREATE INDEX task_attempts_unsettled ON task_attempts (indexed_at)
  WHERE state <> 'running' AND (settled_version IS NULL OR settled_version <> indexed_at)
)sql";

// Version 3: a compact span row (issue 32). Ids are bytea (16 and 8 bytes, not 33 and 17 of hex text,
// in the rows and in both tables' keys); attributes are bytea in the compact form
// (tracing/store/span_rows/compact_attributes.h, a quarter of the JSON text), read in C++, which is
// where every read of them already decoded them. Rows written before keep their JSON text's bytes
// (convert_to): the readers tell the forms apart by their first byte (postgres_span_columns.h), so the
// migration rewrites the table once (the type change) and converts no attribute. session_id goes (no
// query reads it); task_map_index holds an "airflow.task" span's map index, which the span upsert's
// replacement rule compares (postgres_batch_copy.cc) and which SQL can no longer read out of the
// attributes. The trace locks keep hashing the hex text (they are not stored).
//
// And a trace without Airflow identity keeps its attempt's row and no part row, unless the part names
// an application (the search by app id reads attempt_parts), as in the SQLite store's version 7: its
// one part repeated its row. The by-trace and by-task indexes hold the Airflow rows only; the others
// are found by primary key (postgres_task_index.cc, kWithoutIdentityKey), which now starts with the
// trace key: a row without identity differs from every other in its first column, where each insert
// compared the four equal texts and two integers before it (the upserts' ON CONFLICT names the same
// columns, in any order). Its inserts were two fifths of the server's time for a call per trace. The
// by-state index leaves out the successful rows, most of them: a list of those reads the by-start
// index as a list without a state filter does. And the row of an attempt without identity written
// from now on leaves trace_ids empty, its one trace being its trace key (ListPostgresTaskAttempts
// reads it back; rows written before keep theirs).
constexpr std::string_view kSchemaV3 = R"sql(
ALTER TABLE spans ADD COLUMN task_map_index bigint;
UPDATE spans SET task_map_index = trunc((attributes::json ->> 'airflow.map_index')::numeric)::bigint
  WHERE name = 'airflow.task' AND (attributes::json ->> 'airflow.map_index') ~ '^-?[0-9]{1,18}(\.[0-9]*)?$';
ALTER TABLE spans
  DROP COLUMN session_id,
  ALTER COLUMN trace_id TYPE bytea USING decode(trace_id, 'hex'),
  ALTER COLUMN span_id TYPE bytea USING decode(span_id, 'hex'),
  ALTER COLUMN parent_span_id TYPE bytea USING decode(parent_span_id, 'hex'),
  ALTER COLUMN attributes TYPE bytea USING convert_to(attributes, 'UTF8');
ALTER TABLE traces ALTER COLUMN trace_id TYPE bytea USING decode(trace_id, 'hex');
DELETE FROM attempt_parts WHERE airflow = 0 AND app_id IS NULL;
DROP INDEX attempt_parts_by_trace;
CREATE INDEX attempt_parts_by_trace ON attempt_parts (trace_id) WHERE airflow = 1;
DROP INDEX task_attempts_by_task;
CREATE INDEX task_attempts_by_task ON task_attempts (dag_id, task_id, start_unix_nano) WHERE airflow = 1;
DROP INDEX task_attempts_by_state;
CREATE INDEX task_attempts_by_state ON task_attempts (state, start_unix_nano) WHERE state <> 'success';
ALTER TABLE task_attempts DROP CONSTRAINT task_attempts_pkey,
  ADD CONSTRAINT task_attempts_pkey PRIMARY KEY (trace_key, airflow, dag_id, task_id, run_id, try_number, map_index)
)sql";

// Version 4: a batch updates the task index of a trace with stored spans from its own spans
// (tracing/store/increment/part_increment.h) instead of re-reading the trace, as the SQLite store's
// version 9 does. A part keeps the counts its error count is made of (operations, failed operations,
// failed jobs: NULL on a part written before, whose trace the next batch recomputes once), and a trace
// the parents its unowned spans wait for (comma-separated span ids; NULL: unknown, recomputed, as a
// trace the batch copy creates is: its first later batch re-reads it once). ADD COLUMN without a
// default only changes the catalogue, however large the tables; a NULL costs a row nothing.
constexpr std::string_view kSchemaV4 = R"sql(
ALTER TABLE attempt_parts ADD COLUMN operation_count bigint, ADD COLUMN failed_operation_count bigint,
  ADD COLUMN failed_job_count bigint;
ALTER TABLE traces ADD COLUMN awaited_parents text
)sql";

// Version 5: which attempts have anything to settle, as in the SQLite store's version 11
// (tracing/store/sqlite/upkeep/sqlite_settlement.cc, kSettlesSchema, says why): a trace without
// identity that names no application leaves the settling queue. The column's default changes only the
// catalogue; the rows updated are those still waiting, and the index is built again without them.
constexpr std::string_view kSchemaV5 = R"sql(
ALTER TABLE task_attempts ADD COLUMN settles smallint NOT NULL DEFAULT 1;
UPDATE task_attempts t SET settles = 0
  WHERE t.airflow = 0 AND t.state <> 'running' AND (t.settled_version IS NULL OR t.settled_version <> t.indexed_at)
    AND NOT EXISTS (SELECT 1 FROM attempt_parts p
                    WHERE p.airflow = 0 AND p.trace_id = t.trace_key AND p.app_id IS NOT NULL);
DROP INDEX task_attempts_unsettled;
CREATE INDEX task_attempts_unsettled ON task_attempts (indexed_at)
  WHERE settles = 1 AND state <> 'running' AND (settled_version IS NULL OR settled_version <> indexed_at)
)sql";

// Version 6: an Airflow attempt's traces are read from its parts (postgres_task_index.cc,
// AttemptRowReadColumns), no longer kept on its row, which an attempt of a call per trace rewrote whole
// at every batch (its 50,000 trace ids), as in the SQLite store's version 12: the lists kept so far go.
constexpr std::string_view kSchemaV6 =
    "UPDATE task_attempts SET trace_ids = '' WHERE airflow = 1 AND trace_ids <> ''";

// Version 7: the attempt of a trace without identity whose summary says all its row would is held by
// that summary, with no task_attempts row, as in the SQLite store's version 13
// (tracing/store/task_index/task_index.h, SummaryHoldsAttempt): `attempt` is true on such a summary.
// ADD COLUMN without a default changes only the catalogue; the rows written before keep their attempt
// rows (an attempt is either, never both) until their trace is indexed again.
constexpr std::string_view kSchemaV7 = "ALTER TABLE traces ADD COLUMN attempt boolean";

// Version 8: attribute sets (rows/postgres_attribute_sets.h), as in the SQLite store's version 14: what a
// call repeats from its client, connection, session and Airflow task is a row of attribute_sets, and a
// span's attributes in the shared form name it by id, in their bytes and in attribute_set, which the
// reads join on (a bigint costs a shared row 8 bytes of the ~95 the set saves it; a NULL, a compact
// row nothing). The set's bytes are named set_bytes so that a join with spans leaves every column name
// of spans unambiguous. ADD COLUMN without a default changes only the catalogue; rows written before
// stay compact.
//
// And no traces_by_end, as in the SQLite store's version 10: retention finds traces by their end
// through traces_by_start and traces_inverted, a partial index of the traces that end before they start
// (span_rows/span_table_sql.h, TracesEndedBeforeSql, says why that picks the same traces); the index on
// the end cost every trace a B-tree insert and ~33 bytes.
constexpr std::string_view kSchemaV8 = R"sql(
CREATE TABLE attribute_sets (
  set_id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  set_bytes        bytea  NOT NULL UNIQUE,
  leased_unix_nano bigint NOT NULL
);
ALTER TABLE spans ADD COLUMN attribute_set bigint;
DROP INDEX traces_by_end;
CREATE INDEX traces_inverted ON traces (end_unix_nano) WHERE end_unix_nano < start_unix_nano
)sql";

// Version 9: attempt_parts without a primary key. Its key began with the attempt's identity and ended
// with the trace: for an attempt of a call per trace (48,000 traces of one Airflow task), every part
// wrote an index entry of ~160 bytes repeating the dag, task and run, as much as the part's row, and
// nothing needs it unique: a trace's parts are only ever replaced whole (deleted, then copied in) under
// its trace lock. An index on the attempt's key alone takes its place for the lookups by attempt and
// by key: not unique, so PostgreSQL keeps one entry per key with a list of the rows it is in
// (deduplication, since PostgreSQL 13), a few bytes a part. The parts of a trace stay found by
// attempt_parts_by_trace.
constexpr std::string_view kSchemaV9 = R"sql(
ALTER TABLE attempt_parts DROP CONSTRAINT attempt_parts_pkey;
CREATE INDEX attempt_parts_by_attempt ON attempt_parts (airflow, dag_id, task_id, run_id, try_number, map_index,
                                                        trace_key)
)sql";

// Version 10: a span's name kept by StoredName (span_rows/stored_span.h): a Spark Connect call's RPC
// prefix as one byte, in spans.name and traces.root_name (~66 of a call's ~490 bytes). Rows written
// before keep their names as they are, which read back unchanged, but for a name that starts with one
// of the code bytes: those few get the escape byte in front. (The rewrite reads the tables once.)
constexpr std::string_view kSchemaV10 = R"sql(
UPDATE spans SET name = chr(2) || name WHERE left(name, 1) IN (chr(1), chr(2));
UPDATE traces SET root_name = chr(2) || root_name WHERE left(root_name, 1) IN (chr(1), chr(2))
)sql";

// Version 11: the span names sparktrace writes most kept as one byte each (StoredName), and every name
// that starts with a byte 0x01-0x1f escaped, as in the SQLite store's version 16: the few stored names
// that start with 0x03-0x1f (version 10 escaped 0x01 and 0x02) get the escape byte in front.
constexpr std::string_view kSchemaV11 = R"sql(
UPDATE spans SET name = chr(2) || name WHERE ascii(name) BETWEEN 3 AND 31;
UPDATE traces SET root_name = chr(2) || root_name WHERE ascii(root_name) BETWEEN 3 AND 31
)sql";
static_assert(kStoredNamePrefixCode == '\x01' && kStoredNameEscapeCode == '\x02' && IsStoredNameCode('\x1f'));

// Version 12: no spans.attribute_set. The set a shared row names is in its attributes' bytes too, which
// the reads now join on (postgres_span_columns.h, AttributeSetIdSql); the column cost every call's row
// 8 bytes. DROP COLUMN changes only the catalogue: rows written before keep their bytes until retention
// replaces them, rows written after have none.
constexpr std::string_view kSchemaV12 = "ALTER TABLE spans DROP COLUMN attribute_set";

// Version 13: ids without a length header (postgres_span_columns.h says how they read and write). A trace
// id becomes a uuid (16 bytes, no bytea header), a span id a bigint (its 8 bytes big-endian, the top bit
// flipped to keep the bytes' order). With bytea's header and 8-byte alignment every entry of the two
// primary keys took 8 bytes more: a call per trace's spans_pkey and traces_pkey entries drop from 44
// and 36 bytes to 36 and 28. Rewrites both tables and rebuilds their indexes, once.
constexpr std::string_view kSchemaV13 = R"sql(
ALTER TABLE spans
  ALTER COLUMN trace_id TYPE uuid USING encode(trace_id, 'hex')::uuid,
  ALTER COLUMN span_id TYPE bigint
    USING ('x' || encode(span_id, 'hex'))::bit(64)::bigint # '-9223372036854775808'::bigint,
  ALTER COLUMN parent_span_id TYPE bigint
    USING ('x' || encode(parent_span_id, 'hex'))::bit(64)::bigint # '-9223372036854775808'::bigint;
ALTER TABLE traces ALTER COLUMN trace_id TYPE uuid USING encode(trace_id, 'hex')::uuid
)sql";

// Version 14: an attempt part's trace id a uuid as well (it was hex text, 33 bytes with its header): a
// part's row 17 bytes smaller and its attempt_parts_by_trace entry 24, for an attempt of many traces
// (a call per trace with the task's identity) ~50 bytes a call. The trace key stays text: it is '' for
// every Airflow part.
constexpr std::string_view kSchemaV14 =
    "ALTER TABLE attempt_parts ALTER COLUMN trace_id TYPE uuid USING trace_id::uuid";

// Version 15: a trace's one Airflow part held by its summary row, as in the SQLite store's version 18
// (held/postgres_held_parts.h says when and how): held_map_index is set on such a summary (the part's
// map index; the rest of its key is the summary's Airflow identity), and traces_held_parts finds an
// attempt's held parts. An attempt of calls each its own trace (calls with the task's identity and no
// traceparent) then writes no attempt_parts row nor attempt_parts_by_trace entry a call: ~290 of its
// ~750 bytes. ADD COLUMN without a default changes only the catalogue; parts written before stay rows
// until their trace is indexed again.
constexpr std::string_view kSchemaV15 = R"sql(
ALTER TABLE traces ADD COLUMN held_map_index bigint;
CREATE INDEX traces_held_parts ON traces (dag_id, task_id, run_id, try_number, held_map_index)
  WHERE held_map_index IS NOT NULL
)sql";

// Version 16: a call's span and summary rows smaller (~64 of an Airflow call's ~450 bytes).
//   - An attribute set keeps the Airflow identity its attributes hold (set_dag_id, set_task_id,
//     set_run_id, set_try_number: the set is joined with spans, whose columns keep their names), and a
//     span row in the shared form whose identity its set holds (every identity key is shareable, so the
//     set holds all of it) keeps '' in dag_id and NULL in task_id, run_id and try_number instead of a
//     second copy (~39 bytes): postgres_span_columns.h, kIdentityInSetMarker, says who reads it how. An
//     "airflow.task" span keeps its identity, which the span upsert's replacement rule compares. A set
//     numbered before keeps NULL identity until a writer numbers it again: every set a writer names
//     by id it numbered itself, so a row never names a set without its identity.
//   - A span without events keeps '' in events, not '[]'.
//   - traces rewritten with its fixed-width columns first and the counts as integer: 16 bytes of
//     alignment padding and width a summary row. Its indexes are built again under their names.
constexpr std::string_view kSchemaV16 = R"sql(
ALTER TABLE attribute_sets ADD COLUMN set_dag_id text, ADD COLUMN set_task_id text, ADD COLUMN set_run_id text,
  ADD COLUMN set_try_number bigint;
CREATE TABLE traces_v16 (
  trace_id        uuid    NOT NULL,
  start_unix_nano bigint  NOT NULL,
  end_unix_nano   bigint  NOT NULL,
  approx_bytes    bigint  NOT NULL,
  try_number      bigint,
  held_map_index  bigint,
  span_count      integer NOT NULL,
  error_count     integer NOT NULL,
  attempt         boolean,
  root_name       text    NOT NULL,
  dag_id          text,
  task_id         text,
  run_id          text,
  awaited_parents text
);
INSERT INTO traces_v16
SELECT trace_id, start_unix_nano, end_unix_nano, approx_bytes, try_number, held_map_index, span_count, error_count,
       attempt, root_name, dag_id, task_id, run_id, awaited_parents
FROM traces ORDER BY start_unix_nano;
DROP TABLE traces;
ALTER TABLE traces_v16 RENAME TO traces;
ALTER TABLE traces ADD CONSTRAINT traces_pkey PRIMARY KEY (trace_id);
CREATE INDEX traces_by_start ON traces (start_unix_nano);
CREATE INDEX traces_inverted ON traces (end_unix_nano) WHERE end_unix_nano < start_unix_nano;
CREATE INDEX traces_held_parts ON traces (dag_id, task_id, run_id, try_number, held_map_index)
  WHERE held_map_index IS NOT NULL
)sql";

// Step i brings a database from version i to version i + 1. A new version appends a step and
// raises kPostgresSchemaVersion; existing steps never change.
constexpr std::string_view kMigrations[] = {
    kSchemaV1, kSchemaV2,  kSchemaV3,  kSchemaV4,  kSchemaV5,  kSchemaV6,  kSchemaV7,  kSchemaV8,
    kSchemaV9, kSchemaV10, kSchemaV11, kSchemaV12, kSchemaV13, kSchemaV14, kSchemaV15, kSchemaV16};
static_assert(std::size(kMigrations) == kPostgresSchemaVersion);

// Releases the session-level migration lock however the migration ends.
class MigrationLock {
 public:
  explicit MigrationLock(PgConnection& db) : db_(db) {}
  Result<void> Take() {
    auto taken = db_.Exec(fmt::format("SELECT pg_advisory_lock({}, 0)", kLockClassMigration));
    if (!taken.ok()) return taken.error();
    held_ = true;
    return {};
  }
  ~MigrationLock() {
    if (held_) (void)db_.Exec(fmt::format("SELECT pg_advisory_unlock({}, 0)", kLockClassMigration));
  }
  MigrationLock(const MigrationLock&) = delete;
  MigrationLock& operator=(const MigrationLock&) = delete;

 private:
  PgConnection& db_;
  bool held_ = false;
};

Error NewerSchema(const std::string& display, std::int64_t version) {
  return InvalidArgument(fmt::format(
      "{} holds trace schema version {}, newer than this sparktrace's {}: upgrade sparktrace (it will not "
      "write to a schema it does not know)",
      display, version, kPostgresSchemaVersion));
}

}  // namespace

Result<std::int64_t> PostgresSchemaVersion(PgConnection& db) {
  auto table = db.Exec("SELECT to_regclass('sparktrace_schema') IS NOT NULL");
  if (!table.ok()) return table.error();
  if (table->Text(0, 0) != "t") return std::int64_t{0};
  auto version = db.Exec("SELECT version FROM sparktrace_schema");
  if (!version.ok()) return version.error();
  return version->rows() == 0 ? std::int64_t{0} : version->Int64(0, 0);
}

Result<void> MigratePostgres(PgConnection& db, const std::string& display, bool read_only) {
  if (read_only) {
    auto version = PostgresSchemaVersion(db);
    if (!version.ok()) return version.error();
    if (*version > kPostgresSchemaVersion) return NewerSchema(display, *version);
    if (*version < kPostgresSchemaVersion) {
      return Error{
          ErrorCode::kUnavailable,
          fmt::format("{} has trace schema version {}, this sparktrace reads {}: start a proxy on it "
                      "once to create or migrate it",
                      display, *version, kPostgresSchemaVersion)};
    }
    return {};
  }
  return MigratePostgresTo(db, display, kPostgresSchemaVersion);
}

Result<void> MigratePostgresTo(PgConnection& db, const std::string& display, std::int64_t target) {
  if (target < 1 || target > kPostgresSchemaVersion) {
    return InvalidArgument(fmt::format("no trace schema version {} to migrate {} to", target, display));
  }
  MigrationLock lock(db);
  if (auto taken = lock.Take(); !taken.ok()) return taken.error();
  auto version = PostgresSchemaVersion(db);
  if (!version.ok()) return version.error();
  if (*version > kPostgresSchemaVersion) return NewerSchema(display, *version);
  if (*version == 0) {
    // Refuse a database that holds our table names but not our version table: not ours to change.
    auto foreign = db.Exec("SELECT to_regclass('spans') IS NOT NULL OR to_regclass('traces') IS NOT NULL");
    if (!foreign.ok()) return foreign.error();
    if (foreign->Text(0, 0) == "t") {
      return InvalidArgument(
          fmt::format("{} already has tables named spans or traces that are not sparktrace's (no "
                      "sparktrace_schema table); "
                      "use another database or schema",
                      display));
    }
  }
  if (*version >= target) return {};
  // A step may rewrite a table (version 3 rewrites spans): it runs without the session's statement
  // timeout, which bounds the writes of spans, not a migration; restored after.
  auto timeout = db.Exec("SHOW statement_timeout");
  if (!timeout.ok()) return timeout.error();
  const std::string session_timeout(timeout->Text(0, 0));
  if (auto unbounded = db.Exec("SET statement_timeout = 0"); !unbounded.ok()) return unbounded.error();
  struct RestoreTimeout {
    PgConnection& db;
    const std::string& value;
    ~RestoreTimeout() { (void)db.Exec(fmt::format("SET statement_timeout = '{}'", value)); }
  } restore{db, session_timeout};
  for (std::int64_t step = *version; step < target; ++step) {
    const std::string sql = fmt::format(
        "BEGIN; {}; CREATE TABLE IF NOT EXISTS sparktrace_schema (one boolean PRIMARY KEY DEFAULT true CHECK "
        "(one), "
        "version bigint NOT NULL); INSERT INTO sparktrace_schema (version) VALUES ({}) ON CONFLICT (one) DO "
        "UPDATE "
        "SET version = excluded.version; COMMIT",
        kMigrations[static_cast<std::size_t>(step)], step + 1);
    if (auto applied = db.Exec(sql); !applied.ok()) {
      (void)db.Exec("ROLLBACK");
      return Error{applied.error().code, fmt::format("migrate {} to trace schema version {}: {}", display,
                                                     step + 1, applied.error().message)};
    }
  }
  return {};
}

}  // namespace sparktrace::tracing::store
