#include "tracing/store/sqlite/sqlite_span_store.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "tracing/span_vocabulary.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"
#include "tracing/store/sqlite/client/sqlite_transaction.h"
#include "tracing/store/sqlite/index/sqlite_attempt_list.h"
#include "tracing/store/sqlite/index/sqlite_index_reads.h"
#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"
#include "tracing/store/sqlite/rows/sqlite_attribute_sets.h"
#include "tracing/store/sqlite/rows/sqlite_new_summaries.h"
#include "tracing/store/sqlite/rows/sqlite_span_upserts.h"
#include "tracing/store/sqlite/sqlite_schema.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"
#include "tracing/store/sqlite/sqlite_task_index.h"
#include "tracing/store/sqlite/upkeep/sqlite_retention.h"
#include "tracing/store/sqlite/upkeep/sqlite_settlement.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {
namespace {

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

}  // namespace

SqliteSpanStore::SqliteSpanStore(ConstructionKey, std::string path, StoreOptions options,
                                 std::unique_ptr<SqliteConnection> db)
    : path_(std::move(path)),
      options_(options),
      db_(std::move(db)),
      attribute_sets_(std::make_unique<SqliteAttributeSets>(*db_)) {}

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
    if (auto configured = ConfigureSqlite(*store->db_, path, options); !configured.ok())
      return named(configured.error());
    if (auto migrated = MigrateSqlite(*store->db_, path, options.read_only); !migrated.ok())
      return named(migrated.error());
    if (auto prepared = store->PrepareStatements(); !prepared.ok()) return named(prepared.error());
    return store;
  });
}

Result<void> SqliteSpanStore::PrepareStatements() {
  auto get_trace =
      db_->Prepare(fmt::format("SELECT {} FROM spans WHERE trace_id = ?1 ORDER BY start_unix_nano, span_id",
                               kSpanReadColumns),
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
  auto upserts = SqliteSpanUpserts::Prepare(*db_);
  if (!upserts.ok()) return upserts.error();
  span_upserts_ = std::make_unique<SqliteSpanUpserts>(std::move(upserts).value());
  auto refresh = db_->Prepare(kRefreshSummarySql, /*persistent=*/true);
  if (!refresh.ok()) return refresh.error();
  refresh_summary_ = std::make_unique<SqliteStatement>(std::move(refresh).value());
  auto bounds = db_->Prepare("SELECT start_unix_nano, end_unix_nano FROM traces WHERE trace_id = ?1",
                             /*persistent=*/true);
  if (!bounds.ok()) return bounds.error();
  summary_bounds_ = std::make_unique<SqliteStatement>(std::move(bounds).value());
  auto add = db_->Prepare(kAddToSummarySql, /*persistent=*/true);
  if (!add.ok()) return add.error();
  add_to_summary_ = std::make_unique<SqliteStatement>(std::move(add).value());
  auto new_summaries = SqliteNewSummaries::Prepare(*db_);
  if (!new_summaries.ok()) return new_summaries.error();
  new_summaries_ = std::make_unique<SqliteNewSummaries>(std::move(new_summaries).value());

  return {};
}

Result<void> SqliteSpanStore::UpdateSummary(const std::string& trace_hex,
                                            const std::vector<SummaryBatchSpan>* batch) {
  std::optional<SummaryChange> change;
  if (batch != nullptr) {
    SqliteStatement& bounds = *summary_bounds_;
    bounds.Reset();
    BindIdHex(bounds, 1, trace_hex);
    auto row = bounds.Step();
    if (!row.ok()) return row.error();
    if (*row) change = SummaryIncrement(bounds.ColumnInt64(0), bounds.ColumnInt64(1), *batch);
    bounds.Reset();
  }
  if (!change) {
    SqliteStatement& refresh = *refresh_summary_;
    refresh.Reset();
    BindIdHex(refresh, 1, trace_hex);
    auto ran = refresh.Run();
    refresh.Reset();
    return ran;
  }
  SqliteStatement& add = *add_to_summary_;
  add.Reset();
  BindIdHex(add, 1, trace_hex);
  add.BindInt64(2, change->end_unix_nano);
  add.BindInt64(3, change->spans_added);
  add.BindInt64(4, change->errors_added);
  const auto text = [&add](int index, const std::optional<std::string>& value) {
    if (value) {
      add.BindText(index, *value);
    } else {
      add.BindNull(index);
    }
  };
  text(5, change->dag_id);
  text(6, change->task_id);
  text(7, change->run_id);
  if (change->try_number) {
    add.BindInt64(8, *change->try_number);
  } else {
    add.BindNull(8);
  }
  auto ran = add.Run();
  add.Reset();
  return ran;
}

Result<void> SqliteSpanStore::RequireWriter(std::string_view operation) const {
  if (options_.read_only) {
    return InvalidArgument(fmt::format("{}: {} was opened read-only", operation, path_));
  }
  return {};
}

Result<WriteStats> SqliteSpanStore::Write(std::span<const Span> spans) {
  if (auto writer = RequireWriter("write spans"); !writer.ok()) return writer.error();
  auto written = NoThrow("write spans", [&] { return WriteBatch(spans); });
  // The sets the failed transaction numbered are gone with it (also when an exception unwound it).
  if (!written.ok()) attribute_sets_->ForgetNumbers();
  return written;
}

Result<WriteStats> SqliteSpanStore::WriteBatch(std::span<const Span> spans) {
  WriteStats stats;
  StoredBatch batch = ToStoredBatch(spans, AttributeEncoding::kLater);
  const std::vector<StoredSpanRow>& rows = batch.rows;
  const std::vector<const Span*>& sources = batch.sources;
  stats.spans_rejected = batch.rejected;
  const BatchTraces traces = GroupByTrace(rows);

  auto written = InWriteTransaction(*db_, [&]() -> Result<void> {
    // The write's time is taken once the transaction holds the lock: retention, in its own, decides by it.
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    if (auto encoded = attribute_sets_->EncodeRows(batch.rows, batch.sources, now.count()); !encoded.ok())
      return encoded.error();
    // A trace the batch creates is summarised and indexed from the batch itself: its summary row,
    // computed from the batch, goes in first, and whether it went in (no row for the trace yet) is
    // what tells a new trace. One that has stored spans already is updated from the batch and the
    // stored versions of its spans (UpdateSummary, UpdateTaskIndex).
    std::vector<std::vector<IndexSpan>> index_spans_of;
    std::vector<std::optional<std::string>> awaited_of;  // sized once: the summaries point into it
    std::vector<NewSummary> summaries;
    index_spans_of.reserve(traces.size());
    awaited_of.reserve(traces.size());
    summaries.reserve(traces.size());
    for (const auto& [trace_hex, versions] : traces) {
      std::vector<IndexSpan>& index_spans = index_spans_of.emplace_back();
      index_spans.reserve(versions.size());
      for (const auto& [span_hex, i] : versions) index_spans.push_back(IndexSpanOf(*sources[i], rows[i]));
      // A new trace's awaited parents come with its summary, so that its next batch is incremental too.
      awaited_of.push_back(task_index::AwaitedParentsText(task_index::AwaitedParentsOf(index_spans)));
      NewSummary& summary = summaries.emplace_back();
      summary.trace_id = IdBytes(sources[versions.begin()->second]->trace_id);
      summary.row = SummarizeTrace(rows, versions);
      summary.awaited_parents = &awaited_of.back();
      summary.holds_attempt = task_index::NewTraceSummaryHoldsAttempt(index_spans, summary.row);
    }
    std::vector<bool> is_new(summaries.size(), true);
    if (auto marked = new_summaries_->MarkStored(summaries, is_new); !marked.ok()) return marked.error();
    // A new trace's parts (none for one whose summary holds its attempt): its summary may hold the one
    // (index/sqlite_summary_attempts.h), which then gets no row.
    PartsByTrace created;
    std::map<std::string, std::vector<IndexSpan>> existing;
    std::set<std::string> held_parts;
    std::size_t at_trace = 0;
    for (const auto& [trace_hex, versions] : traces) {
      const std::size_t at = at_trace++;
      NewSummary& summary = summaries[at];
      std::vector<IndexSpan>& index_spans = index_spans_of[at];
      if (!is_new[at]) {
        existing.emplace(trace_hex, std::move(index_spans));
        continue;
      }
      if (summary.holds_attempt) continue;
      std::string trace_id(trace_hex);
      std::map<PartKey, Part> parts = PartsOfTrace(trace_id, index_spans);
      summary.held_part_map_index = task_index::MapIndexOfHeldPart(parts, summary.row);
      if (summary.held_part_map_index) held_parts.insert(trace_id);
      created.emplace(std::move(trace_id), std::move(parts));
    }
    if (auto inserted = new_summaries_->InsertNew(summaries, is_new); !inserted.ok()) return inserted.error();

    // The stored versions of the spans a batch writes to existing traces, read before the upsert
    // replaces them: what the summary and the task index take back out of a trace for a new version.
    // An Airflow task span sent again may be kept by the upsert rather than replaced (span_table_sql.h's
    // SpanReplacesStoredSql): its trace is read back after the upsert, which decides.
    task_index::BatchOfTraces index_batch;
    std::map<std::string, std::vector<SummaryBatchSpan>> summary_batch;
    std::vector<std::string> reread;
    for (auto& [trace_hex, now_spans] : existing) {
      std::vector<task_index::BatchSpan> index_spans;
      std::vector<SummaryBatchSpan> summary_spans;
      std::size_t at = 0;
      bool upsert_decides = false;
      const BatchSpans& versions = traces.at(trace_hex);
      std::vector<std::string_view> span_ids;
      span_ids.reserve(versions.size());
      for (const auto& [span_hex, i] : versions) span_ids.push_back(IdBytes(sources[i]->span_id));
      auto stored = ReadStoredVersions(*db_, IdBytes(sources[versions.begin()->second]->trace_id), span_ids);
      if (!stored.ok()) return stored.error();
      for (const auto& [span_hex, i] : versions) {
        const auto before = stored->find(span_hex);
        if (before != stored->end() && rows[i].name == tracing::kAirflowTaskSpanName) {
          upsert_decides = true;
          break;
        }
        task_index::BatchSpan& index_span = index_spans.emplace_back();
        index_span.now = std::move(now_spans[at++]);
        SummaryBatchSpan& summary_span = summary_spans.emplace_back();
        summary_span.now = SummarySpanOf(rows[i]);
        if (before != stored->end()) {
          index_span.before = std::move(before->second.index);
          summary_span.before = std::move(before->second.summary);
        }
      }
      if (upsert_decides) {
        reread.push_back(trace_hex);
        continue;
      }
      index_batch.emplace(trace_hex, std::move(index_spans));
      summary_batch.emplace(trace_hex, std::move(summary_spans));
    }

    // A part a changing summary holds becomes a row first: the index reads it back as it was.
    if (auto released = ReleaseHeldParts(*db_, existing); !released.ok()) return released.error();

    // Many to a statement, in key order (rows/sqlite_span_upserts.h).
    auto upserted = span_upserts_->Upsert(rows, sources);
    if (!upserted.ok()) return upserted.error();
    stats.spans_written += *upserted;

    for (const auto& [trace_hex, summary_spans] : summary_batch) {
      if (auto summarised = UpdateSummary(trace_hex, &summary_spans); !summarised.ok())
        return summarised.error();
    }
    for (const std::string& trace_hex : reread) {
      if (auto summarised = UpdateSummary(trace_hex, nullptr); !summarised.ok()) return summarised.error();
    }
    if (auto indexed = IndexNewTraces(*db_, created, held_parts); !indexed.ok()) return indexed.error();
    if (auto updated = UpdateTaskIndex(*db_, index_batch); !updated.ok()) return updated.error();
    return RefreshTaskIndex(*db_, reread);
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
    std::string sql = fmt::format("SELECT {} FROM traces WHERE 1", kSummaryReadColumns);
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
    BindIdHex(stmt, 1, trace_hex);
    std::vector<Span> spans;
    while (true) {
      auto row = stmt.Step();
      if (!row.ok()) {
        stmt.Reset();
        return Error{row.error().code,
                     fmt::format("read trace {} from {}: {}", trace_hex, path_, row.error().message)};
      }
      if (!*row) break;
      auto span = SpanFromRow(stmt, *attribute_sets_);
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

Result<std::vector<Span>> SqliteSpanStore::GetTraces(std::span<const TraceId> trace_ids) {
  return NoThrow("get traces", [&]() -> Result<std::vector<Span>> {
    if (trace_ids.empty()) return std::vector<Span>{};
    // One statement for any number of traces: the ids travel as one JSON array (hex only, nothing
    // to escape), and each is looked up, as a BLOB, through the (trace_id, span_id) key.
    std::string ids = "[";
    for (const TraceId& trace_id : trace_ids) {
      if (ids.size() > 1) ids += ',';
      ids += '"' + ToHex(trace_id) + '"';
    }
    ids += ']';
    auto stmt = db_->Prepare(fmt::format(
        "SELECT {} FROM spans WHERE trace_id IN (SELECT sparktrace_unhex(value) FROM json_each(?1)) "
        "ORDER BY trace_id, start_unix_nano, span_id",
        kSpanReadColumns));
    if (!stmt.ok()) return stmt.error();
    stmt->BindText(1, ids);
    std::vector<Span> spans;
    while (true) {
      auto row = stmt->Step();
      if (!row.ok()) {
        return Error{row.error().code,
                     fmt::format("read {} traces from {}: {}", trace_ids.size(), path_, row.error().message)};
      }
      if (!*row) break;
      auto span = SpanFromRow(*stmt, *attribute_sets_);
      if (!span.ok()) return span.error();
      spans.push_back(std::move(span).value());
    }
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
    const bool parsed = TraceIdOfColumn(stmt, 0, trace_id);
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

Result<RetentionStats> SqliteSpanStore::EnforceRetention(std::chrono::system_clock::time_point now) {
  if (auto writer = RequireWriter("enforce retention"); !writer.ok()) return writer.error();
  return NoThrow("enforce retention",
                 [&] { return EnforceSqliteRetention(*db_, *attribute_sets_, path_, options_, now); });
}

}  // namespace sparktrace::tracing::store
