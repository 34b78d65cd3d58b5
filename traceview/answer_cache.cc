#include "traceview/answer_cache.h"

#include <utility>

#include "admin/http_caching.h"
#include "common/metric_family_builders.h"

namespace sparktrace::traceview {

std::vector<prometheus::MetricFamily> AnswerCacheMetrics::Collect() const {
  using metric_builders::Counter;
  using metric_builders::Family;
  using metric_builders::Gauge;
  auto hits =
      Family("sparktrace_trace_view_answer_cache_hits_total",
             "Attempt answers served from the trace view's answer cache", prometheus::MetricType::Counter);
  hits.metric.push_back(Counter({}, hits_.load(std::memory_order_relaxed)));
  auto misses = Family("sparktrace_trace_view_answer_cache_misses_total",
                       "Attempt answers the trace view built (not in its answer cache)",
                       prometheus::MetricType::Counter);
  misses.metric.push_back(Counter({}, misses_.load(std::memory_order_relaxed)));
  auto bytes = Family("sparktrace_trace_view_answer_cache_bytes",
                      "Bytes of answers the trace view's answer cache holds (at most --view-cache-bytes)",
                      prometheus::MetricType::Gauge);
  bytes.metric.push_back(Gauge({}, static_cast<double>(bytes_.load(std::memory_order_relaxed))));
  return {std::move(hits), std::move(misses), std::move(bytes)};
}

const std::string* AnswerCache::Find(const std::string& etag) {
  const auto found = by_etag_.find(etag);
  if (found == by_etag_.end()) {
    metrics_->AddMiss();
    return nullptr;
  }
  metrics_->AddHit();
  Touch(found->second);
  return &entries_.front().body;
}

std::optional<std::string> AnswerCache::Gzipped(const std::string& etag) {
  const auto found = by_etag_.find(etag);
  if (found == by_etag_.end()) return std::nullopt;
  Entry& entry = *found->second;
  if (!entry.gzip) {
    entry.gzip = admin::Gzip(entry.body);
    if (!entry.gzip) return std::nullopt;
    bytes_ += entry.gzip->size();
    std::optional<std::string> copy = entry.gzip;
    Shrink(0);  // may drop this very entry: the copy is the answer
    return copy;
  }
  return entry.gzip;
}

const std::string& AnswerCache::Put(const std::string& etag, std::string body) {
  if (const auto found = by_etag_.find(etag); found != by_etag_.end()) {
    bytes_ -= found->second->bytes();
    entries_.erase(found->second);
    by_etag_.erase(found);
  }
  entries_.push_front(Entry{etag, std::move(body), std::nullopt});
  by_etag_[etag] = entries_.begin();
  bytes_ += entries_.front().bytes();
  Shrink(1);  // older answers go first: the new one fits the bound by itself (Keeps)
  return entries_.front().body;
}

void AnswerCache::Touch(std::list<Entry>::iterator entry) {
  entries_.splice(entries_.begin(), entries_, entry);
}

void AnswerCache::Shrink(std::size_t keep) {
  while (bytes_ > max_bytes_ && entries_.size() > keep) {
    bytes_ -= entries_.back().bytes();
    by_etag_.erase(entries_.back().etag);
    entries_.pop_back();
  }
  metrics_->SetBytes(bytes_);
}

}  // namespace sparktrace::traceview
