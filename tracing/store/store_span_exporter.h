#pragma once
// The trace store as a pipeline sink: writes each batch to the store (SQLite or PostgreSQL) and
// applies the retention policy every `retention_interval`. Runs on its pipeline's exporter thread
// only.
//
// The store is opened when first needed and again after it was lost (a PostgreSQL restart, a
// network cut): a proxy therefore starts, and keeps serving Spark, while its store is down. Opening
// is retried no more often than the backoff allows, so a dead store costs one attempt per interval,
// not one per batch.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "tracing/span_exporter.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {

using StoreOpener = std::function<Result<std::unique_ptr<SpanStore>>()>;

struct StoreSpanExporterOptions {
  std::chrono::milliseconds retention_interval = std::chrono::minutes(5);
  // After a failed open or a lost store, the next open waits this long, doubling up to the maximum.
  std::chrono::milliseconds reopen_backoff_initial{250};
  std::chrono::milliseconds reopen_backoff_max{5000};
};

class StoreSpanExporter final : public SpanExporter {
 public:
  // `store` may be null: it is then opened by `open` on the first batch. `description` names the
  // store in logs (never with a password).
  StoreSpanExporter(std::unique_ptr<SpanStore> store, StoreOpener open, std::string description,
                    StoreSpanExporterOptions options = {});

  Result<void> Export(std::span<const Span> spans, Clock::time_point deadline) override;
  void Shutdown() override { shut_down_ = true; }
  SpanExporterCounters counters() const override;

 private:
  // The open store, opening it if the backoff allows; kUnavailable while it cannot be reached.
  Result<SpanStore*> Store();
  void EnforceRetentionWhenDue();

  std::unique_ptr<SpanStore> store_;
  const StoreOpener open_;
  const std::string description_;
  const StoreSpanExporterOptions options_;
  Clock::time_point next_retention_;
  Clock::time_point next_open_;
  std::chrono::milliseconds open_backoff_;
  std::atomic<bool> shut_down_{false};
  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> failed_{0};
};

}  // namespace sparktrace::tracing::store
