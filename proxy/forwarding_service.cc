#include "proxy/forwarding_service.h"

#include "proxy/proxy_call.h"

namespace sparktrace::proxy {

grpc::ServerGenericBidiReactor* ForwardingService::CreateReactor(grpc::GenericCallbackServerContext* context) {
  return ProxyCall::Start(context, upstream_, observers_);
}

}  // namespace sparktrace::proxy
