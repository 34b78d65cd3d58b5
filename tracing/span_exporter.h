#pragma once
// The interface every span exporter implements (OTLP/gRPC, OTLP/HTTP, and any other sink the
// pipeline writes to). The pipeline owns one exporter and calls it from its one exporter thread.

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

class SpanExporter {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~SpanExporter() = default;

  // Sends `spans`, retrying as the protocol allows, and returns once they are delivered, the
  // failure is final, or `deadline` has passed (the exporter may also stop earlier, at its own
  // retry budget). A partial success is success: the rejected spans are counted, not retried.
  // Called from the exporter thread only, one call at a time; `spans` is only read during the call.
  virtual Result<void> Export(std::span<const Span> spans, Clock::time_point deadline) = 0;

  // Called on the exporter thread just before each Export(): how many spans still wait in the
  // pipeline's queue, of how many it holds. An exporter that can put spans aside faster than it
  // delivers them (the store exporter's spool) uses it to keep the queue from filling.
  virtual void Backlog(std::size_t /*queued*/, std::size_t /*capacity*/) {}

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
