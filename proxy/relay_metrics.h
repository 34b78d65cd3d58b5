#pragma once
// /metrics for the relay's bounds: sparktrace_relay_limit_hits_total{limit}, the client
// connection gauge, the buffer budget (limit, granted now, high-water mark) and the upstream
// connection attempts. Read from RelayStats and RelayBudget at scrape time.

#include <prometheus/collectable.h>

#include <vector>

#include "proxy/relay_budget.h"
#include "proxy/relay_stats.h"

namespace sparktrace::proxy {

class RelayMetrics final : public prometheus::Collectable {
 public:
  // Both must outlive this object.
  RelayMetrics(const RelayStats& stats, const RelayBudget& budget) : stats_(stats), budget_(budget) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const RelayStats& stats_;
  const RelayBudget& budget_;
};

}  // namespace sparktrace::proxy
