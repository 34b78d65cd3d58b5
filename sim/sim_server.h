#pragma once
// The simulator's gRPC server: SimService on a listening port.
//
// Threads: Start/Shutdown from one controlling thread; gRPC runs the handlers on its own pool.
// Ownership: owns the registry, the service and the grpc::Server (destroyed in reverse order).

#include <grpcpp/server.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/result.h"
#include "sim/eventlog/live_event_log.h"
#include "sim/execution_registry.h"
#include "sim/sim_config.h"
#include "sim/sim_service.h"

namespace sparktrace::sim {

class SimServer {
 public:
  // Listens on config.listen; `config` is copied.
  static Result<std::unique_ptr<SimServer>> Start(const SimConfig& config);

  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;
  ~SimServer();

  // "host:port" with the port actually bound (resolves port 0).
  const std::string& address() const { return address_; }

  // Interrupts every execution (their streams end with OPERATION_CANCELED), then stops the
  // server, cancelling calls still open after `grace`, and ends the event log (ApplicationEnd,
  // final name). Idempotent.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  // Only Start builds a SimServer (make_unique needs a public constructor, hence the tag).
  struct StartTag {
    explicit StartTag() = default;
  };

 public:
  SimServer(const SimConfig& config, std::unique_ptr<eventlog::LiveEventLog> event_log, StartTag);

  // The event log being written (--event-log-dir); empty without one.
  std::string event_log_path() const { return event_log_ ? event_log_->path() : std::string(); }

 private:
  const SimConfig config_;
  ExecutionRegistry registry_;
  std::unique_ptr<eventlog::LiveEventLog> event_log_;
  SimService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  bool shut_down_ = false;
};

}  // namespace sparktrace::sim
