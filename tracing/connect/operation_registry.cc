#include "tracing/connect/operation_registry.h"

#include <algorithm>

#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::connect {
namespace {

constexpr int kCancelled = 1;
constexpr int kDeadlineExceeded = 4;
constexpr int kInternal = 13;
constexpr int kUnavailable = 14;

bool Ended(const Operation& operation) { return operation.ended || operation.ending.has_value(); }

}  // namespace

std::string_view OperationOutcomeName(OperationOutcome outcome) {
  switch (outcome) {
    case OperationOutcome::kCompleted:
      return "completed";
    case OperationOutcome::kFailed:
      return "failed";
    case OperationOutcome::kInterrupted:
      return "interrupted";
    case OperationOutcome::kReleased:
      return "released";
    case OperationOutcome::kAbandoned:
      return "abandoned";
    case OperationOutcome::kUnfinished:
      return "unfinished";
  }
  return "unfinished";
}

bool IsReattachableFailure(int status_code, std::string_view message) {
  // What PySpark's and the Scala client's retry policies reattach after: a broken connection, a
  // client-side deadline or cancel of the one call, and the server's "your cursor's stream is gone".
  if (status_code == kUnavailable || status_code == kCancelled || status_code == kDeadlineExceeded)
    return true;
  return status_code == kInternal && message.find("INVALID_CURSOR.DISCONNECTED") != std::string_view::npos;
}

OperationRegistry::OperationRegistry(OperationSink& sink, OperationRegistryOptions options)
    : sink_(sink), options_(options), sweeper_([this] { RunSweeper(); }) {}

OperationRegistry::~OperationRegistry() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_sweeper_.notify_all();
  sweeper_.join();
}

std::pair<std::shared_ptr<Operation>, bool> OperationRegistry::Start(Operation operation) {
  std::vector<std::shared_ptr<Operation>> evicted;
  std::shared_ptr<Operation> result;
  bool created = false;
  {
    std::lock_guard lock(mu_);
    if (!operation.operation_id.empty()) {
      auto existing = by_id_.find(operation.operation_id);
      if (existing != by_id_.end() && !Ended(*existing->second)) {
        existing->second->open_calls += 1;
        existing->second->last_activity = operation.started_at;
        return {existing->second, false};
      }
    }
    result = Track(std::move(operation), evicted);
    created = true;
  }
  Deliver(evicted);
  return {result, created};
}

std::shared_ptr<Operation> OperationRegistry::Track(Operation operation,
                                                    std::vector<std::shared_ptr<Operation>>& evicted) {
  operation.open_calls = 1;
  operation.last_activity = operation.started_at;
  operation.last_call_end = operation.started_at;
  auto result = std::make_shared<Operation>(std::move(operation));
  if (!result->operation_id.empty()) {
    if (by_id_.size() >= options_.max_operations) EvictOldestIdle(result->started_at, evicted);
    by_id_[result->operation_id] = result;
  }
  return result;
}

void OperationRegistry::Identify(const std::shared_ptr<Operation>& operation,
                                 const std::string& operation_id) {
  if (operation_id.empty()) return;
  std::vector<std::shared_ptr<Operation>> evicted;
  {
    std::lock_guard lock(mu_);
    if (!operation->operation_id.empty() || Ended(*operation)) return;
    operation->operation_id = operation_id;
    if (by_id_.size() >= options_.max_operations) EvictOldestIdle(operation->last_activity, evicted);
    by_id_.try_emplace(operation_id, operation);
  }
  Deliver(evicted);
}

std::shared_ptr<Operation> OperationRegistry::Attach(const std::string& operation_id, OperationEvent event,
                                                     bool is_reattach) {
  std::lock_guard lock(mu_);
  auto found = by_id_.find(operation_id);
  if (found == by_id_.end() || found->second->ended) return nullptr;
  Operation& operation = *found->second;
  operation.open_calls += 1;
  operation.last_activity = event.at;
  if (is_reattach) operation.reattaches += 1;
  if (!event.name.empty()) operation.AddEvent(std::move(event.name), event.at, std::move(event.attributes));
  return found->second;
}

ReattachTarget OperationRegistry::Reattach(const std::string& operation_id, OperationEvent event,
                                           Operation unseen) {
  std::vector<std::shared_ptr<Operation>> evicted;
  ReattachTarget target;
  {
    std::lock_guard lock(mu_);
    auto found = by_id_.find(operation_id);
    if (found != by_id_.end() && found->second->ended) {
      target.ended = OperationSpanInfo::Of(*found->second);
      return target;
    }
    if (found == by_id_.end()) {
      if (auto ended = ended_.find(operation_id); ended != ended_.end()) {
        target.ended = ended->second;
        return target;
      }
      unseen.operation_id = operation_id;
      target.operation = Track(std::move(unseen), evicted);
      target.first_seen = true;
    } else {
      target.operation = found->second;
      target.operation->open_calls += 1;
    }
    Operation& operation = *target.operation;
    operation.last_activity = event.at;
    operation.reattaches += 1;
    if (!event.name.empty()) operation.AddEvent(std::move(event.name), event.at, std::move(event.attributes));
  }
  Deliver(evicted);
  return target;
}

void OperationRegistry::RecordFirstResponse(const std::shared_ptr<Operation>& operation, SteadyTime at,
                                            const std::string& server_side_session_id) {
  std::lock_guard lock(mu_);
  if (operation->server_side_session_id.empty()) operation->server_side_session_id = server_side_session_id;
  if (operation->first_response_at) return;
  operation->first_response_at = at;
  operation->AddEvent("first_response", at);
}

void OperationRegistry::RecordFirstBatch(const std::shared_ptr<Operation>& operation, SteadyTime at) {
  std::lock_guard lock(mu_);
  if (operation->first_batch_at) return;
  operation->first_batch_at = at;
  operation->AddEvent("first_batch", at);
}

std::optional<Operation> OperationRegistry::RecordProgress(const std::shared_ptr<Operation>& operation,
                                                           const spark_connect::ResponseInfo& response,
                                                           SteadyTime at) {
  std::lock_guard lock(mu_);
  if (operation->ended) return std::nullopt;
  operation->progress.Update(response, at, options_.progress);
  // Once its ending is decided the operation is no longer shown running, only its final span.
  if (operation->ending || !operation->progress.TakeSnapshotTurn(at, options_.progress)) return std::nullopt;
  return *operation;
}

void OperationRegistry::RecordResultComplete(const std::shared_ptr<Operation>& operation, SteadyTime at) {
  std::lock_guard lock(mu_);
  if (operation->result_complete_at) return;
  operation->result_complete_at = at;
  operation->AddEvent("result_complete", at);
  // Without reattach, the result is all there: whatever the stream does next (a client that
  // cancels once it has read it) does not make it a failure.
  if (!operation->reattachable) Decide(*operation, {at, OperationOutcome::kCompleted, 0, {}});
}

void OperationRegistry::CallEnded(const std::shared_ptr<Operation>& operation, const OperationCallEnd& end) {
  std::vector<std::shared_ptr<Operation>> ready;
  {
    std::lock_guard lock(mu_);
    Operation& op = *operation;
    if (op.ended) return;
    op.open_calls -= 1;
    op.last_activity = end.at;
    op.last_call_end = std::max(op.last_call_end, end.at);
    op.rows += end.rows;
    op.arrow_bytes += end.arrow_bytes;
    op.batches += end.batches;

    // Only an operation with an id can be come back to; one without can end no other way.
    const bool can_come_back = op.reattachable && !op.operation_id.empty();
    if (!op.ending && end.role == OperationCallEnd::Role::kStream) {
      if (end.status_code == 0) {
        if (!op.result_complete_at && can_come_back) {
          op.AddEvent("stream_cut", end.at);
        } else if (!op.reattachable || !can_come_back) {
          Decide(op, {end.at, OperationOutcome::kCompleted, 0, {}});
        }
        // Reattachable and complete: Spark keeps the results until ReleaseExecute.
      } else {
        op.AddEvent("error", end.at,
                    {{std::string(kRpcGrpcStatusCodeKey), std::int64_t{end.status_code}},
                     {"message", end.status_message}});
        if (op.interrupt_requested) {
          Decide(op, {end.at, OperationOutcome::kInterrupted, 0, {}});
        } else if (!can_come_back || !IsReattachableFailure(end.status_code, end.status_message)) {
          Decide(op, {end.at, OperationOutcome::kFailed, end.status_code, end.status_message});
        }
      }
    } else if (!op.ending && end.role == OperationCallEnd::Role::kReleaseAll && end.status_code == 0) {
      Decide(op, {end.at,
                  op.result_complete_at ? OperationOutcome::kCompleted : OperationOutcome::kReleased,
                  0,
                  {}});
    }
    if (op.ending && op.open_calls <= 0) Retire(operation, ready);
  }
  Deliver(ready);
}

std::shared_ptr<Operation> OperationRegistry::InterruptRequested(const InterruptRequest& request) {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Operation>> matched;
  if (request.scope == InterruptRequest::Scope::kOperation) {
    auto found = by_id_.find(request.target);
    if (found != by_id_.end() && !found->second->ended) matched.push_back(found->second);
  } else {
    for (const auto& [id, operation] : by_id_) {
      if (operation->ended || operation->session_id != request.session_id) continue;
      const auto& tags = operation->tags;
      if (request.scope == InterruptRequest::Scope::kTag &&
          std::find(tags.begin(), tags.end(), request.target) == tags.end()) {
        continue;
      }
      matched.push_back(operation);
    }
  }
  for (const auto& operation : matched) {
    if (operation->ending) continue;
    operation->interrupt_requested = true;
    operation->last_activity = request.at;
    operation->AddEvent("interrupt", request.at, request.attributes);
  }
  if (matched.empty() || request.scope == InterruptRequest::Scope::kSession) return nullptr;
  auto parent = *std::min_element(matched.begin(), matched.end(),
                                  [](const auto& a, const auto& b) { return a->started_at < b->started_at; });
  parent->open_calls += 1;
  return parent;
}

void OperationRegistry::Interrupted(const std::vector<std::string>& operation_ids, SteadyTime at,
                                    const std::vector<Attribute>& interrupt_attributes) {
  std::vector<std::shared_ptr<Operation>> ready;
  {
    std::lock_guard lock(mu_);
    for (const std::string& id : operation_ids) {
      auto found = by_id_.find(id);
      if (found == by_id_.end() || found->second->ended) continue;
      Operation& op = *found->second;
      // Usually already marked by InterruptRequested; not when the request named no known tag.
      if (!op.interrupt_requested) op.AddEvent("interrupt", at, interrupt_attributes);
      op.interrupt_requested = true;
      op.last_activity = at;
      if (Decide(op, {at, OperationOutcome::kInterrupted, 0, {}})) Retire(found->second, ready);
    }
  }
  Deliver(ready);
}

void OperationRegistry::SessionReleased(const std::string& session_id, SteadyTime at) {
  std::vector<std::shared_ptr<Operation>> ready;
  {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<Operation>> of_session;
    for (const auto& [id, operation] : by_id_) {
      if (operation->session_id == session_id && !operation->ending) of_session.push_back(operation);
    }
    for (const auto& operation : of_session) {
      operation->AddEvent("session_released", at);
      const auto outcome =
          operation->result_complete_at ? OperationOutcome::kCompleted : OperationOutcome::kReleased;
      if (Decide(*operation, {at, outcome, 0, {}})) Retire(operation, ready);
    }
  }
  Deliver(ready);
}

void OperationRegistry::Shutdown(SteadyTime at) {
  std::vector<std::shared_ptr<Operation>> ready;
  {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<Operation>> open;
    for (const auto& [id, operation] : by_id_) open.push_back(operation);
    for (const auto& operation : open) {
      Decide(*operation, {at, OperationOutcome::kUnfinished, 0, {}});
      operation->last_call_end = std::max(operation->last_call_end, at);
      Retire(operation, ready);
    }
  }
  Deliver(ready);
}

void OperationRegistry::Sweep(SteadyTime now) {
  std::vector<std::shared_ptr<Operation>> ready;
  {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<Operation>> idle;
    for (const auto& [id, operation] : by_id_) {
      if (operation->open_calls <= 0 && !operation->ending &&
          now - operation->last_activity >= options_.linger) {
        idle.push_back(operation);
      }
    }
    for (const auto& operation : idle) {
      const auto outcome =
          operation->result_complete_at ? OperationOutcome::kCompleted : OperationOutcome::kAbandoned;
      if (Decide(*operation, {operation->last_call_end, outcome, 0, {}})) Retire(operation, ready);
    }
  }
  Deliver(ready);
}

std::optional<OperationSpanInfo> OperationRegistry::SpanOf(std::string_view operation_id) const {
  std::lock_guard lock(mu_);
  auto found = by_id_.find(std::string(operation_id));
  if (found == by_id_.end()) return std::nullopt;
  return OperationSpanInfo::Of(*found->second);
}

std::optional<OperationSpanInfo> OperationRegistry::EndedSpanOf(std::string_view operation_id) const {
  std::lock_guard lock(mu_);
  auto found = ended_.find(std::string(operation_id));
  if (found == ended_.end()) return std::nullopt;
  return found->second;
}

std::size_t OperationRegistry::open_operations() const {
  std::lock_guard lock(mu_);
  return by_id_.size();
}

bool OperationRegistry::Decide(Operation& operation, OperationEnding ending) {
  if (!operation.ending) operation.ending = std::move(ending);
  return operation.open_calls <= 0;
}

void OperationRegistry::Retire(std::shared_ptr<Operation> operation,
                               std::vector<std::shared_ptr<Operation>>& out) {
  if (operation->ended) return;
  operation->ended = true;
  if (!operation->operation_id.empty()) {
    auto found = by_id_.find(operation->operation_id);
    if (found != by_id_.end() && found->second == operation) by_id_.erase(found);
    auto [remembered, inserted] =
        ended_.insert_or_assign(operation->operation_id, OperationSpanInfo::Of(*operation));
    if (inserted) ended_order_.push_back(remembered->first);
    if (ended_order_.size() > options_.max_remembered_ended) {
      ended_.erase(ended_order_.front());
      ended_order_.pop_front();
    }
  }
  out.push_back(std::move(operation));
}

void OperationRegistry::Deliver(const std::vector<std::shared_ptr<Operation>>& ended) {
  for (const auto& operation : ended) sink_.OnOperationEnded(*operation);
}

void OperationRegistry::EvictOldestIdle(SteadyTime now, std::vector<std::shared_ptr<Operation>>& out) {
  std::shared_ptr<Operation> oldest;
  for (const auto& [id, operation] : by_id_) {
    if (operation->open_calls > 0) continue;
    if (!oldest || operation->last_activity < oldest->last_activity) oldest = operation;
  }
  if (!oldest) return;  // every tracked operation has a call open: track one more rather than lie
  Decide(*oldest, {std::min(now, oldest->last_call_end), OperationOutcome::kAbandoned, 0, {}});
  Retire(oldest, out);
}

void OperationRegistry::RunSweeper() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_sweeper_.wait_for(lock, options_.sweep_interval, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    Sweep(std::chrono::steady_clock::now());
    lock.lock();
  }
}

}  // namespace sparktrace::tracing::connect
