#include "tracing/store/sqlite/sqlite_schema.h"

#include <spdlog/fmt/fmt.h>
#include <sqlite3.h>

#include <cstdint>
#include <iterator>
#include <string_view>

#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_transaction.h"
#include "tracing/store/sqlite/index/sqlite_index_schema.h"
#include "tracing/store/sqlite/sqlite_attribute_function.h"
#include "tracing/store/sqlite/sqlite_span_store.h"
#include "tracing/store/sqlite/sqlite_task_index.h"
#include "tracing/store/sqlite/upkeep/sqlite_settlement.h"

namespace sparktrace::tracing::store {
namespace {

// "SpTr" in PRAGMA application_id marks the file as ours, so that pointing --trace-db at some other
// SQLite database fails instead of adding tables to it.
constexpr std::int64_t kApplicationId = 0x53705472;

// The writer's page cache (SQLite's default is 2 MiB): the indexes' hot pages stay in memory
// between batches instead of being read back from the file for every one.
constexpr std::int64_t kWriterCacheKiB = std::int64_t{16} * 1024;

// The page size of a new file (an existing one keeps its own: SQLite sets it only before the first
// table). 16 KiB rather than SQLite's 4 KiB: a batch's rows fill fewer pages, each with one header and
// one split where four had theirs, so a call per trace writes 1.2x the spans/s and every other shape
// of the store bench 1.1-1.2x, in fewer bytes (409 -> 404 B a call, 336 -> 316 in 50-span attempts;
// docs/shared-store.md, "Sizing"). The page cache is sized in bytes (kWriterCacheKiB), not in pages.
constexpr std::int64_t kNewFilePageSize = std::int64_t{16} * 1024;

// Bounds the WAL file after checkpoints; without it the WAL keeps its largest size forever.
constexpr std::int64_t kJournalSizeLimitBytes = 64LL << 20;

// Ids are stored as lower-case hex text, not blobs: the extra 24 bytes a span are small next to its
// attributes JSON, and `sqlite3 traces.db "... WHERE trace_id = '4bf9…'"` then works as users expect.
// (Until version 10, kBinaryIdsSchema: with compact attributes the ids had become a large share.)
//
// The per-trace summary is a table kept up to date by Write() rather than a view: a view would
// aggregate every span on each listing (seconds for a full 1 GiB store), the table costs one indexed
// aggregate over the touched trace's spans per trace per batch.
//
// Listing filters by Airflow identity through the summary table, so the (dag, task, run) index lives
// there; on spans it would serve no query and only slow writes. Operation ids are looked up on spans,
// through a partial index that skips the many spans without one.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE spans (
  trace_id        TEXT    NOT NULL,  -- 32 lower-case hex digits
  span_id         TEXT    NOT NULL,  -- 16 lower-case hex digits
  parent_span_id  TEXT,              -- NULL for a root span
  name            TEXT    NOT NULL,
  kind            INTEGER NOT NULL,  -- OTLP Span.SpanKind
  start_unix_nano INTEGER NOT NULL,
  end_unix_nano   INTEGER NOT NULL,
  status_code     INTEGER NOT NULL,  -- OTLP Status.StatusCode: 0 unset, 1 ok, 2 error
  status_message  TEXT    NOT NULL,
  trace_state     TEXT    NOT NULL,
  attributes      TEXT    NOT NULL,  -- JSON object (tracing/attribute_json.h); a compact BLOB from v6
  events          TEXT    NOT NULL,  -- JSON array of {name, time_unix_nano, attributes}
  operation_id    TEXT,              -- spark.connect.operation_id
  session_id      TEXT,              -- spark.connect.session_id
  dag_id          TEXT,              -- airflow.dag_id
  task_id         TEXT,              -- airflow.task_id
  run_id          TEXT,              -- airflow.run_id
  try_number      INTEGER,           -- airflow.try_number
  UNIQUE (trace_id, span_id)
);
CREATE INDEX spans_by_operation ON spans (operation_id) WHERE operation_id IS NOT NULL;

CREATE TABLE traces (
  trace_id        TEXT    NOT NULL PRIMARY KEY,
  root_name       TEXT    NOT NULL,
  start_unix_nano INTEGER NOT NULL,  -- earliest span start
  end_unix_nano   INTEGER NOT NULL,  -- latest span end
  span_count      INTEGER NOT NULL,
  error_count     INTEGER NOT NULL,
  dag_id          TEXT,
  task_id         TEXT,
  run_id          TEXT,
  try_number      INTEGER
) WITHOUT ROWID;
CREATE INDEX traces_by_start ON traces (start_unix_nano);
CREATE INDEX traces_by_end ON traces (end_unix_nano);
CREATE INDEX traces_by_airflow ON traces (dag_id, task_id, run_id, start_unix_nano);
)sql";

// A trace without Airflow identity has one part, keyed (0, '', '', '', 0, -1, trace id) with that
// trace id (PartsOfTrace): its primary key finds it by trace as well, and no task filter naming a dag
// or task can match its empty ones. Its entries in the by-trace and by-task indexes served nothing
// the key cannot, and cost a call per trace (the store's commonest shape) two of its eleven B-tree
// inserts, so both indexes hold the Airflow rows only; the queries below say `airflow = 1` to use
// them, and find the others by key.
constexpr std::string_view kAirflowOnlyIndexesSchema = R"sql(
DROP INDEX IF EXISTS attempt_parts_by_trace;
CREATE INDEX attempt_parts_by_trace ON attempt_parts (trace_id) WHERE airflow = 1;
DROP INDEX IF EXISTS task_attempts_by_task;
CREATE INDEX task_attempts_by_task ON task_attempts (dag_id, task_id, start_unix_nano) WHERE airflow = 1;
)sql";

// A trace without Airflow identity is its attempt's only part, so its task_attempts row holds all its
// part held: the part row is kept only where it carries an application id (TracesMatching finds
// traces by app id in attempt_parts). A call per trace, the store's commonest shape, saves a row of
// ~170 bytes and a B-tree insert per span; the index finds such an attempt by its primary key
// (sqlite_task_index.cc) and writes its row from the part it computed.
constexpr std::string_view kPartsOnlyWithAppIdSchema =
    "DELETE FROM attempt_parts WHERE airflow = 0 AND app_id IS NULL";

// Version 8 shrinks a span's rows and their B-tree inserts (a call per trace writes one span per trace,
// so these are most of what a proxy's store does):
//   - spans keyed by (trace_id, span_id) itself, WITHOUT ROWID: the row lives in its key's B-tree, so
//     the UNIQUE autoindex (a copy of both ids and the rowid, ~65 bytes and an insert a span) goes.
//     Trace ids from sparktrace's generator start with the time (tracing/id_generator.h), so new rows
//     still land at the end of the table; a trace's spans sit together, which is what every read wants.
//   - no session_id column: no query ever read it, and its text is in the attributes already.
//   - an attempt without identity (one trace, whose id is its trace key) keeps '' as its trace ids
//     instead of a second copy of that id; the listing reads the key there (sqlite_task_index.cc).
//   - task_attempts_by_state holds only the rows that are not 'success': a listing filtered on another
//     state names that condition and uses it (sqlite_task_index.cc), one filtered on success (the state
//     of nearly every row) reads task_attempts_by_start; the finished call's row no longer pays for it.
// Ids stay lower-case hex text: the task index, the traces table and `sqlite3 traces.db` all keep
// matching them as before, and the rows copy over unchanged (no unhex() in SQLite 3.40 to convert them).
constexpr std::string_view kCompactSpansSchema = R"sql(
CREATE TABLE spans_v8 (
  trace_id        TEXT    NOT NULL,  -- 32 lower-case hex digits
  span_id         TEXT    NOT NULL,  -- 16 lower-case hex digits
  parent_span_id  TEXT,              -- NULL for a root span
  name            TEXT    NOT NULL,
  kind            INTEGER NOT NULL,  -- OTLP Span.SpanKind
  start_unix_nano INTEGER NOT NULL,
  end_unix_nano   INTEGER NOT NULL,
  status_code     INTEGER NOT NULL,  -- OTLP Status.StatusCode: 0 unset, 1 ok, 2 error
  status_message  TEXT    NOT NULL,
  trace_state     TEXT    NOT NULL,
  attributes      TEXT    NOT NULL,  -- a compact BLOB (span_rows/compact_attributes.h); JSON text before v6
  events          TEXT    NOT NULL,  -- JSON array of {name, time_unix_nano, attributes}
  operation_id    TEXT,              -- spark.connect.operation_id
  dag_id          TEXT,              -- airflow.dag_id
  task_id         TEXT,              -- airflow.task_id
  run_id          TEXT,              -- airflow.run_id
  try_number      INTEGER,           -- airflow.try_number
  PRIMARY KEY (trace_id, span_id)
) WITHOUT ROWID;
INSERT INTO spans_v8 (trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code,
                      status_message, trace_state, attributes, events, operation_id, dag_id, task_id, run_id,
                      try_number)
SELECT trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code,
       status_message, trace_state, attributes, events, operation_id, dag_id, task_id, run_id, try_number
FROM spans ORDER BY trace_id, span_id;
DROP TABLE spans;
ALTER TABLE spans_v8 RENAME TO spans;
CREATE INDEX spans_by_operation ON spans (operation_id) WHERE operation_id IS NOT NULL;
DROP INDEX task_attempts_by_state;
CREATE INDEX task_attempts_by_state ON task_attempts (state, start_unix_nano) WHERE state <> 'success';
UPDATE task_attempts SET trace_ids = '' WHERE airflow = 0;
)sql";

// Version 9 lets a batch update the task index of a trace without re-reading it
// (increment/part_increment.h): a part keeps the counts its error count is made of, and a trace how
// many of its spans wait for a missing parent. NULL on the rows written before: such a trace is
// recomputed once by its next batch, which fills them in.
constexpr std::string_view kIncrementalIndexSchema = R"sql(
ALTER TABLE attempt_parts ADD COLUMN operation_count INTEGER;
ALTER TABLE attempt_parts ADD COLUMN failed_operation_count INTEGER;
ALTER TABLE attempt_parts ADD COLUMN failed_job_count INTEGER;
ALTER TABLE traces ADD COLUMN awaited_parents TEXT;
)sql";

// Version 10 shrinks what a trace and a span write (a call per trace writes both for every span):
//   - ids as BLOBs in spans and traces: 16 bytes a trace id, 8 a span id, where the hex text took
//     twice that in the row and again in every index holding the key (traces_by_start); so is the
//     trace key of a task_attempts row without Airflow identity (its trace id; in the row and in
//     task_attempts_by_start and task_attempts_unsettled). The rest of the task index keeps hex text
//     (attempt_parts' trace ids, the comma-separated trace_ids, '' as an Airflow row's trace key),
//     and the API spells every id in hex as before (sqlite_span_rows.h). Existing rows are
//     converted by sparktrace_unhex() (sqlite_attribute_function.h; SQLite 3.40 has no unhex()), which
//     passes an id that is a BLOB already unchanged. `sqlite3 traces.db` users match ids with
//     x'4bf9…' or hex(trace_id) from now on.
//   - no traces_by_end: retention finds traces by their end through traces_by_start, and the traces
//     that end before they start (normally none) through traces_inverted, which holds only them
//     (upkeep/sqlite_retention.cc says why that deletes the same traces); the index on the end cost
//     every trace a B-tree insert and ~50 bytes for a query run once a minute.
constexpr std::string_view kBinaryIdsSchema = R"sql(
CREATE TABLE spans_v10 (
  trace_id        BLOB    NOT NULL,  -- 16 bytes
  span_id         BLOB    NOT NULL,  -- 8 bytes
  parent_span_id  BLOB,              -- NULL for a root span
  name            TEXT    NOT NULL,
  kind            INTEGER NOT NULL,  -- OTLP Span.SpanKind
  start_unix_nano INTEGER NOT NULL,
  end_unix_nano   INTEGER NOT NULL,
  status_code     INTEGER NOT NULL,  -- OTLP Status.StatusCode: 0 unset, 1 ok, 2 error
  status_message  TEXT    NOT NULL,
  trace_state     TEXT    NOT NULL,
  attributes      TEXT    NOT NULL,  -- a compact BLOB (span_rows/compact_attributes.h); JSON text before v6
  events          TEXT    NOT NULL,  -- JSON array of {name, time_unix_nano, attributes}
  operation_id    TEXT,              -- spark.connect.operation_id
  dag_id          TEXT,              -- airflow.dag_id
  task_id         TEXT,              -- airflow.task_id
  run_id          TEXT,              -- airflow.run_id
  try_number      INTEGER,           -- airflow.try_number
  PRIMARY KEY (trace_id, span_id)
) WITHOUT ROWID;
INSERT INTO spans_v10 (trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code,
                       status_message, trace_state, attributes, events, operation_id, dag_id, task_id, run_id,
                       try_number)
SELECT sparktrace_unhex(trace_id), sparktrace_unhex(span_id), sparktrace_unhex(parent_span_id), name, kind,
       start_unix_nano, end_unix_nano, status_code, status_message, trace_state, attributes, events,
       operation_id, dag_id, task_id, run_id, try_number
FROM spans ORDER BY trace_id, span_id;
DROP TABLE spans;
ALTER TABLE spans_v10 RENAME TO spans;
CREATE INDEX spans_by_operation ON spans (operation_id) WHERE operation_id IS NOT NULL;
CREATE TABLE traces_v10 (
  trace_id        BLOB    NOT NULL PRIMARY KEY,  -- 16 bytes
  root_name       TEXT    NOT NULL,
  start_unix_nano INTEGER NOT NULL,  -- earliest span start
  end_unix_nano   INTEGER NOT NULL,  -- latest span end
  span_count      INTEGER NOT NULL,
  error_count     INTEGER NOT NULL,
  dag_id          TEXT,
  task_id         TEXT,
  run_id          TEXT,
  try_number      INTEGER,
  awaited_parents TEXT
) WITHOUT ROWID;
INSERT INTO traces_v10 (trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id,
                        task_id, run_id, try_number, awaited_parents)
SELECT sparktrace_unhex(trace_id), root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id,
       task_id, run_id, try_number, awaited_parents
FROM traces ORDER BY trace_id;
DROP TABLE traces;
ALTER TABLE traces_v10 RENAME TO traces;
CREATE INDEX traces_by_start ON traces (start_unix_nano);
CREATE INDEX traces_inverted ON traces (end_unix_nano) WHERE end_unix_nano < start_unix_nano;
UPDATE task_attempts SET trace_key = sparktrace_unhex(trace_key) WHERE airflow = 0;
)sql";

// Version 13 keeps the attempt of a trace without Airflow identity in the trace's summary row when
// the row says all the attempt's would (index/sqlite_summary_attempts.h): `attempt` is 1 on such a
// summary, which then has no task_attempts row. traces_by_start carries it, so that the task list and
// its count read the held attempts from the index alone. Rows written before keep their task_attempts
// row (an attempt is either, never both), until their trace is indexed again.
constexpr std::string_view kSummaryAttemptsSchema = R"sql(
ALTER TABLE traces ADD COLUMN attempt INTEGER;
DROP INDEX traces_by_start;
CREATE INDEX traces_by_start ON traces (start_unix_nano, attempt);
)sql";

// Version 14 keeps what a call repeats from its client, connection, session and Airflow task once per
// set of it (rows/sqlite_attribute_sets.h): a span row in the shared form names its set by id. Rows
// written before keep the compact form. AUTOINCREMENT: an id is never given to another set.
constexpr std::string_view kAttributeSetsSchema = R"sql(
CREATE TABLE attribute_sets (
  set_id           INTEGER PRIMARY KEY AUTOINCREMENT,
  attributes       BLOB    NOT NULL UNIQUE,  -- span_rows/shared/shared_attributes.h's set layout
  leased_unix_nano INTEGER NOT NULL          -- rows/sqlite_attribute_sets.h: what retention keeps
);
)sql";

// Version 15 keeps a Spark Connect call's RPC name prefix as one byte in spans.name and traces.root_name,
// version 16 the span names sparktrace writes most as one byte each (span_rows/stored_span.h, StoredName).
// Rows written before keep their names, which read back unchanged, but for a name that starts with a
// byte the version made a code (0x01-0x02, then 0x03-0x1f): those few get the escape byte in front.
constexpr std::string_view kStoredNamesSchema = R"sql(
UPDATE spans SET name = char(2) || name WHERE substr(name, 1, 1) IN (char(1), char(2));
UPDATE traces SET root_name = char(2) || root_name WHERE substr(root_name, 1, 1) IN (char(1), char(2));
)sql";
constexpr std::string_view kWholeNamesSchema = R"sql(
UPDATE spans SET name = char(2) || name WHERE unicode(name) BETWEEN 3 AND 31;
UPDATE traces SET root_name = char(2) || root_name WHERE unicode(root_name) BETWEEN 3 AND 31;
)sql";
static_assert(kStoredNamePrefixCode == '\x01' && kStoredNameEscapeCode == '\x02' && IsStoredNameCode('\x1f'));

struct Migration {
  std::int64_t to_version;
  std::string_view sql;
};

// Step i brings a database from version i to version i + 1. A new schema version appends a step
// (ALTER TABLE …, backfills) and raises SqliteSpanStore::kSchemaVersion; existing steps never change.
const Migration kMigrations[] = {
    {1, kSchemaV1},
    {2, kTaskIndexSchema},  // backfilled from the stored spans by MigrateSqlite
    // Task attempts are listed from the task index (tracing/store/sqlite/sqlite_task_index.h); the summary's
    // Airflow index served only the per-trace listing it replaced, and cost every new trace a write.
    {3, "DROP INDEX IF EXISTS traces_by_airflow"},
    // Settled figures on the attempt rows (tracing/store/sqlite/upkeep/sqlite_settlement.h).
    {4, kSettlementSchema},
    // Rows without Airflow identity (a call per trace) leave the task index's by-trace and by-task
    // indexes: rebuilt from attempt_parts and task_attempts (not spans), one index at a time.
    {5, kAirflowOnlyIndexesSchema},
    // New rows hold their attributes in the compact form (a BLOB, span_rows/compact_attributes.h), a
    // quarter of the JSON text; rows written before stay JSON text and are read as such (the column's
    // type tells them apart) until retention removes them. No table changes: the version step is
    // what keeps an older sparktrace, which reads JSON only, from opening the file.
    {6, "SELECT 1"},
    // A trace without Airflow identity keeps its attempt's row and no part row (unless the part names
    // an application): a call per trace writes one row and one B-tree insert less per span.
    {7, kPartsOnlyWithAppIdSchema},
    // Spans keyed by their ids without a rowid, no session_id column, success rows out of
    // task_attempts_by_state: a span of a call per trace costs ~170 bytes and two B-tree inserts less.
    // The spans are copied into the new table once.
    {8, kCompactSpansSchema},
    // Parts keep their operation counts and traces the parents their spans wait for: a batch updates the task
    // index of a long trace from its own spans.
    {9, kIncrementalIndexSchema},
    // Ids as BLOBs in spans and traces, retention through traces_by_start: a call per trace writes ~100
    // bytes and a B-tree insert less a span. Both tables are copied once.
    {10, kBinaryIdsSchema},
    // Attempts with nothing to settle (a trace without identity or application) leave the settling
    // queue: a call per trace writes an index entry less, and the settler no longer reads it back.
    {11, kSettlesSchema},
    // An Airflow attempt's traces are read from its parts (sqlite_span_rows.h, AttemptRowColumnsSql),
    // no longer kept on its row, which an attempt of a call per trace rewrote whole at every batch (its
    // 50,000 trace ids, 1.6 MB): the lists kept so far go.
    {12, "UPDATE task_attempts SET trace_ids = '' WHERE airflow = 1 AND trace_ids <> ''"},
    // A trace without identity whose summary says all its attempt's row would keeps no such row: a call
    // per trace writes ~180 bytes and two B-tree inserts less a span.
    {13, kSummaryAttemptsSchema},
    // What a session's calls repeat is kept once per set of it: a Config call's row ~90 bytes less.
    {14, kAttributeSetsSchema},
    // A call's name keeps its RPC prefix as one byte (~66 bytes), then the names written most a byte each.
    {15, kStoredNamesSchema},
    {16, kWholeNamesSchema},
    // An attempt part's trace id as a BLOB: ~35 bytes a call for an attempt of a call per trace.
    {17, kPartTraceIdBlobsSchema},
    // A trace's one Airflow part kept in its summary when the summary says all of it: an attempt of a
    // call per trace writes ~180 bytes and two B-tree inserts less a call.
    {18, kHeldPartsSchema},
};
static_assert(std::size(kMigrations) == SqliteSpanStore::kSchemaVersion);

// Schema version 2 added the task index; a store written before has traces but no index rows.
Result<void> BackfillTaskIndex(SqliteConnection& db) {
  auto stmt = db.Prepare("SELECT lower(hex(trace_id)) FROM traces");
  if (!stmt.ok()) return stmt.error();
  auto traces = stmt->CollectText();
  if (!traces.ok()) return traces.error();
  return RefreshTaskIndex(db, *traces);
}

}  // namespace

Result<void> ConfigureSqlite(SqliteConnection& db, const std::string& path, const StoreOptions& options) {
  sqlite3_busy_timeout(db.handle(), static_cast<int>(options.busy_timeout.count()));

  // The first statement reads the file header: this is where a corrupt or foreign file shows.
  auto application_id = db.QueryInt64("PRAGMA application_id");
  if (!application_id.ok()) {
    return Error{application_id.error().code,
                 fmt::format("open {}: {}", path, application_id.error().message)};
  }
  if (*application_id != 0 && *application_id != kApplicationId) {
    return InvalidArgument(
        fmt::format("{} is not a sparktrace trace database (application_id {:#x})", path, *application_id));
  }

  // Every connection, readers too: the task index and the span upsert read attributes through it.
  if (auto registered = RegisterAttributeFunction(db); !registered.ok()) return registered.error();

  if (options.read_only) return db.Exec("PRAGMA query_only = ON");

  // page_size and auto_vacuum only take effect before the first table exists, so they precede the
  // migration. INCREMENTAL lets EnforceRetention give pages back without a full VACUUM rewriting the file.
  const std::string pragmas = fmt::format(
      "PRAGMA page_size = {}; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA synchronous = NORMAL; "
      "PRAGMA journal_size_limit = {}; PRAGMA cache_size = -{}; PRAGMA temp_store = MEMORY;",
      kNewFilePageSize, kJournalSizeLimitBytes, kWriterCacheKiB);
  if (auto set = db.Exec(pragmas); !set.ok()) return set.error();
  // WAL: readers in other processes never block the writer and see whole batches. NORMAL
  // synchronous is durable across process crashes (an OS crash may lose the last batches, acceptable
  // for traces) and saves an fsync per batch.
  auto journal = db.Prepare("PRAGMA journal_mode = WAL");
  if (!journal.ok()) return journal.error();
  auto row = journal->Step();
  if (!row.ok()) return row.error();
  if (!*row || journal->ColumnText(0) != "wal") {
    return Error{ErrorCode::kIo, fmt::format("{}: cannot use WAL mode on this file system (journal mode {})",
                                             path, *row ? journal->ColumnText(0) : "unknown")};
  }
  return {};
}

Result<void> MigrateSqlite(SqliteConnection& db, const std::string& path, bool read_only) {
  const auto newer_error = [&path](std::int64_t version) {
    return InvalidArgument(
        fmt::format("{} was written by a newer sparktrace (schema version {}, this one supports up to {}); "
                    "upgrade sparktrace or use another trace database path",
                    path, version, SqliteSpanStore::kSchemaVersion));
  };

  if (read_only) {
    auto version = db.QueryInt64("PRAGMA user_version");
    if (!version.ok()) return version.error();
    if (*version > SqliteSpanStore::kSchemaVersion) return newer_error(*version);
    if (*version < SqliteSpanStore::kSchemaVersion) {
      return InvalidArgument(fmt::format(
          "{} has trace schema version {}, this sparktrace reads {}; start the proxy once to migrate it",
          path, *version, SqliteSpanStore::kSchemaVersion));
    }
    return {};
  }

  // Read the version inside the write transaction, so that two processes opening a new file at the
  // same time do not both create the schema.
  return InWriteTransaction(db, [&]() -> Result<void> {
    auto version = db.QueryInt64("PRAGMA user_version");
    if (!version.ok()) return version.error();
    if (*version > SqliteSpanStore::kSchemaVersion) return newer_error(*version);
    if (*version == 0) {
      auto tables = db.QueryInt64("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'");
      if (!tables.ok()) return tables.error();
      if (*tables != 0) {
        return InvalidArgument(fmt::format("{} already holds tables that are not sparktrace's", path));
      }
      if (auto marked = db.Exec(fmt::format("PRAGMA application_id = {}", kApplicationId)); !marked.ok()) {
        return marked.error();
      }
    }
    // Version 2 added the task index; it is filled once the tables have their current form, which is
    // what the index code writes.
    const bool backfill = *version != 0 && *version < 2;
    for (const auto& migration : kMigrations) {
      if (migration.to_version <= *version) continue;
      if (auto applied = db.Exec(migration.sql); !applied.ok()) {
        return Error{applied.error().code, fmt::format("migrate {} to schema version {}: {}", path,
                                                       migration.to_version, applied.error().message)};
      }
      // PRAGMA takes no bound parameters; the value is our own integer.
      if (auto set = db.Exec(fmt::format("PRAGMA user_version = {}", migration.to_version)); !set.ok()) {
        return set.error();
      }
    }
    if (backfill) return BackfillTaskIndex(db);
    return {};
  });
}

}  // namespace sparktrace::tracing::store
