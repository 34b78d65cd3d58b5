#pragma once
// The gRPC server that hosts the ForwardingService: binds the listener, and drains on shutdown.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/server.h>

#include "common/result.h"
#include "proxy/call_observer.h"
#include "proxy/forwarding_service.h"
#include "proxy/proxy_config.h"
#include "proxy/upstream_channels.h"

namespace sparktrace::proxy {

class ProxyServer {
 public:
  // Binds and starts serving. `upstream` and `observers` must outlive the server.
  static Result<std::unique_ptr<ProxyServer>> Start(const ProxyConfig& config, UpstreamChannels& upstream,
                                                    std::vector<CallObserver*> observers);

  // The address actually bound ("127.0.0.1:43121" when the configured port was 0).
  const std::string& address() const { return address_; }

  // Stops accepting calls at once, lets in-flight calls run until `drain_timeout`, then cancels
  // what is left and waits for it. Blocks; call once.
  void Shutdown(std::chrono::milliseconds drain_timeout);

 private:
  ProxyServer(std::unique_ptr<ForwardingService> service, std::unique_ptr<grpc::Server> server, std::string address)
      : service_(std::move(service)), server_(std::move(server)), address_(std::move(address)) {}

  std::unique_ptr<ForwardingService> service_;  // must outlive server_
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace sparktrace::proxy
