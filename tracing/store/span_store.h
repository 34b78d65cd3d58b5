#pragma once
// SpanStore: the store whole, its three roles together (each in a header of its own, for a caller
// that needs only one): SpanWriter (span_writer.h: the store exporter, the event-log feeds),
// SpanReader (span_reader.h: `sparktrace traces`, the trace view) and StoreUpkeep (store_upkeep.h:
// settling attempts, retention). Two backends implement it:
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
#include <string>

#include "tracing/store/span_reader.h"
#include "tracing/store/span_writer.h"
#include "tracing/store/store_upkeep.h"

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

class SpanStore : public SpanWriter, public SpanReader, public StoreUpkeep {
 public:
  ~SpanStore() override = default;

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
