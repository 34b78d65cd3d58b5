#include "admin/admin_metrics.h"

#include <prometheus/client_metric.h>

#include <string>

#include "admin/libevent_log.h"

namespace sparktrace::admin {

AdminMetrics::AdminMetrics(prometheus::Registry& registry) {
  auto& refused = prometheus::BuildCounter()
                      .Name("sparktrace_admin_requests_refused_total")
                      .Help(
                          "Admin HTTP requests and connections refused or closed by a limit, by reason "
                          "(docs/admin-limits.md)")
                      .Register(registry);
  for (std::size_t i = 0; i < kRefuseReasonCount; ++i) {
    refused_[i] = &refused.Add({{"reason", std::string(RefuseReasonName(static_cast<RefuseReason>(i)))}});
  }
  connections_ = &prometheus::BuildGauge()
                      .Name("sparktrace_admin_connections")
                      .Help("Open connections on the admin HTTP port")
                      .Register(registry)
                      .Add({});
  probe_connections_ =
      &prometheus::BuildGauge()
           .Name("sparktrace_admin_probe_connections")
           .Help(
               "Open admin connections admitted past the connection caps for /healthz and /readyz "
               "alone (--admin-probe-connections)")
           .Register(registry)
           .Add({});
  accept_pauses_ = &prometheus::BuildCounter()
                        .Name("sparktrace_admin_accept_pauses_total")
                        .Help(
                            "Times the admin port stopped accepting for 100 ms because accept() failed "
                            "(out of file descriptors)")
                        .Register(registry)
                        .Add({});
  ui_requests_ = &prometheus::BuildGauge()
                      .Name("sparktrace_admin_ui_requests")
                      .Help("Trace-view requests waiting for or running on the admin server's UI thread")
                      .Register(registry)
                      .Add({});
}

prometheus::MetricFamily LibeventLogFamily() {
  prometheus::ClientMetric metric;
  metric.counter.value = static_cast<double>(SuppressedLibeventLogLines());
  return prometheus::MetricFamily{"sparktrace_libevent_log_suppressed_total",
                                  "libevent log lines dropped by the rate limit (admin/libevent_log.h)",
                                  prometheus::MetricType::Counter,
                                  {metric}};
}

}  // namespace sparktrace::admin
