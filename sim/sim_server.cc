#include "sim/sim_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <string>
#include <utility>

#include "sim/ids.h"

namespace sparktrace::sim {

SimServer::SimServer(const SimConfig& config, std::unique_ptr<eventlog::LiveEventLog> event_log, StartTag)
    : config_(config), event_log_(std::move(event_log)), service_(config_, registry_, event_log_.get()) {}

SimServer::~SimServer() { Shutdown(std::chrono::milliseconds(0)); }

Result<std::unique_ptr<SimServer>> SimServer::Start(const SimConfig& config) {
  std::unique_ptr<eventlog::LiveEventLog> event_log;
  if (!config.event_log_dir.empty()) {
    eventlog::LiveEventLogOptions options;
    // A Kubernetes-style application id; the version our AnalyzePlan reports.
    std::string hex = NewUuid();
    std::erase(hex, '-');
    options.app.app_id = "spark-" + hex;
    options.app.spark_version = SimService::kSparkVersion;
    options.scenario = config.scenario;
    options.writer.directory = config.event_log_dir;
    options.writer.codec = config.event_log_codec;
    options.writer.rolling_max_bytes = config.event_log_rolling_bytes;
    options.time_scale = config.time_scale;
    auto started = eventlog::LiveEventLog::Start(std::move(options));
    if (!started.ok()) return started.error();
    event_log = std::move(*started);
  }
  auto server = std::make_unique<SimServer>(config, std::move(event_log), StartTag{});
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
  // Operations waiting for their simulated jobs return at once.
  if (event_log_) event_log_->Interrupt();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
  if (event_log_) event_log_->Finish();
}

}  // namespace sparktrace::sim
