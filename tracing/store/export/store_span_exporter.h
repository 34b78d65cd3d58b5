#pragma once
// The trace store as a pipeline sink: writes each batch to the store (SQLite or PostgreSQL) and
// applies the retention policy every `retention_interval`. Runs on its pipeline's exporter thread
// only.
//
// The store is opened when first needed and again after it was lost (a PostgreSQL restart, a
// network cut): a proxy therefore starts, and keeps serving Spark, while its store is down. Opening
// is retried no more often than the backoff allows, so a dead store costs one attempt per interval,
// not one per batch.
//
// With a spool (tracing/store/spool/span_spool.h), a batch the store cannot take goes to disk instead of
// being lost, and the spool drains, oldest first, as soon as the store takes writes again (on the
// next batch or the pipeline's idle tick). While the spool holds anything, new batches queue behind
// it, so spans reach the store in the order they ended. Only a full spool drops a batch (counted).
//
// The spool also takes bursts the store cannot keep up with (tracing/store/export/burst_forecast.h):
// a batch goes to the spool (an append, several times cheaper than a store write) when the
// pipeline's queue is more than a quarter full, or when the spans expected to arrive during a store
// write would take it past half; otherwise the spool drains, a slice of at most `drain_slice` per
// batch so that new spans keep moving. The pipeline's gauge is read again before each spooled batch
// is written, so a burst that comes during the drain stops it at once (at 60k spans/s on 16 cores,
// a 100 ms slice alone took more than the old 8,192-span queue held; bench/pipeline_burst_bench.cc).
//
// Writes are idempotent, so a batch spooled and then delivered twice (a crash between the write and
// the acknowledgement) changes nothing.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "tracing/span_exporter.h"
#include "tracing/store/export/burst_forecast.h"
#include "tracing/store/span_store.h"
#include "tracing/store/spool/span_spool.h"

namespace sparktrace::tracing::store {

using StoreOpener = std::function<Result<std::unique_ptr<SpanStore>>()>;

struct StoreSpanExporterOptions {
  std::chrono::milliseconds retention_interval = std::chrono::minutes(5);
  // After a failed open or a lost store, the next open waits this long, doubling up to the maximum.
  std::chrono::milliseconds reopen_backoff_initial{250};
  std::chrono::milliseconds reopen_backoff_max{5000};
  // How long one batch's turn may spend draining the spool before the next batch is taken.
  std::chrono::milliseconds drain_slice{100};
};

class StoreSpanExporter final : public SpanExporter {
 public:
  // `store` may be null: it is then opened by `open` on the first batch. `description` names the
  // store in logs (never with a password).
  StoreSpanExporter(std::unique_ptr<SpanStore> store, StoreOpener open, std::string description,
                    StoreSpanExporterOptions options = {}, std::unique_ptr<SpanSpool> spool = nullptr);

  Result<void> Export(std::span<const Span> spans, Clock::time_point deadline) override;
  void Idle(Clock::time_point deadline) override;
  void WatchBacklog(const BacklogGauge& gauge) override { forecast_.Watch(gauge); }
  void Shutdown() override { shut_down_ = true; }
  SpanExporterCounters counters() const override;

 private:
  // The open store, opening it if the backoff allows; kUnavailable while it cannot be reached.
  Result<SpanStore*> Store();
  void EnforceRetentionWhenDue();
  // Writes one batch to the store; a lost connection is dropped, to be reopened after the backoff.
  Result<void> WriteToStore(std::span<const Span> spans);
  // Moves spooled batches into the store until the spool is empty, the store fails, or `deadline`.
  void DrainSpool(Clock::time_point deadline);
  Result<void> Spool(std::span<const Span> spans);

  std::unique_ptr<SpanStore> store_;
  const StoreOpener open_;
  const std::string description_;
  const StoreSpanExporterOptions options_;
  Clock::time_point next_retention_;
  Clock::time_point next_open_;
  std::chrono::milliseconds open_backoff_;
  std::unique_ptr<SpanSpool> spool_;
  BurstForecast forecast_;  // store or spool, from the owning pipeline's queue (exporter thread only)
  std::size_t last_batch_spans_ = 0;  // the latest Export's batch: what a spooled batch holds, about
  // How often the store refused the spool's oldest batch for its content (exporter thread only).
  static constexpr int kMaxRefusals = 3;
  int head_refusals_ = 0;
  std::atomic<std::uint64_t> dropped_refused_{0};
  std::atomic<bool> shut_down_{false};
  std::atomic<std::uint64_t> spooled_{0};
  std::atomic<std::uint64_t> drained_{0};
  std::atomic<std::uint64_t> dropped_spool_full_{0};
  std::atomic<std::uint64_t> spool_bytes_{0};
  std::uint64_t spool_files_refused_ = 0;  // set once, when the spool was opened
  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> failed_{0};
};

}  // namespace sparktrace::tracing::store
