#pragma once
// The trace view's connection to its store, and what it tells about the store's failures.
//
// The bound: one connection (kViewStoreConnections). The trace view answers on the admin port's one
// trace-view thread, one request at a time (admin/ui_worker.h), so a pool of more could never be
// used; the one connection is opened read-only on first use and reused by every request after. It
// is replaced only when lost (SpanStore::connection_lost(): the server closed it, or it is stuck in
// a failed transaction); a request whose query fails on a healthy connection keeps it, so failing
// requests never cost a PostgreSQL login each. A store that could not be opened is tried again by
// the first request that needs it kReopenBackoff or more later (the ones before are answered 503 at
// once): a database that is down costs one connection attempt a second, however many requests come.
//
// Failures are answered generically (kStoreUnreadableMessage): libpq's text, the URL (even without
// its password), a file's path are for the operator, not for every client of the admin port. They
// go to the log, each new reason at once (at most one new reason a second) and a repeated one at
// most once a minute, with the count held back.
//
// Metrics (/metrics of `sparktrace proxy` and of `sparktrace ui`):
//   sparktrace_trace_view_store_connects_total  connections the trace view opened or tried to open
//   sparktrace_trace_view_store_connections     connections open now: 0 or kViewStoreConnections
//   sparktrace_trace_view_store_errors_total    requests the store failed (answered 503)
//   sparktrace_trace_view_not_modified_total     attempt answers a 304 from the index's revision spared
//   sparktrace_trace_view_bounded_answers_total  answers with more spans than --view-max-spans
//   sparktrace_trace_view_spans_over_bound_total the spans over the bound in those (summarised)
//
// Threads: ViewStore and StoreFailureLog on the trace view's thread only; ViewStoreMetrics is
// updated there and collected on the admin thread (atomics).

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/log_throttle.h"
#include "common/result.h"
#include "tracing/store/span_store.h"

namespace sparktrace::traceview {

// One reader thread, so one connection: see above.
inline constexpr int kViewStoreConnections = 1;
// The least time between two attempts to open the store after one failed.
inline constexpr std::chrono::seconds kReopenBackoff{1};
// What a client is told when the store fails (503), whatever the reason.
inline constexpr std::string_view kStoreUnreadableMessage = "the trace store cannot be read now";

class ViewStoreMetrics final : public prometheus::Collectable {
 public:
  void AddConnect() { connects_.fetch_add(1, std::memory_order_relaxed); }
  void SetOpen(bool open) { open_.store(open ? kViewStoreConnections : 0, std::memory_order_relaxed); }
  void AddError() { errors_.fetch_add(1, std::memory_order_relaxed); }
  void AddNotModified() { not_modified_.fetch_add(1, std::memory_order_relaxed); }
  void AddBoundedAnswer(std::uint64_t spans_over) {
    bounded_answers_.fetch_add(1, std::memory_order_relaxed);
    spans_over_bound_.fetch_add(spans_over, std::memory_order_relaxed);
  }
  std::uint64_t connects() const { return connects_.load(std::memory_order_relaxed); }

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::atomic<std::uint64_t> connects_{0};
  std::atomic<std::uint64_t> errors_{0};
  std::atomic<std::uint64_t> not_modified_{0};
  std::atomic<std::uint64_t> bounded_answers_{0};
  std::atomic<std::uint64_t> spans_over_bound_{0};
  std::atomic<int> open_{0};
};

// The log lines of the store's failures, rate-limited (see above).
class StoreFailureLog {
 public:
  using Clock = LogThrottle::Clock;

  // Logs `reason` (a warning) unless held back; returns whether it was logged.
  bool Note(std::string_view reason, Clock::time_point now = Clock::now());

 private:
  std::string last_reason_;
  LogThrottle new_reasons_{std::chrono::seconds(1)};
  LogThrottle repeats_{std::chrono::minutes(1)};
};

// Opens the store (read-only): OpenSpanStore over the --store location, or a test's fake.
using StoreOpener = std::function<Result<std::unique_ptr<tracing::store::SpanStore>>()>;

class ViewStore {
 public:
  explicit ViewStore(StoreOpener open) : open_(std::move(open)) {}

  using Clock = std::chrono::steady_clock;

  // The open store, opened now if there is none (counted in connects_total) and no attempt failed
  // within kReopenBackoff; else that attempt's error.
  Result<tracing::store::SpanStore*> Get(Clock::time_point now = Clock::now());
  // The store failed a request with `error` (not kNotFound): counted, logged, and the connection
  // dropped only when it is lost.
  void Failed(const Error& error);

  std::shared_ptr<ViewStoreMetrics> metrics() const { return metrics_; }

 private:
  const StoreOpener open_;
  std::unique_ptr<tracing::store::SpanStore> store_;
  std::optional<Error> open_failure_;  // the last attempt's error, while within kReopenBackoff of it
  Clock::time_point open_failed_at_{};
  std::shared_ptr<ViewStoreMetrics> metrics_ = std::make_shared<ViewStoreMetrics>();
  StoreFailureLog log_;
};

}  // namespace sparktrace::traceview
