#include "tracing/sqlite_span_exporter.h"

#include <spdlog/spdlog.h>

namespace sparktrace::tracing {

SqliteSpanExporter::SqliteSpanExporter(std::unique_ptr<SqliteSpanStore> store,
                                       std::chrono::milliseconds retention_interval)
    : store_(std::move(store)), retention_interval_(retention_interval), next_retention_(Clock::now()) {}

Result<void> SqliteSpanExporter::Export(std::span<const Span> spans, Clock::time_point /*deadline*/) {
  if (shut_down_) {
    failed_ += spans.size();
    return Error{ErrorCode::kUnavailable, "the SQLite exporter is shut down"};
  }
  auto written = store_->Write(spans);
  if (!written.ok()) {
    failed_ += spans.size();
    return written.error();
  }
  exported_ += written->spans_written;
  rejected_ += written->spans_rejected;
  // Retention runs here, on the exporter thread, so it never competes with a write.
  if (Clock::now() >= next_retention_) {
    next_retention_ = Clock::now() + retention_interval_;
    auto retention = store_->EnforceRetention(std::chrono::system_clock::now());
    if (!retention.ok()) {
      spdlog::warn("trace store retention failed: {}", retention.error().message);
    } else if (retention->spans_deleted > 0) {
      spdlog::info("trace store retention: {} old trace(s), {} for size, {} span(s) deleted",
                   retention->traces_deleted_by_age, retention->traces_deleted_by_size, retention->spans_deleted);
    }
  }
  return {};
}

SpanExporterCounters SqliteSpanExporter::counters() const {
  SpanExporterCounters counters;
  counters.spans_exported = exported_;
  counters.spans_rejected = rejected_;
  counters.spans_failed = failed_;
  return counters;
}

}  // namespace sparktrace::tracing
