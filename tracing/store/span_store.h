#pragma once
// SpanStore: the one interface through which the proxy (its store exporter), the event-log feeds,
// `sparktrace traces` and the trace view read and write traces. Two backends implement it:
// - SQLite (tracing/store/sqlite/sqlite_span_store.h): one file, the embedded default;
// - PostgreSQL (tracing/store/postgres/postgres_span_store.h): one database shared by every proxy, driver
//   sidecar and `sparktrace ui` of a deployment.
// Both pass the same conformance suite (tests/unit/tracing/store/span_store_conformance_test.cc).
//
// What every backend promises:
// - Write() stores a batch atomically (all or nothing). A span whose (trace id, span id) is stored
//   already is replaced: writes are idempotent, so a batch delivered twice (a spool drained after a
//   crash) changes nothing.
// - The per-trace summaries and the task index (tracing/store/task_attempts.h) are current after
//   every Write() and retention pass.
// - Readers see whole batches only, and never block or are blocked by writers for long.
// - No exception leaves a store; failures are Results: kUnavailable for a store that cannot be
//   reached or is locked (retry later), kInvalidArgument for what retrying cannot fix (a schema
//   newer than this binary, a read-only store asked to write), kNotFound for absent data.
//
// Threads: a store object is used by one thread at a time (it may be handed between threads). A
// process that writes and reads opens one object per thread.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/task_attempts.h"
#include "tracing/trace_summary.h"

namespace sparktrace::tracing::store {

struct StoreOptions {
  // EnforceRetention deletes traces whose last span ended longer ago than this.
  std::chrono::milliseconds max_age = std::chrono::hours(24 * 7);
  // EnforceRetention deletes the oldest traces while the store holds more than this many bytes.
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  // How long a call waits for a lock (SQLite) or a connection (PostgreSQL) before kUnavailable.
  std::chrono::milliseconds busy_timeout = std::chrono::seconds(5);
  // Readers: nothing is created or migrated; Write() and EnforceRetention() fail with
  // kInvalidArgument. The trace view and `sparktrace traces` open stores this way.
  bool read_only = false;
};

struct TraceFilter {
  // Each set field must match exactly (the Airflow identity as stored in the trace summary).
  std::optional<std::string> dag_id{};
  std::optional<std::string> task_id{};
  std::optional<std::string> run_id{};
  // Only traces that started at or after this time; 0 for no bound.
  std::uint64_t since_unix_nano = 0;
  // At most this many traces, newest first; 0 for no limit.
  std::size_t limit = 100;
};

struct WriteStats {
  std::size_t spans_written = 0;
  // Spans with an all-zero trace or span id cannot be stored or looked up; they are left out and
  // counted here for the exporter's metrics.
  std::size_t spans_rejected = 0;
  std::size_t traces_touched = 0;
};

struct RetentionStats {
  std::size_t traces_deleted_by_age = 0;
  std::size_t traces_deleted_by_size = 0;
  std::size_t spans_deleted = 0;
  std::uint64_t bytes_before = 0;  // bytes in use before, as compared with max_bytes
  std::uint64_t bytes_after = 0;   // bytes in use after
};

class SpanStore {
 public:
  virtual ~SpanStore() = default;

  // Stores a batch in one transaction (see above). Writers only.
  virtual Result<WriteStats> Write(std::span<const Span> spans) = 0;

  // Summaries matching `filter`, newest (latest start) first.
  virtual Result<std::vector<TraceSummary>> ListTraces(const TraceFilter& filter) = 0;
  // All spans of a trace ordered by start time (then span id); kNotFound when it has none.
  virtual Result<std::vector<Span>> GetTrace(const TraceId& trace_id) = 0;
  // All spans of these traces in one read (an attempt of a call per trace has thousands of them):
  // grouped by trace, each trace's spans ordered as GetTrace orders them; a trace with no spans
  // (unknown, or deleted by retention meanwhile) is simply absent, and none at all is no error. The
  // backends answer with one query; this fallback (for stores that have no such query, e.g. test
  // fakes) asks GetTrace once per trace.
  virtual Result<std::vector<Span>> GetTraces(std::span<const TraceId> trace_ids) {
    std::vector<Span> spans;
    for (const TraceId& trace_id : trace_ids) {
      auto trace = GetTrace(trace_id);
      if (!trace.ok()) {
        if (trace.error().code == ErrorCode::kNotFound) continue;
        return trace.error();
      }
      for (Span& span : *trace) spans.push_back(std::move(span));
    }
    return spans;
  }
  // The trace holding a span with this spark.connect.operation_id (the newest one if several do);
  // kNotFound when none does.
  virtual Result<TraceId> FindTraceByOperation(std::string_view operation_id) = 0;

  // Airflow task attempts (and traces without Airflow identity), one page, with the filter's order.
  virtual Result<TaskAttemptPage> ListTaskAttempts(const TaskAttemptFilter& filter) = 0;
  // Trace ids (hex) that a search text names: a trace id, an operation id or a Spark application id.
  virtual Result<std::vector<std::string>> TracesMatching(std::string_view text) = 0;

  // Settling (task_attempts.h, SettledFigures). Attempts due for it: not running, with no settled
  // figures of their current version, and no change indexed after `now - quiet`; the longest quiet
  // first, at most `limit`. Readers may list; the backlog counts all such rows, quiet or not.
  virtual Result<DueAttempts> ListDueAttempts(std::chrono::system_clock::time_point now,
                                              std::chrono::milliseconds quiet, std::size_t limit) = 0;
  // Records the figures of version `indexed_unix_nano` of the attempt's row, only if the row still is
  // at that version and no one recorded figures of it yet (a conditional update: of several settlers
  // sharing a store, exactly one claims each version). Writers only.
  virtual Result<SettleClaim> RecordSettlement(const AttemptRef& ref, std::uint64_t indexed_unix_nano,
                                               const SettledFigures& figures) = 0;

  // Deletes whole traces that ended before `now - max_age`, then the oldest while the store holds
  // more than max_bytes, in short transactions (never one long lock). Writers only; the store
  // exporter calls it periodically between batches.
  virtual Result<RetentionStats> EnforceRetention(std::chrono::system_clock::time_point now) = 0;

  // Whether the connection under the store is lost, so that a long-lived reader opens a new one. An
  // error on a healthy connection (a value PostgreSQL refused, a statement timeout, a busy file)
  // leaves the store usable: reopening then would only cost a login per failing request. A SQLite
  // file has no connection to lose.
  virtual bool connection_lost() const { return false; }

  // What to call the store in messages: the file path, or the PostgreSQL URL without a password.
  virtual const std::string& description() const = 0;
  virtual bool read_only() const = 0;
};

}  // namespace sparktrace::tracing::store
