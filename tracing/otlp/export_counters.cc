#include "tracing/otlp/export_counters.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sparktrace::tracing::otlp {
namespace {

constexpr auto kRejectionLogInterval = std::chrono::seconds(10);

}  // namespace

void OtlpExportCounters::NoteAccepted(const OtlpPartialSuccess& partial, std::size_t span_count) {
  // rejected_spans is the collector's number; never count more than we sent.
  const auto rejected = static_cast<std::uint64_t>(
      std::clamp<std::int64_t>(partial.rejected_spans, 0, static_cast<std::int64_t>(span_count)));
  spans_rejected_.fetch_add(rejected, std::memory_order_relaxed);
  spans_exported_.fetch_add(span_count - rejected, std::memory_order_relaxed);
  // The spec allows a warning with nothing rejected; it is still worth passing on.
  if (rejected == 0 && partial.error_message.empty()) return;
  unlogged_rejections_ += rejected;
  const auto now = std::chrono::steady_clock::now();
  if (last_log_ != std::chrono::steady_clock::time_point{} && now - last_log_ < kRejectionLogInterval) return;
  last_log_ = now;
  spdlog::warn("OTLP collector {} rejected {} span(s) since the last report (partial success): {}", endpoint_,
               unlogged_rejections_,
               partial.error_message.empty() ? "no reason given" : partial.error_message);
  unlogged_rejections_ = 0;
}

SpanExporterCounters OtlpExportCounters::Snapshot(std::uint64_t retries) const {
  return SpanExporterCounters{spans_exported_.load(std::memory_order_relaxed),
                              spans_rejected_.load(std::memory_order_relaxed),
                              spans_failed_.load(std::memory_order_relaxed), retries};
}

}  // namespace sparktrace::tracing::otlp
