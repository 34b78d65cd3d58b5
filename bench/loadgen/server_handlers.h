// The upstream's generic service: dispatches each call by method name to a reactor.
#pragma once

#include <grpcpp/generic/async_generic_service.h>

namespace sparktrace::loadgen {

class LoadService final : public grpc::CallbackGenericService {
 public:
  // /bench.Load/Unary echoes the request; /bench.Load/Stream sends N messages of S bytes;
  // /bench.Load/Idle sends initial metadata and then nothing until cancelled.
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override;
};

}  // namespace sparktrace::loadgen
