#pragma once
// The interface every span exporter implements (OTLP/gRPC, OTLP/HTTP, and any other sink the
// pipeline writes to). The pipeline owns one exporter and calls it from its one exporter thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>

#include "common/result.h"
#include "tracing/span.h"

namespace sparktrace::tracing {

// Running totals, for metrics. Each field only grows.
struct SpanExporterCounters {
  std::uint64_t spans_exported = 0;  // accepted by the collector
  std::uint64_t spans_rejected = 0;  // refused in a partial success (the collector says why; logged)
  std::uint64_t spans_failed = 0;    // in Export() calls that returned an error
  std::uint64_t retries = 0;         // attempts after the first, over all calls
  // Exporters with an on-disk spool (the trace store): spans put there while the sink was slow or
  // down, spans dropped because the spool was full, and the spool's size now.
  std::uint64_t spans_spooled = 0;
  std::uint64_t spans_drained = 0;  // of those, out of the spool since (delivered or refused)
  std::uint64_t spans_refused = 0;  // of the drained, dropped because the sink refused them
  std::uint64_t spans_dropped_spool_full = 0;
  std::uint64_t spool_bytes = 0;
  std::uint64_t spool_files_refused = 0;  // files in the spool's directory it would not touch
};

// How full a pipeline's queue is and how many spans it has accepted, kept by the pipeline and
// readable by its exporter at any moment: an exporter busy with other work (the store exporter
// draining its spool) looks again between steps, so a burst that arrives meanwhile is seen before
// the queue overflows, not after.
class BacklogGauge {
 public:
  explicit BacklogGauge(std::size_t capacity) : capacity_(capacity) {}
  // The pipeline, under its lock: a span was accepted, and the queue now holds `queued`.
  void Accepted(std::size_t queued) {
    arrived_.fetch_add(1, std::memory_order_relaxed);
    queued_.store(queued, std::memory_order_relaxed);
  }
  // The pipeline, under its lock: spans were taken for export.
  void Taken(std::size_t queued) { queued_.store(queued, std::memory_order_relaxed); }

  std::size_t queued() const { return queued_.load(std::memory_order_relaxed); }
  std::uint64_t arrived() const { return arrived_.load(std::memory_order_relaxed); }
  std::size_t capacity() const { return capacity_; }

 private:
  std::atomic<std::size_t> queued_{0};
  std::atomic<std::uint64_t> arrived_{0};
  const std::size_t capacity_;
};

class SpanExporter {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~SpanExporter() = default;

  // Sends `spans`, retrying as the protocol allows, and returns once they are delivered, the
  // failure is final, or `deadline` has passed (the exporter may also stop earlier, at its own
  // retry budget). A partial success is success: the rejected spans are counted, not retried.
  // Called from the exporter thread only, one call at a time; `spans` is only read during the call.
  virtual Result<void> Export(std::span<const Span> spans, Clock::time_point deadline) = 0;

  // Called once, before the first Export(), by the pipeline that owns this exporter: its queue's
  // gauge, which outlives the exporter's calls. An exporter that can put spans aside faster than it
  // delivers them (the store exporter's spool) watches it to keep the queue from filling.
  virtual void WatchBacklog(const BacklogGauge& /*gauge*/) {}

  // Called on the exporter thread when no spans have come for a batch delay, so that an exporter
  // can catch up on its own (the store exporter drains its spool). Returns by `deadline`.
  virtual void Idle(Clock::time_point /*deadline*/) {}

  // Makes a retry wait in a running Export() give up at once, and every later Export() fail
  // without sending. An attempt already on the wire is cancelled where the transport allows
  // (OTLP/gRPC) or else ends by its own timeout (OTLP/HTTP). Idempotent; safe from any thread,
  // so a pipeline's shutdown can cut a long backoff short.
  virtual void Shutdown() = 0;

  // Safe from any thread.
  virtual SpanExporterCounters counters() const = 0;
};

}  // namespace sparktrace::tracing
