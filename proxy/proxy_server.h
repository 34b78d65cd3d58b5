#pragma once
// The gRPC server that accepts every method (async generic service) and forwards it upstream.
// It runs one worker thread per completion queue; a call is accepted on one queue and both its
// halves complete there, so each call lives on one thread.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "common/result.h"
#include "proxy/call_observer.h"
#include "proxy/proxy_call.h"
#include "proxy/proxy_config.h"
#include "proxy/upstream_channels.h"
#include "proxy/upstream_health.h"

namespace sparktrace::proxy {

class ProxyServer {
 public:
  // Binds and starts serving. `upstream` and `observers` must outlive the server.
  // `on_upstream_connect_failure` runs on a worker each time the upstream connection fails.
  static Result<std::unique_ptr<ProxyServer>> Start(const ProxyConfig& config, UpstreamChannels& upstream,
                                                    std::vector<CallObserver*> observers,
                                                    std::function<void()> on_upstream_connect_failure);
  ~ProxyServer();  // shuts down at once if Shutdown was not called
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  // The address actually bound ("127.0.0.1:43121" when the configured port was 0).
  const std::string& address() const { return address_; }

  // Thread-safe: whether the upstream connection is up (for readiness).
  bool upstream_connected() const { return health_ && health_->connected(); }

  // Closes the listener and sends GOAWAY on every connection, without waiting: when this returns,
  // a new connection is refused. Calls in flight continue. Idempotent.
  void StopAccepting();

  // Stops accepting (if not done yet), lets in-flight calls run until `drain_timeout`, then
  // cancels what is left, drains the queues and joins the workers. Blocks; idempotent.
  void Shutdown(std::chrono::milliseconds drain_timeout);

 private:
  ProxyServer() = default;

  grpc::AsyncGenericService service_;
  ProxyCallEnvironment environment_;
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UpstreamHealth> health_;  // watched on the first queue
  std::vector<std::thread> workers_;
  std::string address_;
  // Receives the core shutdown notification that StopAccepting asks for. Not polled, and drained
  // with the core API: grpc::CompletionQueue::Next would treat the raw tag as one of its own.
  std::unique_ptr<grpc::ServerCompletionQueue> stop_queue_;
  bool stopped_accepting_ = false;
  bool shut_down_ = false;
};

}  // namespace sparktrace::proxy
