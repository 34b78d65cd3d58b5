#include "proxy/call_metrics.h"

#include <map>
#include <string>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

namespace sparktrace::proxy {
namespace {

// A counter's value; 0 for a series never created.
double CounterValue(prometheus::Registry& registry, const std::string& name,
                    const std::map<std::string, std::string>& labels) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::map<std::string, std::string> metric_labels;
      for (const auto& label : metric.label) metric_labels[label.name] = label.value;
      if (metric_labels == labels) return metric.counter.value;
    }
  }
  return 0;
}

TEST(CallMetrics, CountsWireBytesAndUndecodableMessagesPerMethodAndDirection) {
  constexpr char kMethod[] = "/spark.connect.SparkConnectService/ExecutePlan";
  prometheus::Registry registry;
  CallMetrics metrics(registry);
  const ClientMetadata metadata;
  UpstreamHeaderOverrides overrides;
  const auto tap = metrics.OnCallStarted({.method = kMethod,
                                          .peer = "ipv4:127.0.0.1:5555",
                                          .authority = "proxy:15002",
                                          .client_metadata = metadata,
                                          .started_at = std::chrono::steady_clock::now(),
                                          .upstream_headers = overrides});
  ASSERT_NE(tap, nullptr);
  EXPECT_FALSE(tap->NeedsMessageBytes()) << "sizes come with every message";
  EXPECT_EQ(metrics.active_calls(), 1);

  // Compressed with an encoding the proxy cannot decode: counted by its size on the wire.
  tap->OnRequestMessage({.wire_bytes = 300, .compressed = true, .bytes = {}, .bytes_available = false});
  tap->OnResponseMessage({.wire_bytes = 1000, .compressed = false, .bytes = {}, .bytes_available = false});
  tap->OnResponseMessage({.wire_bytes = 24, .compressed = false, .bytes = {}, .bytes_available = false});
  CallEnd end;
  end.code = StatusCode::kUnavailable;
  end.requests = {.messages = 1, .bytes = 300, .undecodable = 1};
  end.responses = {.messages = 2, .bytes = 1024, .undecodable = 0};
  tap->OnCallEnded(end);

  const auto in = std::map<std::string, std::string>{{"method", kMethod}, {"direction", "in"}};
  const auto out = std::map<std::string, std::string>{{"method", kMethod}, {"direction", "out"}};
  EXPECT_EQ(CounterValue(registry, "sparktrace_rpc_messages_total", in), 1);
  EXPECT_EQ(CounterValue(registry, "sparktrace_rpc_messages_total", out), 2);
  EXPECT_EQ(CounterValue(registry, "sparktrace_rpc_bytes_total", in), 300);
  EXPECT_EQ(CounterValue(registry, "sparktrace_rpc_bytes_total", out), 1024);
  EXPECT_EQ(CounterValue(registry, "sparktrace_rpc_undecodable_messages_total", in), 1);
  EXPECT_EQ(CounterValue(registry, "sparktrace_rpc_undecodable_messages_total", out), 0);
  EXPECT_EQ(
      CounterValue(registry, "sparktrace_rpc_calls_total", {{"method", kMethod}, {"code", "UNAVAILABLE"}}),
      1);
  EXPECT_EQ(metrics.active_calls(), 0);
}

}  // namespace
}  // namespace sparktrace::proxy
