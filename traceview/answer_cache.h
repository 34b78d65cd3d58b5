#pragma once
// The attempt answers the trace view built last, by revision tag (attempt_revision.h): a page load of an
// attempt that has not changed since someone else loaded it (six viewers of one running task, a
// reload, a second tab) is answered from here, gzip-compressed once, instead of reading and
// computing tens of thousands of spans again.
//
// The bound: at most --view-cache-bytes of answers (identity and gzip bodies together, default
// kDefaultViewCacheBytes; 0: no cache), the least recently used dropped first; an answer larger than
// the bound is not kept. Metrics (/metrics, with the view store's):
//   sparktrace_trace_view_answer_cache_hits_total    answers served from the cache
//   sparktrace_trace_view_answer_cache_misses_total  answers built (and kept when they fit)
//   sparktrace_trace_view_answer_cache_bytes         bytes held now
//
// Threads: the cache on the trace view's thread only; its metrics are atomics, collected anywhere.

#include <prometheus/collectable.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sparktrace::traceview {

// 64 MiB: a few answers of 20,000 spans (13 MiB each, 0.7 MiB gzipped).
inline constexpr std::size_t kDefaultViewCacheBytes = std::size_t{64} << 20;

class AnswerCacheMetrics final : public prometheus::Collectable {
 public:
  void AddHit() { hits_.fetch_add(1, std::memory_order_relaxed); }
  void AddMiss() { misses_.fetch_add(1, std::memory_order_relaxed); }
  void SetBytes(std::size_t bytes) { bytes_.store(bytes, std::memory_order_relaxed); }
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
  std::atomic<std::size_t> bytes_{0};
};

class AnswerCache {
 public:
  explicit AnswerCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // The answer's body kept under `etag` (counted a hit), or nullptr (counted a miss).
  const std::string* Find(const std::string& etag);
  // Its gzip body, compressed now on first use (and then kept); nullopt when zlib failed or the
  // answer is no longer held.
  std::optional<std::string> Gzipped(const std::string& etag);
  // Whether an answer of this size is kept (it fits the bound).
  bool Keeps(std::size_t size) const { return size <= max_bytes_ && max_bytes_ > 0; }
  // Keeps `body` under `etag` (Keeps(body.size()) must hold), dropping the least recently used
  // answers; the body as kept.
  const std::string& Put(const std::string& etag, std::string body);

  std::shared_ptr<const AnswerCacheMetrics> metrics() const { return metrics_; }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::string etag;
    std::string body;
    std::optional<std::string> gzip;
    std::size_t bytes() const { return body.size() + (gzip ? gzip->size() : 0); }
  };
  void Touch(std::list<Entry>::iterator entry);
  // Drops the least recently used answers until the bound holds, keeping at least the `keep` newest.
  void Shrink(std::size_t keep);

  const std::size_t max_bytes_;
  std::list<Entry> entries_;  // most recently used first
  std::map<std::string, std::list<Entry>::iterator, std::less<>> by_etag_;
  std::size_t bytes_ = 0;
  std::shared_ptr<AnswerCacheMetrics> metrics_ = std::make_shared<AnswerCacheMetrics>();
};

}  // namespace sparktrace::traceview
