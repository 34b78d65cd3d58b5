#include "proxy/proxy_server.h"

#include <climits>

#include <grpc/grpc.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

namespace sparktrace::proxy {

Result<std::unique_ptr<ProxyServer>> ProxyServer::Start(const ProxyConfig& config, UpstreamChannels& upstream,
                                                        std::vector<CallObserver*> observers) {
  auto service = std::make_unique<ForwardingService>(upstream, std::move(observers));
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (config.tls) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({config.tls->key_pem, config.tls->cert_pem});
    credentials = grpc::SslServerCredentials(ssl);
  } else {
    credentials = grpc::InsecureServerCredentials();
  }

  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(config.listen, credentials, &selected_port);
  builder.RegisterCallbackGenericService(service.get());
  const int max_bytes = static_cast<int>(std::min<std::uint64_t>(config.max_message_bytes, INT_MAX));
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  // A second proxy on the same port must fail to start, not silently share the traffic.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || selected_port == 0) {
    return Error{ErrorCode::kIo, "cannot listen on " + config.listen + " (address in use or not local?)"};
  }
  const std::string host = config.listen.substr(0, config.listen.rfind(':'));
  return std::unique_ptr<ProxyServer>(
      new ProxyServer(std::move(service), std::move(server), host + ":" + std::to_string(selected_port)));
}

void ProxyServer::Shutdown(std::chrono::milliseconds drain_timeout) {
  server_->Shutdown(std::chrono::system_clock::now() + drain_timeout);
  server_->Wait();
}

}  // namespace sparktrace::proxy
