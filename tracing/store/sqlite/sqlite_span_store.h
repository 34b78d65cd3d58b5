#pragma once
// SqliteSpanStore: the embedded trace database behind `sparktrace traces list/show` and the trace view.
// Spans are kept one row each (attributes compact, events as JSON), with a per-trace summary row maintained
// on every write so that listing never scans spans, and columns extracted from the well-known
// attributes (tracing/span_vocabulary.h) for lookup by operation and by Airflow task.
//
// Threads and processes:
// - A store object is used by one thread at a time (it may be handed between threads); its methods are
//   not safe to call concurrently.
// - One writer object per process: the SQLite exporter opens it and calls Write() and
//   EnforceRetention() from its single exporter thread, never from the data path.
// - Readers (the CLI in another process, the admin HTTP thread) open their own object with
//   `read_only = true`. The database runs in WAL mode, so readers see the last committed batch and
//   neither block nor are blocked by the writer.
// - Writers in several processes on one file are safe (SQLite locks) but contend; waits are bounded
//   by `busy_timeout`, after which the call fails with kUnavailable.
//
// Errors: no exception leaves this class. Every SQLite failure becomes a Result error whose message
// carries SQLite's (and for file errors the OS's) reason; file problems are kIo, lock timeouts
// kUnavailable, an absent trace or operation kNotFound.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/increment/summary_increment.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {

// Kept out of this header so that its users (the CLI, the admin server) do not see <sqlite3.h>.
class SqliteConnection;
class SqliteStatement;
class SqliteAttributeSets;
class SqliteNewSummaries;
class SqliteSpanUpserts;

class SqliteSpanStore final : public SpanStore {
 public:
  // The schema version this build writes (PRAGMA user_version). Older databases are migrated by a
  // writer's Open; newer ones are refused.
  static constexpr std::int64_t kSchemaVersion = 18;

  // Opens (a writer creates the file, its parent directories and the schema; a reader requires an
  // existing, current database). Fails with a clear error for an unwritable or corrupt path, a file
  // that is not a sparktrace database, or a schema newer than kSchemaVersion.
  static Result<std::unique_ptr<SqliteSpanStore>> Open(const std::string& path,
                                                       const StoreOptions& options = {});

  // Stores a batch in one transaction: all of it or, on error, none. A span whose (trace id, span id)
  // is already stored replaces it (late updates), and the summaries of the touched traces are
  // recomputed. Writer thread only.
  Result<WriteStats> Write(std::span<const Span> spans) override;

  // Summaries matching `filter`, newest (latest start) first.
  Result<std::vector<TraceSummary>> ListTraces(const TraceFilter& filter) override;
  // All spans of a trace ordered by start time (then span id); kNotFound when it has none.
  Result<std::vector<Span>> GetTrace(const TraceId& trace_id) override;
  Result<std::vector<Span>> GetTraces(std::span<const TraceId> trace_ids) override;
  // The trace holding a span with this spark.connect.operation_id (the newest one if several do);
  // kNotFound when none does.
  Result<TraceId> FindTraceByOperation(std::string_view operation_id) override;

  // Airflow task attempts (and traces without Airflow identity), newest first, one page; the task
  // index is kept up to date by Write() and retention (tracing/store/sqlite/sqlite_task_index.h).
  Result<TaskAttemptPage> ListTaskAttempts(const TaskAttemptFilter& filter) override;
  // Trace ids (hex) that a search text names: a trace id, an operation id or a Spark application id.
  Result<std::vector<std::string>> TracesMatching(std::string_view text) override;
  // Settling (span_store.h); the figures live on the task index's rows (sqlite_settlement.h).
  Result<DueAttempts> ListDueAttempts(std::chrono::system_clock::time_point now,
                                      std::chrono::milliseconds quiet, std::size_t limit) override;
  Result<SettleClaim> RecordSettlement(const AttemptRef& ref, std::uint64_t indexed_unix_nano,
                                       const SettledFigures& figures) override;

  // Deletes whole traces: those whose last span ended before `now - max_age`, then, while the pages in
  // use exceed max_bytes, the traces that ended longest ago. Then gives the freed pages back to the file
  // system (incremental vacuum and a WAL checkpoint), so the file really shrinks. The checkpoint waits
  // up to busy_timeout for readers to finish; one still reading leaves the file to shrink on the next
  // call. Writer thread only; call it periodically, e.g. from the exporter between batches.
  Result<RetentionStats> EnforceRetention(std::chrono::system_clock::time_point now) override;

  const std::string& path() const { return path_; }
  const std::string& description() const override { return path_; }
  bool read_only() const override { return options_.read_only; }

  // Constructed only through Open(); the key keeps the constructor out of reach while letting
  // std::make_unique call it.
  class ConstructionKey {
    friend class SqliteSpanStore;
    ConstructionKey() = default;
  };
  SqliteSpanStore(ConstructionKey, std::string path, StoreOptions options,
                  std::unique_ptr<SqliteConnection> db);
  ~SqliteSpanStore() override;
  SqliteSpanStore(const SqliteSpanStore&) = delete;
  SqliteSpanStore& operator=(const SqliteSpanStore&) = delete;

 private:
  // The file's set-up and schema are sqlite_schema.h's, retention sqlite_retention.h's.
  Result<void> PrepareStatements();
  Result<WriteStats> WriteBatch(std::span<const Span> spans);
  Result<void> RequireWriter(std::string_view operation) const;
  // The summary row of a trace with stored spans after `batch`: the batch added to it where the batch
  // alone tells (summary_increment.h), else (and for a null batch) recomputed from all its spans.
  Result<void> UpdateSummary(const std::string& trace_hex, const std::vector<SummaryBatchSpan>* batch);

  const std::string path_;
  const StoreOptions options_;
  // Declared before the statements so that it is destroyed after them.
  std::unique_ptr<SqliteConnection> db_;
  // The attribute sets of rows in the shared form (rows/sqlite_attribute_sets.h): on db_, so after it.
  std::unique_ptr<SqliteAttributeSets> attribute_sets_;
  // Prepared once, reused for every call. The writer statements are null in a read-only store.
  std::unique_ptr<SqliteSpanUpserts> span_upserts_;  // rows/sqlite_span_upserts.h
  std::unique_ptr<SqliteStatement> refresh_summary_;
  std::unique_ptr<SqliteNewSummaries> new_summaries_;  // rows/sqlite_new_summaries.h
  std::unique_ptr<SqliteStatement> summary_bounds_;
  std::unique_ptr<SqliteStatement> add_to_summary_;  // kAddToSummarySql
  std::unique_ptr<SqliteStatement> get_trace_;
  std::unique_ptr<SqliteStatement> find_by_operation_;
};

}  // namespace sparktrace::tracing::store
