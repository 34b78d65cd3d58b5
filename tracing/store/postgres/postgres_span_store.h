#pragma once
// PostgresSpanStore: the trace store shared by every proxy, driver sidecar and `sparktrace ui` of a
// deployment (tracing/store/span_store.h says what every store promises). The same rows as the
// SQLite store (tracing/store/span_rows/stored_span.h) with ids as bytea and the compact attributes
// (postgres_span_columns.h), what a session's calls repeat kept once (rows/postgres_attribute_sets.h), the
// same task index (tracing/store/task_index/attempt_parts.h).
//
// Many writers: each batch is one transaction that first takes a transaction-scoped advisory lock
// per trace it touches (in lock-id order), so two proxies writing spans of one trace (a retry on
// another replica, a reattach through another pod) serialise on that trace and its summary and
// task index see both; writers of different traces never wait on each other. A batch is sent with
// COPY: the spans and summaries of the traces it creates straight into spans and traces, those of
// traces already stored into a temporary table, merged with one INSERT … ON CONFLICT (idempotent
// upserts; postgres_batch_copy.h).
//
// The schema version is checked in every write transaction, so a proxy left running while a newer
// one migrated the database stops writing (kInvalidArgument) instead of writing rows it does not
// understand.
//
// Threads: one thread at a time. Errors: kUnavailable when the server cannot be reached or the
// connection was lost (the caller reopens), kInvalidArgument for a newer schema or a write to a
// read-only store, kNotFound for absent data, kInternal otherwise; messages name the store without
// its password.

#include <memory>
#include <string>

#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/span_store.h"
#include "tracing/store/store_location.h"

namespace sparktrace::tracing::store {

class PostgresAttributeSets;  // rows/postgres_attribute_sets.h: kept out of the headers other modules see

class PostgresSpanStore final : public SpanStore {
 public:
  // Connects, then migrates (writers, under the migration lock) or checks the schema (readers).
  static Result<std::unique_ptr<PostgresSpanStore>> Open(const StoreLocation& location,
                                                         const StoreOptions& options);

  Result<WriteStats> Write(std::span<const Span> spans) override;
  Result<std::vector<TraceSummary>> ListTraces(const TraceFilter& filter) override;
  Result<std::vector<Span>> GetTrace(const TraceId& trace_id) override;
  Result<std::vector<Span>> GetTraces(std::span<const TraceId> trace_ids) override;
  Result<TraceId> FindTraceByOperation(std::string_view operation_id) override;
  Result<TaskAttemptPage> ListTaskAttempts(const TaskAttemptFilter& filter) override;
  Result<std::vector<std::string>> TracesMatching(std::string_view text) override;
  // Settling (span_store.h, tracing/store/postgres/upkeep/postgres_settlement.h).
  Result<DueAttempts> ListDueAttempts(std::chrono::system_clock::time_point now,
                                      std::chrono::milliseconds quiet, std::size_t limit) override;
  Result<SettleClaim> RecordSettlement(const AttemptRef& ref, std::uint64_t indexed_unix_nano,
                                       const SettledFigures& figures) override;
  // Deletes in batches of a few hundred traces, each its own short transaction.
  Result<RetentionStats> EnforceRetention(std::chrono::system_clock::time_point now) override;
  // The server closed the session, or it is stuck in a failed transaction (PgConnection::reusable).
  bool connection_lost() const override { return !db_.reusable(); }
  const std::string& description() const override { return display_; }
  bool read_only() const override { return options_.read_only; }

  PostgresSpanStore(PgConnection db, std::string display, StoreOptions options);
  ~PostgresSpanStore() override;
  PostgresSpanStore(const PostgresSpanStore&) = delete;
  PostgresSpanStore& operator=(const PostgresSpanStore&) = delete;

 private:
  Result<WriteStats> WriteBatch(std::span<const Span> spans);
  // How a batch writes the traces it creates: copied straight into their tables, or merged as the
  // traces already stored are (WriteBatch says when).
  enum class NewTraces { kCopied, kMerged };
  // One attempt at a batch, in one transaction. `conflicted`: the attempt failed because a trace
  // without a summary row had stored spans after all.
  Result<WriteStats> WriteBatchAs(std::span<const Span> spans, NewTraces new_traces, bool& conflicted);
  // Deletes these traces (spans, summary, task index) in one transaction; returns spans deleted.
  Result<std::size_t> DeleteTraces(const std::vector<std::string>& trace_ids);
  Result<std::uint64_t> BytesInUse();
  Error Named(const Error& error, std::string_view what) const;

  PgConnection db_;
  const std::string display_;
  const StoreOptions options_;
  bool incoming_tables_ready_ = false;
  std::unique_ptr<PostgresAttributeSets> attribute_sets_;  // the sets this writer numbered
};

}  // namespace sparktrace::tracing::store
