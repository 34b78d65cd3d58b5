#include "tracing/store/sqlite_span_store.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <system_error>
#include <tuple>
#include <utility>

#include "tracing/attribute_json.h"
#include "tracing/store/attribute_json_reader.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/attempt_parts.h"
#include "tracing/store/sqlite_connection.h"
#include "tracing/store/sqlite_settlement.h"
#include "tracing/store/sqlite_statement.h"
#include "tracing/store/sqlite_task_index.h"
#include "tracing/store/stored_span.h"

namespace sparktrace::tracing::store {
namespace {

// "SpTr" in PRAGMA application_id marks the file as ours, so that pointing --trace-db at some other
// SQLite database fails instead of adding tables to it.
constexpr std::int64_t kApplicationId = 0x53705472;

// The writer's page cache (SQLite's default is 2 MiB): the indexes' hot pages stay in memory
// between batches instead of being read back from the file for every one.
constexpr std::int64_t kWriterCacheKiB = std::int64_t{16} * 1024;

// Bounds the WAL file after checkpoints; without it the WAL keeps its largest size forever.
constexpr std::int64_t kJournalSizeLimitBytes = 64LL << 20;

// Ids are stored as lower-case hex text, not blobs: the extra 24 bytes a span are small next to its
// attributes JSON, and `sqlite3 traces.db "... WHERE trace_id = '4bf9…'"` then works as users expect.
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
  attributes      TEXT    NOT NULL,  -- JSON object, see tracing/attribute_json.h
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

struct Migration {
  std::int64_t to_version;
  std::string_view sql;
};

// Step i brings a database from version i to version i + 1. A new schema version appends a step
// (ALTER TABLE …, backfills) and raises SqliteSpanStore::kSchemaVersion; existing steps never change.
const Migration kMigrations[] = {
    {1, kSchemaV1},
    {2, kTaskIndexSchema},  // backfilled from the stored spans by Migrate
    // Task attempts are listed from the task index (tracing/store/sqlite_task_index.h); the summary's
    // Airflow index served only the per-trace listing it replaced, and cost every new trace a write.
    {3, "DROP INDEX IF EXISTS traces_by_airflow"},
    // Settled figures on the attempt rows (tracing/store/sqlite_settlement.h).
    {4, kSettlementSchema},
};
static_assert(std::size(kMigrations) == SqliteSpanStore::kSchemaVersion);

constexpr std::string_view kUpsertSpanSql = R"sql(
INSERT INTO spans (trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano,
                   status_code, status_message, trace_state, attributes, events,
                   operation_id, session_id, dag_id, task_id, run_id, try_number)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
ON CONFLICT (trace_id, span_id) DO UPDATE SET
  parent_span_id = excluded.parent_span_id, name = excluded.name, kind = excluded.kind,
  start_unix_nano = excluded.start_unix_nano, end_unix_nano = excluded.end_unix_nano,
  status_code = excluded.status_code, status_message = excluded.status_message,
  trace_state = excluded.trace_state, attributes = excluded.attributes, events = excluded.events,
  operation_id = excluded.operation_id, session_id = excluded.session_id, dag_id = excluded.dag_id,
  task_id = excluded.task_id, run_id = excluded.run_id, try_number = excluded.try_number
)sql";

// Recomputed from the trace's spans rather than adjusted incrementally: a replaced span may change the
// trace's bounds, error count or root, and recomputing is always right.
constexpr std::string_view kRefreshSummarySql = R"sql(
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

// The summary of a trace the batch creates, computed from its spans (BindNewSummary) with the
// rules of kRefreshSummarySql.
constexpr std::string_view kInsertSummarySql = R"sql(
INSERT INTO traces (trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count,
                    dag_id, task_id, run_id, try_number)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
ON CONFLICT (trace_id) DO NOTHING
)sql";

constexpr std::string_view kSpanColumns =
    "trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, "
    "status_message, trace_state, attributes, events";

constexpr std::string_view kSummaryColumns =
    "trace_id, root_name, start_unix_nano, end_unix_nano, span_count, error_count, dag_id, task_id, "
    "run_id, try_number";

void BindOptionalText(SqliteStatement& stmt, int index, const std::string* text) {
  if (text == nullptr) {
    stmt.BindNull(index);
  } else {
    stmt.BindText(index, *text);
  }
}

void BindOptionalInt(SqliteStatement& stmt, int index, std::optional<std::int64_t> value) {
  if (value) {
    stmt.BindInt64(index, *value);
  } else {
    stmt.BindNull(index);
  }
}

// Binds kInsertSummarySql for a trace that the batch may create.
void BindNewSummary(SqliteStatement& insert, const std::string& trace_hex, const TraceSummaryRow& summary) {
  insert.BindText(1, trace_hex);
  insert.BindText(2, summary.root_name);
  insert.BindInt64(3, summary.start_unix_nano);
  insert.BindInt64(4, summary.end_unix_nano);
  insert.BindInt64(5, summary.span_count);
  insert.BindInt64(6, summary.error_count);
  BindOptionalText(insert, 7, summary.dag_id);
  BindOptionalText(insert, 8, summary.task_id);
  BindOptionalText(insert, 9, summary.run_id);
  BindOptionalInt(insert, 10, summary.try_number);
}

// Reads a row of kSpanColumns.
Result<Span> SpanFromRow(const SqliteStatement& stmt) {
  StoredSpanColumns columns;
  columns.trace_id = stmt.ColumnView(0);
  columns.span_id = stmt.ColumnView(1);
  if (!stmt.ColumnIsNull(2)) columns.parent_span_id = stmt.ColumnView(2);
  columns.name = stmt.ColumnView(3);
  columns.kind = stmt.ColumnInt64(4);
  columns.start_unix_nano = stmt.ColumnInt64(5);
  columns.end_unix_nano = stmt.ColumnInt64(6);
  columns.status_code = stmt.ColumnInt64(7);
  columns.status_message = stmt.ColumnView(8);
  columns.trace_state = stmt.ColumnView(9);
  columns.attributes_json = stmt.ColumnView(10);
  columns.events_json = stmt.ColumnView(11);
  return FromStoredColumns(columns);
}

// Reads a row of kSummaryColumns.
Result<TraceSummary> SummaryFromRow(const SqliteStatement& stmt) {
  TraceSummary summary;
  const std::string trace_hex = stmt.ColumnText(0);
  if (!ParseTraceHex(trace_hex, summary.trace_id)) {
    return Error{ErrorCode::kInternal, fmt::format("malformed trace id in trace summary: {}", trace_hex)};
  }
  summary.root_name = stmt.ColumnText(1);
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

// Rolls an open transaction back unless dismissed after a successful COMMIT; also on early returns
// and if an exception unwinds through.
class RollbackGuard {
 public:
  explicit RollbackGuard(SqliteConnection& db) : connection_(db) {}
  ~RollbackGuard() {
    if (active_) (void)connection_.Exec("ROLLBACK");  // nothing more to do if even that fails
  }
  RollbackGuard(const RollbackGuard&) = delete;
  RollbackGuard& operator=(const RollbackGuard&) = delete;
  void Dismiss() { active_ = false; }

 private:
  SqliteConnection& connection_;
  bool active_ = true;
};

// BEGIN IMMEDIATE takes the write lock up front, so lock contention shows as one busy wait at the
// start instead of a failure halfway through the batch.
Result<void> InWriteTransaction(SqliteConnection& db, const std::function<Result<void>()>& body) {
  if (auto begun = db.Exec("BEGIN IMMEDIATE"); !begun.ok()) return begun.error();
  RollbackGuard guard(db);
  if (auto done = body(); !done.ok()) return done.error();
  if (auto committed = db.Exec("COMMIT"); !committed.ok()) return committed.error();
  guard.Dismiss();
  return {};
}

// The API promises that no exception escapes: SQLite never throws and nlohmann is used in its
// non-throwing forms, so this only catches what is left (std::bad_alloc).
template <typename Function>
auto NoThrow(std::string_view what, Function&& function) -> decltype(function()) {
  try {
    return function();
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInternal, fmt::format("{}: {}", what, e.what())};
  }
}

// Schema version 2 added the task index; a store written before has traces but no index rows.
Result<void> BackfillTaskIndex(SqliteConnection& db) {
  auto stmt = db.Prepare("SELECT trace_id FROM traces");
  if (!stmt.ok()) return stmt.error();
  auto traces = stmt->CollectText();
  if (!traces.ok()) return traces.error();
  return RefreshTaskIndex(db, *traces);
}

Result<std::vector<std::string>> SelectTraceIds(SqliteConnection& db, std::string_view selection,
                                                std::int64_t parameter) {
  auto stmt = db.Prepare(selection);
  if (!stmt.ok()) return stmt.error();
  stmt->BindInt64(1, parameter);
  return stmt->CollectText();
}

}  // namespace

SqliteSpanStore::SqliteSpanStore(ConstructionKey, std::string path, StoreOptions options,
                                 std::unique_ptr<SqliteConnection> db)
    : path_(std::move(path)), options_(options), db_(std::move(db)) {}

SqliteSpanStore::~SqliteSpanStore() = default;

Result<std::unique_ptr<SqliteSpanStore>> SqliteSpanStore::Open(const std::string& path,
                                                               const StoreOptions& options) {
  return NoThrow("open " + path, [&]() -> Result<std::unique_ptr<SqliteSpanStore>> {
    if (path.empty()) return InvalidArgument("trace database path is empty");
    std::error_code ec;
    const std::filesystem::path file(path);
    if (options.read_only) {
      // SQLite would say "unable to open database file"; the usual cause deserves plainer words.
      if (!std::filesystem::exists(file, ec)) {
        return Error{ErrorCode::kNotFound, fmt::format("no trace database at {}", path)};
      }
    } else if (file.has_parent_path()) {
      std::filesystem::create_directories(file.parent_path(), ec);
      if (ec) {
        return Error{ErrorCode::kIo,
                     fmt::format("create directory {}: {}", file.parent_path().string(), ec.message())};
      }
    }

    const int flags = options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    auto db = SqliteConnection::Open(path, flags);
    if (!db.ok()) return db.error();
    auto store = std::make_unique<SqliteSpanStore>(ConstructionKey(), path, options,
                                                   std::make_unique<SqliteConnection>(std::move(db).value()));
    // Every failure from here on names the file, which the user needs to act on it.
    const auto named = [&path](const Error& error) {
      if (error.message.find(path) != std::string::npos) return error;
      return Error{error.code, fmt::format("open {}: {}", path, error.message)};
    };
    if (auto configured = store->Configure(); !configured.ok()) return named(configured.error());
    if (auto migrated = store->Migrate(); !migrated.ok()) return named(migrated.error());
    if (auto prepared = store->PrepareStatements(); !prepared.ok()) return named(prepared.error());
    return store;
  });
}

Result<void> SqliteSpanStore::Configure() {
  sqlite3_busy_timeout(db_->handle(), static_cast<int>(options_.busy_timeout.count()));

  // The first statement reads the file header: this is where a corrupt or foreign file shows.
  auto application_id = db_->QueryInt64("PRAGMA application_id");
  if (!application_id.ok()) {
    return Error{application_id.error().code,
                 fmt::format("open {}: {}", path_, application_id.error().message)};
  }
  if (*application_id != 0 && *application_id != kApplicationId) {
    return InvalidArgument(
        fmt::format("{} is not a sparktrace trace database (application_id {:#x})", path_, *application_id));
  }

  if (options_.read_only) return db_->Exec("PRAGMA query_only = ON");

  // auto_vacuum only takes effect before the first table exists, so it precedes the migration.
  // INCREMENTAL lets EnforceRetention give pages back without a full VACUUM rewriting the file.
  const std::string pragmas = fmt::format(
      "PRAGMA auto_vacuum = INCREMENTAL; PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = {}; "
      "PRAGMA cache_size = -{}; PRAGMA temp_store = MEMORY;",
      kJournalSizeLimitBytes, kWriterCacheKiB);
  if (auto set = db_->Exec(pragmas); !set.ok()) return set.error();
  // WAL: readers in other processes never block the writer and see whole batches. NORMAL
  // synchronous is durable across process crashes (an OS crash may lose the last batches, acceptable
  // for traces) and saves an fsync per batch.
  auto journal = db_->Prepare("PRAGMA journal_mode = WAL");
  if (!journal.ok()) return journal.error();
  auto row = journal->Step();
  if (!row.ok()) return row.error();
  if (!*row || journal->ColumnText(0) != "wal") {
    return Error{ErrorCode::kIo, fmt::format("{}: cannot use WAL mode on this file system (journal mode {})",
                                             path_, *row ? journal->ColumnText(0) : "unknown")};
  }
  return {};
}

Result<void> SqliteSpanStore::Migrate() {
  const auto newer_error = [this](std::int64_t version) {
    return InvalidArgument(
        fmt::format("{} was written by a newer sparktrace (schema version {}, this one supports up to {}); "
                    "upgrade sparktrace or use another trace database path",
                    path_, version, kSchemaVersion));
  };

  if (options_.read_only) {
    auto version = db_->QueryInt64("PRAGMA user_version");
    if (!version.ok()) return version.error();
    if (*version > kSchemaVersion) return newer_error(*version);
    if (*version < kSchemaVersion) {
      return InvalidArgument(fmt::format(
          "{} has trace schema version {}, this sparktrace reads {}; start the proxy once to migrate it",
          path_, *version, kSchemaVersion));
    }
    return {};
  }

  // Read the version inside the write transaction, so that two processes opening a new file at the
  // same time do not both create the schema.
  return InWriteTransaction(*db_, [&]() -> Result<void> {
    auto version = db_->QueryInt64("PRAGMA user_version");
    if (!version.ok()) return version.error();
    if (*version > kSchemaVersion) return newer_error(*version);
    if (*version == 0) {
      auto tables = db_->QueryInt64("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'");
      if (!tables.ok()) return tables.error();
      if (*tables != 0) {
        return InvalidArgument(fmt::format("{} already holds tables that are not sparktrace's", path_));
      }
      if (auto marked = db_->Exec(fmt::format("PRAGMA application_id = {}", kApplicationId)); !marked.ok()) {
        return marked.error();
      }
    }
    for (const auto& migration : kMigrations) {
      if (migration.to_version <= *version) continue;
      if (auto applied = db_->Exec(migration.sql); !applied.ok()) {
        return Error{applied.error().code, fmt::format("migrate {} to schema version {}: {}", path_,
                                                       migration.to_version, applied.error().message)};
      }
      if (migration.to_version == 2) {
        if (auto indexed = BackfillTaskIndex(*db_); !indexed.ok()) return indexed.error();
      }
      // PRAGMA takes no bound parameters; the value is our own integer.
      if (auto set = db_->Exec(fmt::format("PRAGMA user_version = {}", migration.to_version)); !set.ok()) {
        return set.error();
      }
    }
    return {};
  });
}

Result<void> SqliteSpanStore::PrepareStatements() {
  auto get_trace = db_->Prepare(
      fmt::format("SELECT {} FROM spans WHERE trace_id = ?1 ORDER BY start_unix_nano, span_id", kSpanColumns),
      /*persistent=*/true);
  if (!get_trace.ok()) return get_trace.error();
  get_trace_ = std::make_unique<SqliteStatement>(std::move(get_trace).value());

  auto find = db_->Prepare(
      "SELECT trace_id FROM spans WHERE operation_id = ?1 ORDER BY start_unix_nano DESC, trace_id DESC LIMIT "
      "1",
      /*persistent=*/true);
  if (!find.ok()) return find.error();
  find_by_operation_ = std::make_unique<SqliteStatement>(std::move(find).value());

  if (options_.read_only) return {};
  auto upsert = db_->Prepare(kUpsertSpanSql, /*persistent=*/true);
  if (!upsert.ok()) return upsert.error();
  upsert_span_ = std::make_unique<SqliteStatement>(std::move(upsert).value());
  auto refresh = db_->Prepare(kRefreshSummarySql, /*persistent=*/true);
  if (!refresh.ok()) return refresh.error();
  refresh_summary_ = std::make_unique<SqliteStatement>(std::move(refresh).value());
  auto insert = db_->Prepare(kInsertSummarySql, /*persistent=*/true);
  if (!insert.ok()) return insert.error();
  insert_summary_ = std::make_unique<SqliteStatement>(std::move(insert).value());

  return {};
}

Result<void> SqliteSpanStore::RequireWriter(std::string_view operation) const {
  if (options_.read_only) {
    return InvalidArgument(fmt::format("{}: {} was opened read-only", operation, path_));
  }
  return {};
}

Result<WriteStats> SqliteSpanStore::Write(std::span<const Span> spans) {
  if (auto writer = RequireWriter("write spans"); !writer.ok()) return writer.error();
  return NoThrow("write spans", [&] { return WriteBatch(spans); });
}

Result<WriteStats> SqliteSpanStore::WriteBatch(std::span<const Span> spans) {
  WriteStats stats;
  const StoredBatch batch = ToStoredBatch(spans);
  const std::vector<StoredSpanRow>& rows = batch.rows;
  const std::vector<const Span*>& sources = batch.sources;
  stats.spans_rejected = batch.rejected;
  const BatchTraces traces = GroupByTrace(rows);

  auto written = InWriteTransaction(*db_, [&]() -> Result<void> {
    // A trace the batch creates is summarised and indexed from the batch itself: its summary row,
    // computed from the batch, goes in first, and whether it went in (no row for the trace yet) is
    // what tells a new trace. One that has stored spans already is recomputed from all of them.
    std::vector<std::string> existing;
    std::map<std::string, std::vector<IndexSpan>> created;
    SqliteStatement& insert = *insert_summary_;
    for (const auto& [trace_hex, versions] : traces) {
      insert.Reset();
      BindNewSummary(insert, trace_hex, SummarizeTrace(rows, versions));
      if (auto ran = insert.Run(); !ran.ok()) return ran.error();
      if (sqlite3_changes(db_->handle()) == 0) {
        existing.push_back(trace_hex);
        continue;
      }
      std::vector<IndexSpan>& index_spans = created[trace_hex];
      for (const auto& [span_hex, i] : versions) index_spans.push_back(IndexSpanOf(*sources[i], rows[i]));
    }
    insert.Reset();

    SqliteStatement& upsert = *upsert_span_;
    for (const StoredSpanRow& row : rows) {
      upsert.Reset();
      upsert.BindText(1, row.trace_id);
      upsert.BindText(2, row.span_id);
      if (row.parent_span_id) {
        upsert.BindText(3, *row.parent_span_id);
      } else {
        upsert.BindNull(3);
      }
      upsert.BindText(4, row.name);
      upsert.BindInt64(5, row.kind);
      upsert.BindInt64(6, row.start_unix_nano);
      upsert.BindInt64(7, row.end_unix_nano);
      upsert.BindInt64(8, row.status_code);
      upsert.BindText(9, row.status_message);
      upsert.BindText(10, row.trace_state);
      upsert.BindText(11, row.attributes_json);
      upsert.BindText(12, row.events_json);
      BindOptionalText(upsert, 13, row.operation_id);
      BindOptionalText(upsert, 14, row.session_id);
      BindOptionalText(upsert, 15, row.dag_id);
      BindOptionalText(upsert, 16, row.task_id);
      BindOptionalText(upsert, 17, row.run_id);
      BindOptionalInt(upsert, 18, row.try_number);
      if (auto ran = upsert.Run(); !ran.ok()) return ran.error();
      ++stats.spans_written;
    }
    upsert.Reset();  // drop the copies of the last span's text

    SqliteStatement& refresh = *refresh_summary_;
    for (const std::string& trace_hex : existing) {
      refresh.Reset();
      refresh.BindText(1, trace_hex);
      if (auto ran = refresh.Run(); !ran.ok()) return ran.error();
    }
    refresh.Reset();
    if (auto indexed = IndexNewTraces(*db_, created); !indexed.ok()) return indexed.error();
    return RefreshTaskIndex(*db_, existing);
  });
  if (!written.ok()) {
    return Error{written.error().code,
                 fmt::format("write {} spans to {}: {}", spans.size(), path_, written.error().message)};
  }
  stats.traces_touched = traces.size();
  return stats;
}

Result<std::vector<TraceSummary>> SqliteSpanStore::ListTraces(const TraceFilter& filter) {
  return NoThrow("list traces", [&]() -> Result<std::vector<TraceSummary>> {
    // Only the filters in use appear in the SQL, so that SQLite can pick the matching index; values
    // are still bound, never spliced in. Unnumbered parameters take the numbers 1, 2, … in order.
    std::string sql = fmt::format("SELECT {} FROM traces WHERE 1", kSummaryColumns);
    if (filter.dag_id) sql += " AND dag_id = ?";
    if (filter.task_id) sql += " AND task_id = ?";
    if (filter.run_id) sql += " AND run_id = ?";
    if (filter.since_unix_nano != 0) sql += " AND start_unix_nano >= ?";
    sql += " ORDER BY start_unix_nano DESC, trace_id DESC";
    if (filter.limit != 0) sql += " LIMIT ?";

    auto stmt = db_->Prepare(sql);
    if (!stmt.ok()) return stmt.error();
    int index = 1;
    if (filter.dag_id) stmt->BindText(index++, *filter.dag_id);
    if (filter.task_id) stmt->BindText(index++, *filter.task_id);
    if (filter.run_id) stmt->BindText(index++, *filter.run_id);
    if (filter.since_unix_nano != 0) stmt->BindInt64(index++, ToSql(filter.since_unix_nano));
    if (filter.limit != 0) {
      stmt->BindInt64(index++, static_cast<std::int64_t>(std::min<std::uint64_t>(
                                   filter.limit, std::numeric_limits<std::int64_t>::max())));
    }

    std::vector<TraceSummary> summaries;
    while (true) {
      auto row = stmt->Step();
      if (!row.ok())
        return Error{row.error().code, fmt::format("list traces in {}: {}", path_, row.error().message)};
      if (!*row) break;
      auto summary = SummaryFromRow(*stmt);
      if (!summary.ok()) return summary.error();
      summaries.push_back(std::move(summary).value());
    }
    return summaries;
  });
}

Result<std::vector<Span>> SqliteSpanStore::GetTrace(const TraceId& trace_id) {
  return NoThrow("get trace", [&]() -> Result<std::vector<Span>> {
    const std::string trace_hex = ToHex(trace_id);
    SqliteStatement& stmt = *get_trace_;
    stmt.Reset();
    stmt.BindText(1, trace_hex);
    std::vector<Span> spans;
    while (true) {
      auto row = stmt.Step();
      if (!row.ok()) {
        stmt.Reset();
        return Error{row.error().code,
                     fmt::format("read trace {} from {}: {}", trace_hex, path_, row.error().message)};
      }
      if (!*row) break;
      auto span = SpanFromRow(stmt);
      if (!span.ok()) {
        stmt.Reset();
        return span.error();
      }
      spans.push_back(std::move(span).value());
    }
    // A finished statement still pins the WAL snapshot it read until it is reset; readers that stay
    // open (the admin thread) must not hold back checkpoints.
    stmt.Reset();
    if (spans.empty()) return Error{ErrorCode::kNotFound, fmt::format("no trace {} in {}", trace_hex, path_)};
    return spans;
  });
}

Result<TraceId> SqliteSpanStore::FindTraceByOperation(std::string_view operation_id) {
  return NoThrow("find trace by operation", [&]() -> Result<TraceId> {
    SqliteStatement& stmt = *find_by_operation_;
    stmt.Reset();
    stmt.BindText(1, operation_id);
    auto row = stmt.Step();
    if (!row.ok()) {
      stmt.Reset();
      return Error{row.error().code,
                   fmt::format("find operation {} in {}: {}", operation_id, path_, row.error().message)};
    }
    if (!*row) {
      stmt.Reset();
      return Error{ErrorCode::kNotFound, fmt::format("no trace has operation {} in {}", operation_id, path_)};
    }
    TraceId trace_id{};
    const bool parsed = ParseTraceHex(stmt.ColumnText(0), trace_id);
    stmt.Reset();
    if (!parsed)
      return Error{ErrorCode::kInternal,
                   fmt::format("malformed trace id stored for operation {}", operation_id)};
    return trace_id;
  });
}

Result<TaskAttemptPage> SqliteSpanStore::ListTaskAttempts(const TaskAttemptFilter& filter) {
  return NoThrow("list task attempts", [&]() -> Result<TaskAttemptPage> {
    auto page = store::ListTaskAttempts(*db_, filter);
    if (!page.ok())
      return Error{page.error().code, fmt::format("list tasks in {}: {}", path_, page.error().message)};
    return page;
  });
}

Result<std::vector<std::string>> SqliteSpanStore::TracesMatching(std::string_view text) {
  return NoThrow("search traces", [&]() -> Result<std::vector<std::string>> {
    auto traces = store::TracesMatching(*db_, text);
    if (!traces.ok())
      return Error{traces.error().code, fmt::format("search {}: {}", path_, traces.error().message)};
    return traces;
  });
}

Result<DueAttempts> SqliteSpanStore::ListDueAttempts(std::chrono::system_clock::time_point now,
                                                     std::chrono::milliseconds quiet, std::size_t limit) {
  return NoThrow("list attempts due for settling", [&]() -> Result<DueAttempts> {
    auto due = ListSqliteDueAttempts(*db_, now, quiet, limit);
    if (!due.ok())
      return Error{due.error().code,
                   fmt::format("list unsettled attempts in {}: {}", path_, due.error().message)};
    return due;
  });
}

Result<SettleClaim> SqliteSpanStore::RecordSettlement(const AttemptRef& ref, std::uint64_t indexed_unix_nano,
                                                      const SettledFigures& figures) {
  if (auto writer = RequireWriter("record settled figures"); !writer.ok()) return writer.error();
  return NoThrow("record settled figures", [&]() -> Result<SettleClaim> {
    SettleClaim claim;
    auto done = InWriteTransaction(*db_, [&]() -> Result<void> {
      auto recorded = RecordSqliteSettlement(*db_, ref, indexed_unix_nano, figures);
      if (!recorded.ok()) return recorded.error();
      claim = *recorded;
      return {};
    });
    if (!done.ok())
      return Error{done.error().code, fmt::format("settle in {}: {}", path_, done.error().message)};
    return claim;
  });
}

Result<std::uint64_t> SqliteSpanStore::BytesInUse() {
  auto page_count = db_->QueryInt64("PRAGMA page_count");
  if (!page_count.ok()) return page_count.error();
  auto free_pages = db_->QueryInt64("PRAGMA freelist_count");
  if (!free_pages.ok()) return free_pages.error();
  auto page_size = db_->QueryInt64("PRAGMA page_size");
  if (!page_size.ok()) return page_size.error();
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, *page_count - *free_pages)) *
         static_cast<std::uint64_t>(*page_size);
}

Result<SqliteSpanStore::Deleted> SqliteSpanStore::DeleteTraces(std::string_view selection,
                                                               std::int64_t parameter) {
  Deleted deleted;
  auto done = InWriteTransaction(*db_, [&]() -> Result<void> {
    auto doomed = SelectTraceIds(*db_, selection, parameter);
    if (!doomed.ok()) return doomed.error();
    if (auto forgotten = ForgetTracesInTaskIndex(*db_, *doomed); !forgotten.ok()) return forgotten.error();
    // Spans first: the selection reads the summary rows that the second statement deletes.
    for (const auto* table : {"spans", "traces"}) {
      auto stmt = db_->Prepare(fmt::format("DELETE FROM {} WHERE trace_id IN ({})", table, selection));
      if (!stmt.ok()) return stmt.error();
      stmt->BindInt64(1, parameter);
      if (auto ran = stmt->Run(); !ran.ok()) return ran.error();
      const auto changes = static_cast<std::size_t>(sqlite3_changes64(db_->handle()));
      (std::string_view(table) == "spans" ? deleted.spans : deleted.traces) = changes;
    }
    return {};
  });
  if (!done.ok()) return done.error();
  return deleted;
}

Result<RetentionStats> SqliteSpanStore::EnforceRetention(std::chrono::system_clock::time_point now) {
  if (auto writer = RequireWriter("enforce retention"); !writer.ok()) return writer.error();
  return NoThrow("enforce retention", [&]() -> Result<RetentionStats> {
    const auto fail = [this](const Error& error) {
      return Error{error.code, fmt::format("enforce retention on {}: {}", path_, error.message)};
    };
    RetentionStats stats;
    auto before = BytesInUse();
    if (!before.ok()) return fail(before.error());
    stats.bytes_before = *before;

    const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    const auto max_age_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.max_age).count();
    if (now_ns > max_age_ns) {
      auto aged = DeleteTraces("SELECT trace_id FROM traces WHERE end_unix_nano < ?1", now_ns - max_age_ns);
      if (!aged.ok()) return fail(aged.error());
      stats.traces_deleted_by_age = aged->traces;
      stats.spans_deleted += aged->spans;
    }

    // Pages freed by a delete are counted at once (freelist), so the loop sees its own progress.
    // Each round deletes about as many of the oldest traces as the excess would hold at the average
    // trace size; rows sharing pages with survivors free less than that, hence the loop.
    while (true) {
      auto used = BytesInUse();
      if (!used.ok()) return fail(used.error());
      if (*used <= options_.max_bytes) break;
      auto traces = db_->QueryInt64("SELECT count(*) FROM traces");
      if (!traces.ok()) return fail(traces.error());
      if (*traces == 0) break;  // what is left is the schema itself
      const std::uint64_t trace_count = static_cast<std::uint64_t>(*traces);
      const std::uint64_t average = std::max<std::uint64_t>(1, *used / trace_count);
      const std::uint64_t excess = *used - options_.max_bytes;
      const std::uint64_t batch = std::clamp<std::uint64_t>((excess + average - 1) / average, 1, trace_count);
      auto oldest = DeleteTraces("SELECT trace_id FROM traces ORDER BY end_unix_nano, trace_id LIMIT ?1",
                                 static_cast<std::int64_t>(batch));
      if (!oldest.ok()) return fail(oldest.error());
      if (oldest->traces == 0) break;
      stats.traces_deleted_by_size += oldest->traces;
      stats.spans_deleted += oldest->spans;
    }

    // incremental_vacuum moves the free pages to the end and truncates them away (in the WAL); the
    // checkpoint then copies that into the database file, which is when the file itself shrinks, and
    // TRUNCATE empties the WAL too. A reader still holding an old snapshot makes the checkpoint partial;
    // that is not an error, the next call finishes it.
    if (auto vacuumed = db_->Exec("PRAGMA incremental_vacuum"); !vacuumed.ok()) return fail(vacuumed.error());
    if (auto checkpointed = db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"); !checkpointed.ok()) {
      return fail(checkpointed.error());
    }
    auto page_count = db_->QueryInt64("PRAGMA page_count");
    if (!page_count.ok()) return fail(page_count.error());
    auto page_size = db_->QueryInt64("PRAGMA page_size");
    if (!page_size.ok()) return fail(page_size.error());
    stats.bytes_after = static_cast<std::uint64_t>(*page_count) * static_cast<std::uint64_t>(*page_size);
    return stats;
  });
}

}  // namespace sparktrace::tracing::store
