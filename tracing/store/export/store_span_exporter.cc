#include "tracing/store/export/store_span_exporter.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sparktrace::tracing::store {

StoreSpanExporter::StoreSpanExporter(std::unique_ptr<SpanStore> store, StoreOpener open,
                                     std::string description, StoreSpanExporterOptions options,
                                     std::unique_ptr<SpanSpool> spool)
    : store_(std::move(store)),
      open_(std::move(open)),
      description_(std::move(description)),
      options_(options),
      next_retention_(Clock::now()),
      next_open_(Clock::now()),
      open_backoff_(options.reopen_backoff_initial),
      spool_(std::move(spool)) {
  if (spool_) {
    spool_bytes_ = spool_->bytes();
    spool_files_refused_ = spool_->counters().refused_files;  // only Open() refuses files
  }
}

Result<SpanStore*> StoreSpanExporter::Store() {
  if (store_) return store_.get();
  if (!open_) return Error{ErrorCode::kUnavailable, fmt::format("trace store {} is closed", description_)};
  const auto now = Clock::now();
  if (now < next_open_) {
    return Error{
        ErrorCode::kUnavailable,
        fmt::format("trace store {} is unreachable; next attempt in {} ms", description_,
                    std::chrono::duration_cast<std::chrono::milliseconds>(next_open_ - now).count())};
  }
  auto opened = open_();
  if (!opened.ok()) {
    next_open_ = now + open_backoff_;
    open_backoff_ = std::min(open_backoff_ * 2, options_.reopen_backoff_max);
    return opened.error();
  }
  if (open_backoff_ != options_.reopen_backoff_initial)
    spdlog::info("trace store {} is reachable again", description_);
  open_backoff_ = options_.reopen_backoff_initial;
  store_ = std::move(*opened);
  return store_.get();
}

Result<void> StoreSpanExporter::WriteToStore(std::span<const Span> spans) {
  auto store = Store();
  if (!store.ok()) return store.error();
  const auto started = Clock::now();
  auto written = (*store)->Write(spans);
  if (written.ok()) forecast_.RecordWrite(spans.size(), Clock::now() - started);
  if (!written.ok()) {
    if (written.error().code == ErrorCode::kUnavailable && open_) {
      store_.reset();
      next_open_ = Clock::now() + open_backoff_;
    }
    return written.error();
  }
  exported_ += written->spans_written;
  rejected_ += written->spans_rejected;
  return {};
}

Result<void> StoreSpanExporter::Spool(std::span<const Span> spans) {
  auto appended = spool_->Append(spans);
  spool_bytes_ = spool_->bytes();
  if (!appended.ok()) {
    dropped_spool_full_ += spans.size();
    return appended.error();
  }
  spooled_ += spans.size();
  return {};
}

void StoreSpanExporter::DrainSpool(Clock::time_point deadline) {
  while (!spool_->empty() && !shut_down_ && Clock::now() < deadline) {
    // Before each batch, the queue is looked at again: a burst that arrives while the store writes
    // stops the drain at once, so that the exporter goes back to taking the queue. Asked before the
    // batch is read, with the size batches come in (the spool holds the pipeline's batches): during
    // a burst every Export asks, and a batch read from disk only to be left there is wasted work.
    if (forecast_.SpoolInstead(last_batch_spans_, Clock::now())) return;
    auto batch = spool_->Peek();
    if (!batch.ok()) {
      spdlog::warn("span spool: {}", batch.error().message);
      return;
    }
    if (!*batch) return;
    if (auto written = WriteToStore((*batch)->spans); !written.ok()) {
      // Down or locked: keep it, try later. A batch the store refuses for what it holds (kInternal:
      // a statement error, not a lost connection) would hold every batch behind it forever: after
      // a few tries it is dropped and counted.
      if (written.error().code != ErrorCode::kInternal || ++head_refusals_ < kMaxRefusals) return;
      spdlog::error("trace store {} refused a spooled batch {} times, dropping its {} span(s): {}",
                    description_, kMaxRefusals, (*batch)->spans.size(), written.error().message);
      dropped_refused_ += (*batch)->spans.size();
    }
    head_refusals_ = 0;
    if (auto acknowledged = spool_->Acknowledge(**batch); !acknowledged.ok()) {
      spdlog::warn("span spool: {}", acknowledged.error().message);
      return;
    }
    drained_ += (*batch)->spans.size();  // out of the spool, delivered or refused
    spool_bytes_ = spool_->bytes();
    if (spool_->empty()) spdlog::info("span spool drained into {}", description_);
  }
}

Result<void> StoreSpanExporter::Export(std::span<const Span> spans, Clock::time_point deadline) {
  if (shut_down_) {
    failed_ += spans.size();
    return Error{ErrorCode::kUnavailable, "the store exporter is shut down"};
  }
  last_batch_spans_ = spans.size();
  if (spool_) {
    // Behind what waits already, so that the store gets spans in the order they ended; and aside
    // while the queue fills faster than the store takes it.
    if (!spool_->empty() || forecast_.SpoolInstead(spans.size(), Clock::now())) {
      auto spooled = Spool(spans);
      DrainSpool(std::min(deadline, Clock::now() + options_.drain_slice));
      if (!spooled.ok()) failed_ += spans.size();
      return spooled;
    }
    if (auto written = WriteToStore(spans); !written.ok()) {
      spdlog::warn("trace store {} did not take {} span(s), spooling them: {}", description_, spans.size(),
                   written.error().message);
      auto spooled = Spool(spans);
      if (!spooled.ok()) failed_ += spans.size();
      return spooled;
    }
    EnforceRetentionWhenDue();
    return {};
  }
  if (auto written = WriteToStore(spans); !written.ok()) {
    failed_ += spans.size();
    return written.error();
  }
  EnforceRetentionWhenDue();
  return {};
}

void StoreSpanExporter::Idle(Clock::time_point deadline) {
  if (spool_ && !spool_->empty() && !shut_down_) DrainSpool(deadline);
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
                 retention->traces_deleted_by_age, retention->traces_deleted_by_size,
                 retention->spans_deleted);
  }
}

SpanExporterCounters StoreSpanExporter::counters() const {
  SpanExporterCounters counters;
  counters.spans_exported = exported_;
  counters.spans_rejected = rejected_;
  counters.spans_failed = failed_;
  counters.spans_spooled = spooled_;
  counters.spans_drained = drained_;
  counters.spans_refused = dropped_refused_;
  counters.spans_dropped_spool_full = dropped_spool_full_;
  counters.spool_bytes = spool_bytes_;
  counters.spool_files_refused = spool_files_refused_;
  return counters;
}

}  // namespace sparktrace::tracing::store
