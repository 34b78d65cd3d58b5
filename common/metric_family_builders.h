#pragma once
// Building blocks of hand-made Prometheus families (the feed's feed_metrics.cc and
// application_metric_families.cc, the relay's relay_metrics.cc): the figures are read at scrape time, so they are
// written as MetricFamily values rather than registered prometheus-cpp metrics.

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::metric_builders {

using Labels = std::vector<prometheus::ClientMetric::Label>;

inline prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

inline prometheus::ClientMetric Gauge(Labels labels, double value) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  return metric;
}

inline prometheus::ClientMetric Counter(Labels labels, std::uint64_t value) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.counter.value = static_cast<double>(value);
  return metric;
}

}  // namespace sparktrace::metric_builders
