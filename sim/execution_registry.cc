#include "sim/execution_registry.h"

#include <algorithm>
#include <utility>

#include "sim/ids.h"

namespace sparktrace::sim {

grpc::Status ExecutionRegistry::Session(const SessionKey& key, const std::optional<std::string>& observed,
                                        std::string* server_side_session_id) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = sessions_.try_emplace(key);
  if (inserted) it->second.server_side_session_id = NewUuid();
  if (observed && !observed->empty() && *observed != it->second.server_side_session_id) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "[INVALID_HANDLE.SESSION_CHANGED] The existing Spark server driver instance has "
                        "restarted. Please reconnect. (sparktrace-sim: observed server-side session " +
                            *observed + ", current " + it->second.server_side_session_id + ")");
  }
  *server_side_session_id = it->second.server_side_session_id;
  return grpc::Status::OK;
}

grpc::Status ExecutionRegistry::Add(const SessionKey& key, std::shared_ptr<Execution> execution) {
  std::lock_guard lock(mu_);
  auto& executions = sessions_[key].executions;
  const std::string operation_id = execution->ids().operation_id;
  if (!executions.try_emplace(operation_id, std::move(execution)).second) {
    return grpc::Status(grpc::StatusCode::INTERNAL, "[INVALID_HANDLE.OPERATION_ALREADY_EXISTS] The handle " +
                                                        operation_id +
                                                        " is invalid. Operation already exists.");
  }
  return grpc::Status::OK;
}

std::shared_ptr<Execution> ExecutionRegistry::Find(const SessionKey& key,
                                                   const std::string& operation_id) const {
  std::lock_guard lock(mu_);
  const auto session = sessions_.find(key);
  if (session == sessions_.end()) return nullptr;
  const auto found = session->second.executions.find(operation_id);
  return found == session->second.executions.end() ? nullptr : found->second;
}

void ExecutionRegistry::Remove(const SessionKey& key, const std::string& operation_id) {
  std::shared_ptr<Execution> removed;
  {
    std::lock_guard lock(mu_);
    const auto session = sessions_.find(key);
    if (session == sessions_.end()) return;
    const auto found = session->second.executions.find(operation_id);
    if (found == session->second.executions.end()) return;
    removed = std::move(found->second);
    session->second.executions.erase(found);
  }
  removed->Interrupt();
}

std::vector<std::string> ExecutionRegistry::Interrupt(const SessionKey& key, InterruptScope scope,
                                                      const std::string& value) {
  std::vector<std::string> interrupted;
  std::lock_guard lock(mu_);
  const auto session = sessions_.find(key);
  if (session == sessions_.end()) return interrupted;
  for (const auto& [operation_id, execution] : session->second.executions) {
    const auto& tags = execution->ids().tags;
    const bool in_scope =
        scope == InterruptScope::kAll ||
        (scope == InterruptScope::kTag && std::find(tags.begin(), tags.end(), value) != tags.end()) ||
        (scope == InterruptScope::kOperationId && operation_id == value);
    // Execution::Interrupt only takes its own mutex and never calls back: safe under mu_.
    if (in_scope && execution->Interrupt()) interrupted.push_back(operation_id);
  }
  return interrupted;
}

void ExecutionRegistry::ReleaseSession(const SessionKey& key) {
  SessionState released;
  {
    std::lock_guard lock(mu_);
    const auto session = sessions_.find(key);
    if (session == sessions_.end()) return;
    released = std::move(session->second);
    sessions_.erase(session);
  }
  for (const auto& [operation_id, execution] : released.executions) execution->Interrupt();
}

void ExecutionRegistry::InterruptAll() {
  std::lock_guard lock(mu_);
  for (const auto& [key, session] : sessions_) {
    for (const auto& [operation_id, execution] : session.executions) execution->Interrupt();
  }
}

}  // namespace sparktrace::sim
