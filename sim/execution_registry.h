#pragma once
// Sessions and operations of the simulator, keyed like Spark's: a session is (user_id,
// session_id) and gets one server_side_session_id for its lifetime; operations live inside it.
//
// Threads: all methods are thread-safe (one mutex; nothing blocks while holding it).

#include <grpcpp/support/status.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/execution.h"

namespace sparktrace::sim {

struct SessionKey {
  std::string user_id;
  std::string session_id;
  auto operator<=>(const SessionKey&) const = default;
};

class ExecutionRegistry {
 public:
  // The session's server-side id, creating the session on first use. `observed` is the
  // request's client_observed_server_side_session_id: a mismatch means the client talked to
  // another server (or a released session) and fails like Spark, INVALID_HANDLE.SESSION_CHANGED.
  grpc::Status Session(const SessionKey& key, const std::optional<std::string>& observed,
                       std::string* server_side_session_id);

  // Registers a new execution; fails with INVALID_HANDLE.OPERATION_ALREADY_EXISTS for a
  // duplicate operation id in the session.
  grpc::Status Add(const SessionKey& key, std::shared_ptr<Execution> execution);

  // Null when unknown.
  std::shared_ptr<Execution> Find(const SessionKey& key, const std::string& operation_id) const;

  // Forgets the execution, interrupting it if it still runs (ReleaseExecute release_all).
  void Remove(const SessionKey& key, const std::string& operation_id);

  enum class InterruptScope { kAll, kTag, kOperationId };
  // Interrupts the session's running executions in scope; returns their operation ids.
  std::vector<std::string> Interrupt(const SessionKey& key, InterruptScope scope, const std::string& value);

  // Ends the session: interrupts and forgets its executions, and forgets its server-side id.
  void ReleaseSession(const SessionKey& key);

  // Interrupts everything, so that blocked stream handlers return before the server stops.
  void InterruptAll();

 private:
  struct SessionState {
    std::string server_side_session_id;
    std::map<std::string, std::shared_ptr<Execution>> executions;  // by operation id
  };

  mutable std::mutex mu_;
  std::map<SessionKey, SessionState> sessions_;
};

}  // namespace sparktrace::sim
