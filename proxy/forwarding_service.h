#pragma once
// The generic gRPC service that accepts every method path and forwards it upstream.

#include <vector>

#include <grpcpp/generic/async_generic_service.h>

#include "proxy/call_observer.h"
#include "proxy/upstream_channels.h"

namespace sparktrace::proxy {

class ForwardingService final : public grpc::CallbackGenericService {
 public:
  // `upstream` and the observers must outlive the service (and so the gRPC server).
  ForwardingService(UpstreamChannels& upstream, std::vector<CallObserver*> observers)
      : upstream_(upstream), observers_(std::move(observers)) {}

  // Runs on a gRPC thread for each incoming call.
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override;

 private:
  UpstreamChannels& upstream_;
  const std::vector<CallObserver*> observers_;
};

}  // namespace sparktrace::proxy
