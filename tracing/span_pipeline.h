#pragma once
// Carries finished spans from the data path to one exporter: a bounded queue, batching by size
// and time, and one exporter thread. Submitting never waits for the exporter: when the queue is
// full the span is dropped and counted, so a slow or dead collector can never slow or stall a
// Spark query. One pipeline per sink (OTLP, SQLite), so one sink's trouble does not delay another.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "tracing/span.h"
#include "tracing/span_exporter.h"

namespace sparktrace::tracing {

struct SpanPipelineOptions {
  std::size_t max_queue_spans = 16384;               // beyond this, Submit drops (--span-queue-max)
  std::size_t max_batch_spans = 512;                 // one Export call carries at most this many
  std::chrono::milliseconds batch_delay{1000};       // a waiting span is exported within this
  std::chrono::milliseconds export_timeout{10'000};  // deadline of one Export call, retries included
  std::chrono::milliseconds shutdown_timeout{5000};  // how long Shutdown may spend exporting the rest
};

struct SpanPipelineCounters {
  std::uint64_t submitted = 0;  // accepted into the queue
  std::uint64_t dropped_queue_full = 0;
  std::uint64_t dropped_after_shutdown = 0;
  std::uint64_t exported = 0;       // in Export calls that succeeded
  std::uint64_t export_failed = 0;  // in Export calls that failed (not retried further)
  std::uint64_t batches = 0;
  std::uint64_t failed_batches = 0;  // of `batches`
};

class SpanPipeline {
 public:
  // Starts the exporter thread. `name` labels logs ("otlp", "sqlite").
  SpanPipeline(std::string name, std::unique_ptr<SpanExporter> exporter, SpanPipelineOptions options = {});
  ~SpanPipeline();  // Shutdown()
  SpanPipeline(const SpanPipeline&) = delete;
  SpanPipeline& operator=(const SpanPipeline&) = delete;

  // Thread-safe; holds a mutex only to append. Drops (and counts) when full or shut down.
  void Submit(Span span);

  // Waits until every span submitted before this call has been exported, failed or dropped, or
  // `timeout` passed; returns whether it got there. Thread-safe. For tests, the demo and shutdown.
  bool Flush(std::chrono::milliseconds timeout);

  // Exports what is queued (within shutdown_timeout), then stops the thread. Idempotent.
  void Shutdown();

  SpanPipelineCounters counters() const;
  SpanExporterCounters exporter_counters() const { return exporter_->counters(); }
  const std::string& name() const { return name_; }

 private:
  void Run();

  const std::string name_;
  const std::unique_ptr<SpanExporter> exporter_;
  const SpanPipelineOptions options_;

  mutable std::mutex mu_;
  std::condition_variable work_;      // the exporter thread waits here
  std::condition_variable progress_;  // Flush waits here
  std::deque<Span> queue_;
  std::uint64_t enqueued_ = 0;      // sequence number of the last span queued
  std::uint64_t done_ = 0;          // every span up to this sequence number is finished
  std::uint64_t flush_target_ = 0;  // export without waiting for a full batch up to here
  bool stopping_ = false;
  bool finished_ = false;  // the exporter thread has exported what it could and ends
  SpanPipelineCounters counters_;
  BacklogGauge backlog_;  // queue_.size(), for the exporter between its own steps
  std::thread thread_;
};

}  // namespace sparktrace::tracing
