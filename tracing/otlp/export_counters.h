#pragma once
// The span counts both OTLP exporters keep, and the one log line a partial success deserves
// (throttled: a collector that keeps rejecting would otherwise log once per batch).
// Note*() are called from the exporter thread; Snapshot() from any thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "tracing/otlp/response.h"
#include "tracing/span_exporter.h"

namespace sparktrace::tracing::otlp {

class OtlpExportCounters {
 public:
  explicit OtlpExportCounters(std::string endpoint) : endpoint_(std::move(endpoint)) {}

  // The collector took the request; `partial` says how many of `span_count` it refused.
  void NoteAccepted(const OtlpPartialSuccess& partial, std::size_t span_count);
  void NoteFailed(std::size_t span_count) { spans_failed_.fetch_add(span_count, std::memory_order_relaxed); }

  SpanExporterCounters Snapshot(std::uint64_t retries) const;

 private:
  const std::string endpoint_;
  std::atomic<std::uint64_t> spans_exported_{0};
  std::atomic<std::uint64_t> spans_rejected_{0};
  std::atomic<std::uint64_t> spans_failed_{0};
  std::chrono::steady_clock::time_point last_log_{};  // exporter thread only
  std::uint64_t unlogged_rejections_ = 0;             // exporter thread only
};

}  // namespace sparktrace::tracing::otlp
