#pragma once
// The forwarding core: an HTTP/2 frame relay (libevent + nghttp2) that accepts any gRPC call and
// relays it to the upstream Spark Connect server. It runs --threads relay workers
// (RelayWorker), each with its own event loop, listening socket and upstream connections; a
// call lives on the worker that accepted its connection.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "proxy/call_observer.h"
#include "proxy/call_registry.h"
#include "proxy/libevent_handles.h"
#include "proxy/proxy_config.h"
#include "proxy/relay_budget.h"
#include "proxy/relay_metrics.h"
#include "proxy/relay_stats.h"
#include "proxy/relayed_call.h"
#include "proxy/upstream_pool.h"

namespace sparktrace::proxy {

class RelayWorker;

class ProxyServer {
 public:
  // Binds and starts serving. `observers` must outlive the server.
  // `on_upstream_connect_failure` runs on a worker each time an upstream connection fails.
  static Result<std::unique_ptr<ProxyServer>> Start(const ProxyConfig& config, std::vector<CallObserver*> observers,
                                                    std::function<void()> on_upstream_connect_failure);
  ~ProxyServer();  // shuts down at once if Shutdown was not called
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  // The address actually bound ("127.0.0.1:43121" when the configured port was 0).
  const std::string& address() const { return address_; }

  // The relay's bounds on /metrics (sparktrace_relay_*); lives as long as the server.
  std::shared_ptr<const prometheus::Collectable> metrics() const { return metrics_; }
  // The client connection cap in force (--max-connections, lowered to fit the descriptor limit).
  std::int64_t max_connections() const { return max_connections_; }

  // Thread-safe: whether some upstream connection is up (for readiness).
  bool upstream_connected() const { return upstream_status_.connected.load(std::memory_order_relaxed) > 0; }

  // Closes the listeners and sends GOAWAY on every connection, without waiting for calls: when
  // this returns, a new connection is refused. Calls in flight continue. Idempotent.
  void StopAccepting();

  // Stops accepting (if not done yet), lets in-flight calls run until `drain_timeout`, then
  // cancels what is left and stops the workers. Blocks; idempotent.
  void Shutdown(std::chrono::milliseconds drain_timeout);

 private:
  ProxyServer() = default;

  std::unique_ptr<RelayBudget> budget_;
  RelayStats stats_;
  std::shared_ptr<RelayMetrics> metrics_;
  std::int64_t max_connections_ = 0;
  RelayEnvironment environment_;
  UpstreamStatus upstream_status_;
  LiveCalls live_calls_;
  SslContextPtr listener_tls_;
  SslContextPtr upstream_tls_;
  std::vector<std::unique_ptr<RelayWorker>> workers_;
  std::string address_;
  bool stopped_accepting_ = false;
  bool shut_down_ = false;
};

}  // namespace sparktrace::proxy
