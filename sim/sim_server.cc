#include "sim/sim_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

namespace sparktrace::sim {

SimServer::SimServer(const SimConfig& config, StartTag) : config_(config), service_(config_, registry_) {}

SimServer::~SimServer() { Shutdown(std::chrono::milliseconds(0)); }

Result<std::unique_ptr<SimServer>> SimServer::Start(const SimConfig& config) {
  auto server = std::make_unique<SimServer>(config, StartTag{});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config.max_message_bytes));
  builder.RegisterService(&server->service_);
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || port == 0) {
    if (server->server_) server->server_->Shutdown();
    server->shut_down_ = true;
    return Error{ErrorCode::kIo, "sim: cannot listen on " + config.listen};
  }
  server->address_ = config.listen.substr(0, config.listen.rfind(':')) + ":" + std::to_string(port);
  return server;
}

void SimServer::Shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) return;
  shut_down_ = true;
  registry_.InterruptAll();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
}

}  // namespace sparktrace::sim
