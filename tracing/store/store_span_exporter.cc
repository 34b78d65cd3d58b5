#include "tracing/store/store_span_exporter.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sparktrace::tracing::store {

StoreSpanExporter::StoreSpanExporter(std::unique_ptr<SpanStore> store, StoreOpener open, std::string description,
                                     StoreSpanExporterOptions options)
    : store_(std::move(store)),
      open_(std::move(open)),
      description_(std::move(description)),
      options_(options),
      next_retention_(Clock::now()),
      next_open_(Clock::now()),
      open_backoff_(options.reopen_backoff_initial) {}

Result<SpanStore*> StoreSpanExporter::Store() {
  if (store_) return store_.get();
  if (!open_) return Error{ErrorCode::kUnavailable, fmt::format("trace store {} is closed", description_)};
  const auto now = Clock::now();
  if (now < next_open_) {
    return Error{ErrorCode::kUnavailable, fmt::format("trace store {} is unreachable; next attempt in {} ms",
                                                      description_, std::chrono::duration_cast<std::chrono::milliseconds>(next_open_ - now).count())};
  }
  auto opened = open_();
  if (!opened.ok()) {
    next_open_ = now + open_backoff_;
    open_backoff_ = std::min(open_backoff_ * 2, options_.reopen_backoff_max);
    return opened.error();
  }
  if (open_backoff_ != options_.reopen_backoff_initial) spdlog::info("trace store {} is reachable again", description_);
  open_backoff_ = options_.reopen_backoff_initial;
  store_ = std::move(*opened);
  return store_.get();
}

Result<void> StoreSpanExporter::Export(std::span<const Span> spans, Clock::time_point /*deadline*/) {
  if (shut_down_) {
    failed_ += spans.size();
    return Error{ErrorCode::kUnavailable, "the store exporter is shut down"};
  }
  auto store = Store();
  if (!store.ok()) {
    failed_ += spans.size();
    return store.error();
  }
  auto written = (*store)->Write(spans);
  if (!written.ok()) {
    failed_ += spans.size();
    // A lost connection is reopened (after the backoff) rather than retried on a dead handle.
    if (written.error().code == ErrorCode::kUnavailable && open_) {
      store_.reset();
      next_open_ = Clock::now() + open_backoff_;
    }
    return written.error();
  }
  exported_ += written->spans_written;
  rejected_ += written->spans_rejected;
  EnforceRetentionWhenDue();
  return {};
}

// Retention runs here, on the exporter thread, so it never competes with a write of this process.
void StoreSpanExporter::EnforceRetentionWhenDue() {
  if (Clock::now() < next_retention_ || !store_) return;
  next_retention_ = Clock::now() + options_.retention_interval;
  auto retention = store_->EnforceRetention(std::chrono::system_clock::now());
  if (!retention.ok()) {
    spdlog::warn("trace store retention failed: {}", retention.error().message);
  } else if (retention->spans_deleted > 0) {
    spdlog::info("trace store retention: {} old trace(s), {} for size, {} span(s) deleted",
                 retention->traces_deleted_by_age, retention->traces_deleted_by_size, retention->spans_deleted);
  }
}

SpanExporterCounters StoreSpanExporter::counters() const {
  SpanExporterCounters counters;
  counters.spans_exported = exported_;
  counters.spans_rejected = rejected_;
  counters.spans_failed = failed_;
  return counters;
}

}  // namespace sparktrace::tracing::store
