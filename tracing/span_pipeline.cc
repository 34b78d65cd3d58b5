#include "tracing/span_pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

namespace sparktrace::tracing {

SpanPipeline::SpanPipeline(std::string name, std::unique_ptr<SpanExporter> exporter,
                           SpanPipelineOptions options)
    : name_(std::move(name)),
      exporter_(std::move(exporter)),
      options_(options),
      backlog_(options.max_queue_spans) {
  exporter_->WatchBacklog(backlog_);
  thread_ = std::thread([this] { Run(); });
}

SpanPipeline::~SpanPipeline() { Shutdown(); }

void SpanPipeline::Submit(Span span) {
  std::unique_lock lock(mu_);
  if (stopping_) {
    ++counters_.dropped_after_shutdown;
    return;
  }
  if (queue_.size() >= options_.max_queue_spans) {
    ++counters_.dropped_queue_full;
    return;
  }
  queue_.push_back(std::move(span));
  backlog_.Accepted(queue_.size());
  ++enqueued_;
  ++counters_.submitted;
  const bool batch_full = queue_.size() >= options_.max_batch_spans;
  lock.unlock();
  if (batch_full) work_.notify_one();
}

bool SpanPipeline::Flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  const std::uint64_t target = enqueued_;
  flush_target_ = std::max(flush_target_, target);
  work_.notify_one();
  return progress_.wait_for(lock, timeout, [&] { return done_ >= target; });
}

void SpanPipeline::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  work_.notify_one();
  // The thread exports what is left until shutdown_timeout, then gives up; cutting the exporter's
  // retry waits short makes sure a dead collector cannot hold the process past that.
  {
    std::unique_lock lock(mu_);
    if (!progress_.wait_for(lock, options_.shutdown_timeout, [&] { return finished_; })) {
      spdlog::warn("{} exporter: {} span(s) not exported at shutdown", name_, queue_.size());
    }
  }
  exporter_->Shutdown();
  if (thread_.joinable()) thread_.join();
}

SpanPipelineCounters SpanPipeline::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

void SpanPipeline::Run() {
  std::vector<Span> batch;
  batch.reserve(options_.max_batch_spans);
  std::unique_lock lock(mu_);
  while (true) {
    // Wait for a full batch, a flush, shutdown, or the oldest span's delay to run out.
    const auto deadline = std::chrono::steady_clock::now() + options_.batch_delay;
    work_.wait_until(lock, deadline, [&] {
      return stopping_ || queue_.size() >= options_.max_batch_spans ||
             (flush_target_ > done_ && !queue_.empty());
    });
    if (queue_.empty()) {
      if (stopping_) {
        // A last turn for what the exporter holds itself (the store exporter's spool), within the
        // time Shutdown waits.
        lock.unlock();
        exporter_->Idle(SpanExporter::Clock::now() + options_.shutdown_timeout);
        lock.lock();
        break;
      }
      lock.unlock();
      exporter_->Idle(SpanExporter::Clock::now() + options_.export_timeout);
      lock.lock();
      continue;
    }
    const std::size_t take = std::min(queue_.size(), options_.max_batch_spans);
    batch.clear();
    std::move(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take), std::back_inserter(batch));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(take));
    backlog_.Taken(queue_.size());
    const std::uint64_t batch_end = done_ + take;
    lock.unlock();

    auto result = exporter_->Export(batch, SpanExporter::Clock::now() + options_.export_timeout);
    if (!result.ok())
      spdlog::warn("{} exporter: {} span(s) lost: {}", name_, batch.size(), result.error().message);

    lock.lock();
    ++counters_.batches;
    if (!result.ok()) ++counters_.failed_batches;
    (result.ok() ? counters_.exported : counters_.export_failed) += take;
    done_ = batch_end;
    progress_.notify_all();
  }
  done_ = enqueued_;
  finished_ = true;
  progress_.notify_all();
}

}  // namespace sparktrace::tracing
