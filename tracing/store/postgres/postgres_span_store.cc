#include "tracing/store/postgres/postgres_span_store.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/held/postgres_held_parts.h"
#include "tracing/store/postgres/index/postgres_attempt_list.h"
#include "tracing/store/postgres/index/postgres_batch_increment.h"
#include "tracing/store/postgres/index/postgres_index_reads.h"
#include "tracing/store/postgres/postgres_batch_copy.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/postgres/postgres_task_index.h"
#include "tracing/store/postgres/rows/postgres_attribute_sets.h"
#include "tracing/store/postgres/upkeep/postgres_settlement.h"
#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {
namespace {

// kSummaryReadColumns (span_rows/span_table_sql.h) with the trace id as hex.
const std::string kTraceSummaryReadColumns = TraceHexSql("trace_id") +
                                             ", root_name, start_unix_nano, end_unix_nano, span_count, "
                                             "error_count, dag_id, task_id, run_id, try_number";

constexpr std::string_view kUniqueViolation = "23505";  // SQLSTATE

// Rolls an open transaction back unless dismissed after COMMIT (also when a later step fails).
class Transaction {
 public:
  explicit Transaction(PgConnection& db) : db_(db) {}
  Result<void> Begin() {
    auto begun = db_.Exec("BEGIN");
    if (!begun.ok()) return begun.error();
    open_ = true;
    return {};
  }
  Result<void> Commit() {
    auto committed = db_.Exec("COMMIT");
    open_ = false;
    if (!committed.ok()) return committed.error();
    return {};
  }
  ~Transaction() {
    if (open_ && !db_.broken()) (void)db_.Exec("ROLLBACK");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  PgConnection& db_;
  bool open_ = false;
};

// `trace_ids`: a text[] literal of hex ids (TextArray).
Result<void> LockTraces(PgConnection& db, const std::string& trace_ids) {
  auto locked =
      db.Query(fmt::format("SELECT pg_advisory_xact_lock({}, h) FROM (SELECT DISTINCT hashtext(t) AS h "
                           "FROM unnest($1::text[]) t ORDER BY 1) ordered",
                           kLockClassTrace),
               {trace_ids});
  if (!locked.ok()) return locked.error();
  return {};
}

Result<TraceSummary> SummaryFrom(const PgResult& result, int row) {
  TraceSummary summary;
  if (!ParseTraceHex(result.Text(row, 0), summary.trace_id)) {
    return Error{ErrorCode::kInternal,
                 fmt::format("malformed trace id in trace summary: {}", result.Text(row, 0))};
  }
  summary.root_name = NameOfStored(result.Text(row, 1));
  summary.start_time_unix_nano = FromSql(result.Int64(row, 2));
  summary.end_time_unix_nano = FromSql(result.Int64(row, 3));
  summary.span_count = FromSql(result.Int64(row, 4));
  summary.error_count = FromSql(result.Int64(row, 5));
  summary.dag_id = std::string(result.Text(row, 6));
  summary.task_id = std::string(result.Text(row, 7));
  summary.run_id = std::string(result.Text(row, 8));
  if (!result.IsNull(row, 9)) summary.try_number = result.Int64(row, 9);
  return summary;
}

// The API promises that no exception escapes; libpq never throws, so this only catches what is
// left (std::bad_alloc).
template <typename Function>
auto NoThrow(std::string_view what, Function&& function) -> decltype(function()) {
  try {
    return function();
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInternal, fmt::format("{}: {}", what, e.what())};
  }
}

}  // namespace

PostgresSpanStore::PostgresSpanStore(PgConnection db, std::string display, StoreOptions options)
    : db_(std::move(db)),
      display_(std::move(display)),
      options_(options),
      attribute_sets_(std::make_unique<PostgresAttributeSets>()) {}

PostgresSpanStore::~PostgresSpanStore() = default;

Result<std::unique_ptr<PostgresSpanStore>> PostgresSpanStore::Open(const StoreLocation& location,
                                                                   const StoreOptions& options) {
  return NoThrow("open " + location.display, [&]() -> Result<std::unique_ptr<PostgresSpanStore>> {
    PgConnectOptions connect;
    connect.connect_timeout = options.busy_timeout;
    connect.lock_timeout = options.busy_timeout;
    connect.read_only = options.read_only;
    auto db = PgConnection::Connect(location.target, location.display, connect);
    if (!db.ok()) return db.error();
    if (auto migrated = MigratePostgres(*db, location.display, options.read_only); !migrated.ok()) {
      return migrated.error();
    }
    return std::make_unique<PostgresSpanStore>(std::move(*db), location.display, options);
  });
}

Error PostgresSpanStore::Named(const Error& error, std::string_view what) const {
  if (error.message.find(display_) != std::string::npos) return error;
  return Error{error.code, fmt::format("{} on {}: {}", what, display_, error.message)};
}

Result<WriteStats> PostgresSpanStore::Write(std::span<const Span> spans) {
  if (options_.read_only)
    return InvalidArgument(fmt::format("write spans: {} was opened read-only", display_));
  return NoThrow("write spans", [&] { return WriteBatch(spans); });
}

Result<WriteStats> PostgresSpanStore::WriteBatch(std::span<const Span> spans) {
  bool conflicted = false;
  auto written = WriteBatchAs(spans, NewTraces::kCopied, conflicted);
  if (written.ok() || !conflicted) return written;
  // A trace without a summary row had stored spans: rows written around sparktrace (by hand, or by a
  // partial restore). The upserts take such a batch, and leave the trace with its summary row.
  return WriteBatchAs(spans, NewTraces::kMerged, conflicted);
}

Result<WriteStats> PostgresSpanStore::WriteBatchAs(std::span<const Span> spans, NewTraces new_traces,
                                                   bool& conflicted) {
  WriteStats stats;
  StoredBatch batch = ToStoredBatch(spans, AttributeEncoding::kLater);
  const std::vector<StoredSpanRow>& rows = batch.rows;
  stats.spans_rejected = batch.rejected;
  stats.spans_written = rows.size();
  const BatchTraces traces = GroupByTrace(rows);
  stats.traces_touched = traces.size();
  if (traces.empty()) return stats;
  std::vector<std::string> touched;
  touched.reserve(traces.size());
  for (const auto& [trace_hex, versions] : traces) touched.emplace_back(trace_hex);

  const auto fail = [&](const Error& error) {
    return Named(error, fmt::format("write {} spans", spans.size()));
  };
  if (!incoming_tables_ready_) {
    if (auto created = db_.Exec(kIncomingTablesSql); !created.ok()) return fail(created.error());
    incoming_tables_ready_ = true;
  }
  // Before the transaction (rows/postgres_attribute_sets.h says why).
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  if (auto encoded = attribute_sets_->EncodeRows(db_, batch.rows, batch.sources, now.count());
      !encoded.ok()) {
    return fail(encoded.error());
  }
  Transaction transaction(db_);
  if (auto begun = transaction.Begin(); !begun.ok()) return fail(begun.error());
  auto version = PostgresSchemaVersion(db_);
  if (!version.ok()) return fail(version.error());
  if (*version != kPostgresSchemaVersion) {
    return InvalidArgument(
        fmt::format("{} now holds trace schema version {}, this sparktrace writes {}: not writing", display_,
                    *version, kPostgresSchemaVersion));
  }
  const std::string touched_ids = TextArray(touched);
  if (auto locked = LockTraces(db_, touched_ids); !locked.ok()) return fail(locked.error());
  // A trace the batch creates is summarised and indexed from the batch itself: its summary row goes
  // in only where the trace has none.
  std::map<std::string, std::vector<IndexSpan>> index_spans = IndexSpansByTrace(batch, traces);
  std::map<std::string, std::optional<std::string>> awaited;
  for (const auto& [trace_hex, trace_spans] : index_spans)
    awaited.emplace(trace_hex, NewTraceAwaitedParents(trace_spans));
  NewSummaryClaims claims;                    // what the new summaries hold of the task index
  std::set<std::string, std::less<>> stored;  // traces with a summary row already
  if (new_traces == NewTraces::kCopied) {
    // Under the locks, a trace without a summary row has no stored span either (a trace's summary and
    // spans are written and deleted together, under its lock): the batch's summaries and spans of
    // those go straight into their tables, without the temporary tables and the upserts' speculative
    // inserts, which took two thirds of the server's time for a call per trace.
    static const std::string found_sql = fmt::format("SELECT {} FROM traces WHERE trace_id = ANY({})",
                                                     TraceHexSql("trace_id"), IdsFromHexSql("$1"));
    auto found = db_.Query(found_sql, {touched_ids});
    if (!found.ok()) return fail(found.error());
    for (int row = 0; row < found->rows(); ++row) stored.emplace(found->Text(row, 0));
    const TraceChoice created_ones{&stored, false};
    if (stored.size() < traces.size()) {
      if (auto copied = db_.CopyIn(fmt::format("COPY traces ({}) FROM STDIN", kSummaryCopyColumns),
                                   SummaryCopy(batch, traces, awaited, index_spans, claims, created_ones));
          !copied.ok()) {
        return fail(copied.error());
      }
      if (auto copied = db_.CopyIn(fmt::format("COPY spans ({}) FROM STDIN", kPostgresSpanWriteColumns),
                                   SpanCopy(batch, traces, created_ones));
          !copied.ok()) {
        conflicted = db_.last_sqlstate() == kUniqueViolation;
        return fail(copied.error());
      }
    }
  } else {
    if (auto copied = db_.CopyIn(fmt::format("COPY incoming_traces ({}) FROM STDIN", kSummaryCopyColumns),
                                 SummaryCopy(batch, traces, awaited, index_spans, claims));
        !copied.ok()) {
      return fail(copied.error());
    }
    auto inserted = db_.Exec(kInsertNewSummariesSql);  // RETURNING names the traces it created
    if (!inserted.ok()) return fail(inserted.error());
    for (const auto& [trace_hex, versions] : traces) stored.emplace(trace_hex);
    for (int row = 0; row < inserted->rows(); ++row) stored.erase(std::string(inserted->Text(row, 0)));
  }
  // The traces the batch created, by their parts (one whose summary holds its attempt has none), and
  // what is left of index_spans: the traces stored already.
  PartsByTrace created;
  for (auto trace_spans = index_spans.begin(); trace_spans != index_spans.end();) {
    if (stored.contains(trace_spans->first)) {
      ++trace_spans;
      continue;
    }
    if (auto parts = claims.parts.extract(trace_spans->first); !parts.empty())
      created.insert(std::move(parts));
    trace_spans = index_spans.erase(trace_spans);
  }
  // A trace with stored spans already: what its summary and index take back out of it for a span's
  // new version is that span's stored version, read (with the stored spans above the batch's, which
  // the index's update walks up to) before the upsert replaces it.
  std::map<std::string, std::vector<std::string>> read_before;
  for (const auto& [trace_hex, versions] : traces) {
    if (!stored.contains(trace_hex)) continue;  // created: its spans are all the batch's
    std::vector<std::string>& ids = read_before[std::string(trace_hex)];
    for (const auto& [span_hex, i] : versions) {
      ids.emplace_back(span_hex);
      if (rows[i].parent_span_id) ids.push_back(*rows[i].parent_span_id);
    }
  }
  auto before = ReadStoredBeforeBatch(db_, read_before);
  if (!before.ok()) return fail(before.error());
  // The spans to merge: those of traces stored already, or every span of a batch that copies none.
  const TraceChoice merged_ones =
      new_traces == NewTraces::kCopied ? TraceChoice{&stored, true} : TraceChoice{};
  if (new_traces == NewTraces::kMerged || !stored.empty()) {
    if (auto copied =
            db_.CopyIn(fmt::format("COPY incoming_spans ({}) FROM STDIN", kPostgresSpanWriteColumns),
                       SpanCopy(batch, traces, merged_ones));
        !copied.ok()) {
      return fail(copied.error());
    }
    if (auto merged = db_.Exec(kMergeSql); !merged.ok()) return fail(merged.error());
  }
  const ExistingTraceBatch existing = ExistingTraceBatchOf(batch, traces, index_spans, read_before, *before);
  // A part a changing summary holds becomes a row first: the index reads it back as it was.
  if (auto released = ReleasePostgresHeldParts(db_, before->holding_parts); !released.ok())
    return fail(released.error());
  if (auto summarised = UpdateSummaries(db_, existing, before->bounds); !summarised.ok())
    return fail(summarised.error());
  if (auto indexed = IndexNewPostgresTraces(db_, created, claims.holding_parts); !indexed.ok())
    return fail(indexed.error());
  if (auto indexed = UpdatePostgresTaskIndex(db_, existing.index, before->ancestors); !indexed.ok())
    return fail(indexed.error());
  if (auto committed = transaction.Commit(); !committed.ok()) return fail(committed.error());
  return stats;
}

Result<std::vector<TraceSummary>> PostgresSpanStore::ListTraces(const TraceFilter& filter) {
  return NoThrow("list traces", [&]() -> Result<std::vector<TraceSummary>> {
    std::vector<PgParam> params;
    const auto next = [&params](std::string value) {
      params.emplace_back(std::move(value));
      return fmt::format("${}", params.size());
    };
    std::string sql = fmt::format("SELECT {} FROM traces WHERE true", kTraceSummaryReadColumns);
    if (filter.dag_id) sql += " AND dag_id = " + next(*filter.dag_id);
    if (filter.task_id) sql += " AND task_id = " + next(*filter.task_id);
    if (filter.run_id) sql += " AND run_id = " + next(*filter.run_id);
    if (filter.since_unix_nano != 0)
      sql += " AND start_unix_nano >= " + next(std::to_string(ToSql(filter.since_unix_nano))) + "::bigint";
    sql += " ORDER BY start_unix_nano DESC, trace_id DESC";
    if (filter.limit != 0) sql += " LIMIT " + next(std::to_string(filter.limit)) + "::bigint";
    auto result = db_.Query(sql, params);
    if (!result.ok()) return Named(result.error(), "list traces");
    std::vector<TraceSummary> summaries;
    for (int row = 0; row < result->rows(); ++row) {
      auto summary = SummaryFrom(*result, row);
      if (!summary.ok()) return summary.error();
      summaries.push_back(std::move(summary).value());
    }
    return summaries;
  });
}

Result<std::vector<Span>> PostgresSpanStore::GetTrace(const TraceId& trace_id) {
  return NoThrow("get trace", [&]() -> Result<std::vector<Span>> {
    const std::string trace_hex = ToHex(trace_id);
    auto result =
        db_.Query(fmt::format("SELECT {} FROM {} WHERE trace_id = {} ORDER BY start_unix_nano, span_id",
                              kPostgresSpanReadColumns, kPostgresSpansWithSets, TraceIdOfHexSql("$1")),
                  {trace_hex});
    if (!result.ok()) return Named(result.error(), "read trace " + trace_hex);
    auto spans = SpansOfResult(*result);
    if (!spans.ok()) return spans.error();
    if (spans->empty())
      return Error{ErrorCode::kNotFound, fmt::format("no trace {} in {}", trace_hex, display_)};
    return spans;
  });
}

Result<std::vector<Span>> PostgresSpanStore::GetTraces(std::span<const TraceId> trace_ids) {
  return NoThrow("get traces", [&]() -> Result<std::vector<Span>> {
    if (trace_ids.empty()) return std::vector<Span>{};
    // One statement for any number of traces: the ids travel as one array literal (hex only, nothing
    // to quote), and each is looked up through the (trace_id, span_id) key.
    std::string ids = "{";
    for (const TraceId& trace_id : trace_ids) {
      if (ids.size() > 1) ids += ',';
      ids += ToHex(trace_id);
    }
    ids += '}';
    auto result =
        db_.Query(fmt::format("SELECT {} FROM {} WHERE trace_id = ANY({}) "
                              "ORDER BY trace_id, start_unix_nano, span_id",
                              kPostgresSpanReadColumns, kPostgresSpansWithSets, IdsFromHexSql("$1")),
                  {ids});
    if (!result.ok()) return Named(result.error(), fmt::format("read {} traces", trace_ids.size()));
    return SpansOfResult(*result);
  });
}

Result<TraceId> PostgresSpanStore::FindTraceByOperation(std::string_view operation_id) {
  return NoThrow("find trace by operation", [&]() -> Result<TraceId> {
    static const std::string sql = fmt::format(
        "SELECT {} FROM spans WHERE operation_id = $1 ORDER BY start_unix_nano DESC, trace_id DESC LIMIT 1",
        TraceHexSql("trace_id"));
    auto result = db_.Query(sql, {std::string(operation_id)});
    if (!result.ok()) return Named(result.error(), fmt::format("find operation {}", operation_id));
    if (result->rows() == 0) {
      return Error{ErrorCode::kNotFound,
                   fmt::format("no trace has operation {} in {}", operation_id, display_)};
    }
    TraceId trace_id{};
    if (!ParseTraceHex(result->Text(0, 0), trace_id)) {
      return Error{ErrorCode::kInternal,
                   fmt::format("malformed trace id stored for operation {}", operation_id)};
    }
    return trace_id;
  });
}

Result<TaskAttemptPage> PostgresSpanStore::ListTaskAttempts(const TaskAttemptFilter& filter) {
  return NoThrow("list task attempts", [&]() -> Result<TaskAttemptPage> {
    auto page = ListPostgresTaskAttempts(db_, filter);
    if (!page.ok()) return Named(page.error(), "list tasks");
    return page;
  });
}

Result<std::vector<std::string>> PostgresSpanStore::TracesMatching(std::string_view text) {
  return NoThrow("search traces", [&]() -> Result<std::vector<std::string>> {
    auto traces = PostgresTracesMatching(db_, text);
    if (!traces.ok()) return Named(traces.error(), "search");
    return traces;
  });
}

Result<DueAttempts> PostgresSpanStore::ListDueAttempts(std::chrono::system_clock::time_point now,
                                                       std::chrono::milliseconds quiet, std::size_t limit) {
  return NoThrow("list attempts due for settling", [&]() -> Result<DueAttempts> {
    auto due = ListPostgresDueAttempts(db_, now, quiet, limit);
    if (!due.ok()) return Named(due.error(), "list unsettled attempts");
    return due;
  });
}

Result<SettleClaim> PostgresSpanStore::RecordSettlement(const AttemptRef& ref,
                                                        std::uint64_t indexed_unix_nano,
                                                        const SettledFigures& figures) {
  if (options_.read_only)
    return InvalidArgument(fmt::format("record settled figures: {} was opened read-only", display_));
  return NoThrow("record settled figures", [&]() -> Result<SettleClaim> {
    auto claim = RecordPostgresSettlement(db_, ref, indexed_unix_nano, figures);
    if (!claim.ok()) return Named(claim.error(), "settle");
    return claim;
  });
}

Result<std::size_t> PostgresSpanStore::DeleteTraces(const std::vector<std::string>& trace_ids) {
  Transaction transaction(db_);
  if (auto begun = transaction.Begin(); !begun.ok()) return begun.error();
  if (auto locked = LockTraces(db_, TextArray(trace_ids)); !locked.ok()) return locked.error();
  if (auto forgotten = ForgetTracesInPostgresTaskIndex(db_, trace_ids); !forgotten.ok())
    return forgotten.error();
  auto spans = db_.Query(fmt::format("WITH gone AS (DELETE FROM spans WHERE trace_id = ANY({}) RETURNING 1) "
                                     "SELECT count(*) FROM gone",
                                     IdsFromHexSql("$1")),
                         {TextArray(trace_ids)});
  if (!spans.ok()) return spans.error();
  if (auto summaries = db_.Query("DELETE FROM traces WHERE trace_id = ANY(" + IdsFromHexSql("$1") + ")",
                                 {TextArray(trace_ids)});
      !summaries.ok()) {
    return summaries.error();
  }
  if (auto committed = transaction.Commit(); !committed.ok()) return committed.error();
  return static_cast<std::size_t>(spans->Int64(0, 0));
}

Result<std::uint64_t> PostgresSpanStore::BytesInUse() {
  auto bytes = db_.Exec("SELECT coalesce(sum(approx_bytes), 0) FROM traces");
  if (!bytes.ok()) return bytes.error();
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, bytes->Int64(0, 0)));
}

Result<RetentionStats> PostgresSpanStore::EnforceRetention(std::chrono::system_clock::time_point now) {
  if (options_.read_only)
    return InvalidArgument(fmt::format("enforce retention: {} was opened read-only", display_));
  return NoThrow("enforce retention", [&]() -> Result<RetentionStats> {
    const auto fail = [this](const Error& error) { return Named(error, "enforce retention"); };
    // Small batches keep each transaction (and its locks) short while proxies keep writing.
    constexpr std::int64_t kBatchTraces = 500;
    RetentionStats stats;
    auto before = BytesInUse();
    if (!before.ok()) return fail(before.error());
    stats.bytes_before = *before;

    const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    const auto max_age_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.max_age).count();
    const auto delete_selected = [&](std::string_view sql, const std::vector<PgParam>& params,
                                     std::size_t& traces_counter) -> Result<bool> {
      auto selected = db_.Query(sql, params);
      if (!selected.ok()) return selected.error();
      if (selected->rows() == 0) return false;
      std::vector<std::string> ids;
      ids.reserve(static_cast<std::size_t>(selected->rows()));
      for (int row = 0; row < selected->rows(); ++row) ids.emplace_back(selected->Text(row, 0));
      auto spans = DeleteTraces(ids);
      if (!spans.ok()) return spans.error();
      traces_counter += ids.size();
      stats.spans_deleted += *spans;
      return true;
    };
    if (now_ns > max_age_ns) {
      while (true) {
        static const std::string aged_sql =
            fmt::format("SELECT {} FROM ({}) aged LIMIT $2::bigint", TraceHexSql("trace_id"),
                        TracesEndedBeforeSql("$1::bigint"));
        auto more =
            delete_selected(aged_sql, {std::to_string(now_ns - max_age_ns), std::to_string(kBatchTraces)},
                            stats.traces_deleted_by_age);
        if (!more.ok()) return fail(more.error());
        if (!*more) break;
      }
    }
    while (true) {
      auto used = BytesInUse();
      if (!used.ok()) return fail(used.error());
      stats.bytes_after = *used;
      if (*used <= options_.max_bytes) break;
      // About as many of the oldest traces as the excess holds at the average trace size.
      auto count = db_.Exec("SELECT count(*) FROM traces");
      if (!count.ok()) return fail(count.error());
      const auto traces = static_cast<std::uint64_t>(std::max<std::int64_t>(1, count->Int64(0, 0)));
      const std::uint64_t average = std::max<std::uint64_t>(1, *used / traces);
      const std::uint64_t batch = std::clamp<std::uint64_t>(
          (*used - options_.max_bytes + average - 1) / average, 1, static_cast<std::uint64_t>(kBatchTraces));
      static const std::string oldest_sql = fmt::format("SELECT {} FROM ({}) oldest", TraceHexSql("trace_id"),
                                                        TracesEndedFirstSql("$1::bigint"));
      auto more = delete_selected(oldest_sql, {std::to_string(batch)}, stats.traces_deleted_by_size);
      if (!more.ok()) return fail(more.error());
      if (!*more) break;
    }
    // Then the attribute sets no stored span names and no writer may name from its cache.
    auto removed = RemoveUnnamedPostgresAttributeSets(db_, now_ns);
    if (!removed.ok()) return fail(removed.error());
    if (*removed > 0) attribute_sets_->ForgetNumbers();
    return stats;
  });
}

}  // namespace sparktrace::tracing::store