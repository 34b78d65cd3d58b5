#include "tracing/connect/tracing_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <set>
#include <string>

namespace sparktrace::tracing::connect {
namespace {

std::set<std::string> TracedCallOrigins(prometheus::Registry& registry) {
  std::set<std::string> origins;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != "sparktrace_traced_calls_total") continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      for (const auto& label : metric.label) {
        if (label.name == "origin" && metric.counter.value == 0) origins.insert(label.value);
      }
    }
  }
  return origins;
}

// A dashboard's rate() over a series that appears only with its first call shows a gap, not 0.
TEST(TracingMetrics, EveryTraceOriginSeriesExistsAtZeroBeforeTheFirstCall) {
  prometheus::Registry registry;
  TracingMetrics metrics{registry};
  EXPECT_EQ(TracedCallOrigins(registry), (std::set<std::string>{"airflow", "client", "new"}));
  metrics.TracedCall(TraceOrigin::kAirflow);
  EXPECT_EQ(TracedCallOrigins(registry), (std::set<std::string>{"client", "new"}));
}

}  // namespace
}  // namespace sparktrace::tracing::connect
