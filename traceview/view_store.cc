#include "traceview/view_store.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "common/metric_family_builders.h"

namespace sparktrace::traceview {

using prometheus::MetricType;

std::vector<prometheus::MetricFamily> ViewStoreMetrics::Collect() const {
  using metric_builders::Counter;
  using metric_builders::Family;
  using metric_builders::Gauge;
  auto connects =
      Family("sparktrace_trace_view_store_connects_total",
             "Connections the trace view opened (or tried to open) to its store", MetricType::Counter);
  connects.metric.push_back(Counter({}, connects_.load(std::memory_order_relaxed)));
  auto open = Family("sparktrace_trace_view_store_connections",
                     "Connections the trace view holds to its store (at most 1: one reader thread)",
                     MetricType::Gauge);
  open.metric.push_back(Gauge({}, open_.load(std::memory_order_relaxed)));
  auto errors = Family("sparktrace_trace_view_store_errors_total",
                       "Trace view requests the store failed (answered 503)", MetricType::Counter);
  errors.metric.push_back(Counter({}, errors_.load(std::memory_order_relaxed)));
  const auto counter = [](std::string name, std::string help, const std::atomic<std::uint64_t>& value) {
    auto family = Family(std::move(name), std::move(help), MetricType::Counter);
    family.metric.push_back(Counter({}, value.load(std::memory_order_relaxed)));
    return family;
  };
  return {std::move(connects),
          std::move(open),
          std::move(errors),
          counter("sparktrace_trace_view_not_modified_total",
                  "Attempt answers the index's revision answered 304 without reading spans", not_modified_),
          counter("sparktrace_trace_view_bounded_answers_total",
                  "Attempt and trace answers with more spans than --view-max-spans", bounded_answers_),
          counter("sparktrace_trace_view_spans_over_bound_total",
                  "Spans over --view-max-spans in those answers (summarised in span_groups)", spans_over_bound_)};
}

bool StoreFailureLog::Note(std::string_view reason, Clock::time_point now) {
  const bool repeated = reason == last_reason_;
  const auto held_back = (repeated ? repeats_ : new_reasons_).Allow(now);
  if (!held_back) return false;
  if (!repeated) {
    // A new reason starts its own count of repeats, from this line.
    last_reason_ = std::string(reason);
    repeats_.Reset();
    (void)repeats_.Allow(now);
  }
  if (*held_back > 0) {
    spdlog::warn("trace view: the trace store cannot be read: {} ({} similar failures not logged)", reason,
                 *held_back);
  } else {
    spdlog::warn("trace view: the trace store cannot be read: {}", reason);
  }
  return true;
}

Result<tracing::store::SpanStore*> ViewStore::Get(Clock::time_point now) {
  if (store_) return store_.get();
  if (open_failure_ && now - open_failed_at_ < kReopenBackoff) return *open_failure_;
  metrics_->AddConnect();
  auto store = open_();
  if (!store.ok()) {
    // A SQLite file that is not there yet costs a stat to look for again; a server that is down
    // costs a connection attempt, which waits for the backoff.
    if (store.error().code != ErrorCode::kNotFound) {
      open_failure_ = store.error();
      open_failed_at_ = now;
    }
    return store.error();
  }
  open_failure_.reset();
  store_ = std::move(store).value();
  metrics_->SetOpen(true);
  return store_.get();
}

void ViewStore::Failed(const Error& error) {
  metrics_->AddError();
  log_.Note(error.message);
  if (store_ && store_->connection_lost()) {
    store_.reset();
    metrics_->SetOpen(false);
  }
}

}  // namespace sparktrace::traceview
