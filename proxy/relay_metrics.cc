#include "proxy/relay_metrics.h"

#include "common/metric_family_builders.h"

namespace sparktrace::proxy {

using metric_builders::Counter;
using metric_builders::Family;
using metric_builders::Gauge;

std::string_view RelayLimitName(RelayLimit limit) {
  switch (limit) {
    case RelayLimit::kMaxConnections: return "max_connections";
    case RelayLimit::kHandshakeTimeout: return "handshake_timeout";
    case RelayLimit::kIdleTimeout: return "idle_timeout";
    case RelayLimit::kStreamsPerConnection: return "max_streams_per_connection";
    case RelayLimit::kHeaderListSize: return "max_header_list_bytes";
    case RelayLimit::kTracedMessageBytes: return "max_traced_message_bytes";
    case RelayLimit::kBufferBudget: return "relay_buffer_budget";
    case RelayLimit::kConnectionBuffer: return "connection_buffer_budget";
    case RelayLimit::kUpstreamBackoff: return "upstream_backoff";
  }
  return "unknown";
}

namespace {

// A family of one unlabelled series.
prometheus::MetricFamily Single(std::string name, std::string help, prometheus::MetricType type, double value) {
  auto family = Family(std::move(name), std::move(help), type);
  family.metric.push_back(type == prometheus::MetricType::Counter ? Counter({}, static_cast<std::uint64_t>(value))
                                                                  : Gauge({}, value));
  return family;
}

}  // namespace

std::vector<prometheus::MetricFamily> RelayMetrics::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  auto hits = Family("sparktrace_relay_limit_hits_total",
                     "Times a bound of the data path bit, by limit (the flag of the same name; see README, "
                     "Operating it)",
                     prometheus::MetricType::Counter);
  for (std::size_t i = 0; i < kRelayLimitCount; ++i) {
    const auto limit = static_cast<RelayLimit>(i);
    hits.metric.push_back(Counter({{"limit", std::string(RelayLimitName(limit))}}, stats_.hits(limit)));
  }
  families.push_back(std::move(hits));
  const auto gauge = prometheus::MetricType::Gauge;
  families.push_back(Single("sparktrace_relay_client_connections", "Client connections open now (gRPC port)", gauge,
                            static_cast<double>(stats_.client_connections())));
  families.push_back(Single("sparktrace_relay_buffer_budget_bytes",
                            "Bytes the relay may hold for all calls together (--relay-buffer-budget)", gauge,
                            static_cast<double>(budget_.limit())));
  families.push_back(Single("sparktrace_relay_buffer_granted_bytes",
                            "Receive windows granted to peers plus traced message bytes kept: the most the relay can "
                            "be made to hold now",
                            gauge, static_cast<double>(budget_.taken())));
  families.push_back(Single("sparktrace_relay_buffer_granted_high_water_bytes",
                            "The highest sparktrace_relay_buffer_granted_bytes since start", gauge,
                            static_cast<double>(budget_.high_water())));
  families.push_back(Single("sparktrace_relay_idle_connections_evicted_total",
                            "Client connections with no open call (or only a preface) sent GOAWAY and closed to "
                            "admit a new client at --max-connections, the one idle longest first",
                            prometheus::MetricType::Counter, static_cast<double>(stats_.idle_connections_evicted())));
  families.push_back(Single("sparktrace_upstream_connect_attempts_total",
                            "Connections the proxy tried to open to the upstream (each failure also counts in "
                            "sparktrace_upstream_connect_failures_total)",
                            prometheus::MetricType::Counter, static_cast<double>(stats_.upstream_connect_attempts())));
  return families;
}

}  // namespace sparktrace::proxy
