#include "proxy/proxy_call.h"

#include <string_view>

#include "proxy/metadata_policy.h"
#include "proxy/upstream_channels.h"

namespace sparktrace::proxy {
namespace {

std::string_view View(const grpc::string_ref& ref) { return {ref.data(), ref.size()}; }

}  // namespace

grpc::ServerGenericBidiReactor* ProxyCall::Start(grpc::GenericCallbackServerContext* context,
                                                 UpstreamChannels& upstream,
                                                 std::span<CallObserver* const> observers) {
  const auto now = std::chrono::steady_clock::now();
  const std::string peer = context->peer();
  const CallStart start{context->method(), peer, context->client_metadata(), now};
  std::vector<std::unique_ptr<CallTap>> taps;
  for (CallObserver* observer : observers) {
    if (auto tap = observer->OnCallStarted(start)) taps.push_back(std::move(tap));
  }
  // The call owns itself from here on: gRPC's reactor protocol ends with OnDone on both reactors,
  // and the last of them deletes the call (see OnReactorDone).
  auto call = std::unique_ptr<ProxyCall>(new ProxyCall(context, std::move(taps)));
  call->StartUpstream(upstream);
  return &call.release()->downstream_;
}

ProxyCall::ProxyCall(grpc::GenericCallbackServerContext* context, std::vector<std::unique_ptr<CallTap>> taps)
    : context_(context), started_at_(std::chrono::steady_clock::now()), taps_(std::move(taps)) {}

void ProxyCall::StartUpstream(UpstreamChannels& upstream) {
  // Deadline and cancellation of the client's call propagate to the upstream call through gRPC
  // core's parent-call link, without a timer of ours.
  upstream_context_ = grpc::ClientContext::FromCallbackServerContext(*context_);
  std::string_view user_agent;
  for (const auto& [key_ref, value_ref] : context_->client_metadata()) {
    const std::string_view key = View(key_ref);
    if (key == "user-agent") user_agent = View(value_ref);
    if (!IsForwardedRequestHeader(key)) continue;
    // `-bin` values arrive decoded; AddMetadata re-encodes them, byte-exact.
    upstream_context_->AddMetadata(std::string(key), std::string(View(value_ref)));
  }
  channel_ = upstream.ForUserAgent(user_agent);
  grpc::GenericStub stub(channel_);
  stub.PrepareBidiStreamingCall(upstream_context_.get(), context_->method(), grpc::StubOptions(), &upstream_);
  // One hold for the reads and one for the writes that the downstream reactor's threads start on
  // the upstream reactor; each is released once we will start no more of its kind.
  upstream_.AddMultipleHolds(2);
  Ops ops;
  {
    std::lock_guard lock(mu_);
    PlanLocked(ops);
  }
  Run(ops);
  upstream_.StartCall();
}

void ProxyCall::OnClientReadDone(bool ok) {
  std::size_t length = 0;
  if (ok) {
    // The read target is ours alone until the pump is told the read finished.
    const grpc::ByteBuffer& message = *requests_.read_target();
    length = message.Length();
    for (auto& tap : taps_) tap->OnRequestMessage(message);
  }
  Ops ops;
  {
    std::lock_guard lock(mu_);
    if (ok) {
      request_count_.messages += 1;
      request_count_.bytes += length;
      requests_.ReadSucceeded();
    } else {
      requests_.ReadFailed();  // half-close (or a failed call, which OnCancel also reports)
    }
    PlanLocked(ops);
  }
  Run(ops);
}

void ProxyCall::OnUpstreamWriteDone(bool ok) {
  Ops ops;
  {
    std::lock_guard lock(mu_);
    requests_.WriteFinished();
    // A failed write means the upstream call is over; its status arrives through OnUpstreamDone.
    if (!ok) upstream_writes_failed_ = true;
    PlanLocked(ops);
  }
  Run(ops);
}

void ProxyCall::OnUpstreamHeaders(bool ok) {
  if (ok) {
    // Written before any downstream operation can send headers: writes wait for headers_.
    for (const auto& [key_ref, value_ref] : upstream_context_->GetServerInitialMetadata()) {
      if (!IsForwardedResponseHeader(View(key_ref))) continue;
      context_->AddInitialMetadata(std::string(View(key_ref)), std::string(View(value_ref)));
    }
  }
  Ops ops;
  {
    std::lock_guard lock(mu_);
    // Headers go out as soon as the upstream's arrive, even without application metadata: a client
    // may be waiting for them on a stream that stays quiet for a long time. Without headers (the
    // upstream call failed first, or answered trailers-only) the status carries them.
    if (ok && !broken_) {
      headers_ = HeaderState::kSending;
      ops.client_send_headers = true;
    } else {
      headers_ = HeaderState::kNone;
    }
    PlanLocked(ops);
  }
  Run(ops);
}

void ProxyCall::OnClientHeadersSent(bool ok) {
  Ops ops;
  {
    std::lock_guard lock(mu_);
    headers_ = HeaderState::kSent;
    if (!ok) BreakLocked(ops);
    PlanLocked(ops);
  }
  Run(ops);
}

void ProxyCall::OnUpstreamReadDone(bool ok) {
  std::size_t length = 0;
  if (ok) {
    const grpc::ByteBuffer& message = *responses_.read_target();
    length = message.Length();
    for (auto& tap : taps_) tap->OnResponseMessage(message);
  }
  Ops ops;
  {
    std::lock_guard lock(mu_);
    if (ok) {
      if (!first_response_at_) first_response_at_ = std::chrono::steady_clock::now();
      response_count_.messages += 1;
      response_count_.bytes += length;
      responses_.ReadSucceeded();
    } else {
      responses_.ReadFailed();
      upstream_reads_ended_ = true;
    }
    PlanLocked(ops);
  }
  Run(ops);
}

void ProxyCall::OnClientWriteDone(bool ok) {
  Ops ops;
  {
    std::lock_guard lock(mu_);
    responses_.WriteFinished();
    if (!ok) BreakLocked(ops);  // the client is gone
    PlanLocked(ops);
  }
  Run(ops);
}

void ProxyCall::OnClientCancelled() {
  Ops ops;
  {
    std::lock_guard lock(mu_);
    BreakLocked(ops);
    PlanLocked(ops);
  }
  Run(ops);
}

void ProxyCall::OnUpstreamDone(const grpc::Status& status) {
  // Trailers are only sent by Finish, which cannot have started yet: it waits for this status.
  for (const auto& [key_ref, value_ref] : upstream_context_->GetServerTrailingMetadata()) {
    if (!IsForwardedResponseHeader(View(key_ref))) continue;
    context_->AddTrailingMetadata(std::string(View(key_ref)), std::string(View(value_ref)));
  }
  Ops ops;
  {
    std::lock_guard lock(mu_);
    upstream_status_ = status;
    PlanLocked(ops);
  }
  Run(ops);
  OnReactorDone();
}

void ProxyCall::OnReactorDone() {
  if (reactors_running_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::unique_ptr<ProxyCall> self(this);
  NotifyCallEnded();
}

void ProxyCall::BreakLocked(Ops& ops) {
  if (broken_) return;
  broken_ = true;
  if (!upstream_status_) ops.upstream_cancel = true;
}

void ProxyCall::PlanLocked(Ops& ops) {
  // Client → upstream: read while there is room, write what was read, then half-close upstream.
  const bool forwarding_requests = !broken_ && !upstream_reads_ended_ && !upstream_writes_failed_;
  if (forwarding_requests && requests_.CanStartRead()) {
    requests_.ReadStarted();
    ops.client_read = true;
  }
  if (forwarding_requests && requests_.CanStartWrite()) {
    requests_.WriteStarted();
    ops.upstream_write = true;
  }
  if (forwarding_requests && requests_.source_done() && requests_.Drained() && !writes_done_started_) {
    writes_done_started_ = true;
    ops.upstream_writes_done = true;
  }
  if (upstream_write_hold_ && !requests_.write_pending() && (writes_done_started_ || !forwarding_requests)) {
    upstream_write_hold_ = false;
    ++ops.upstream_holds_released;
  }

  // Upstream → client: the same, gated on the response headers having been dealt with.
  if (upstream_read_hold_ && !broken_ && responses_.CanStartRead()) {
    responses_.ReadStarted();
    ops.upstream_read = true;
  }
  if (upstream_read_hold_ && !responses_.read_pending() && (responses_.source_done() || broken_)) {
    upstream_read_hold_ = false;
    ++ops.upstream_holds_released;
  }
  const bool headers_done = headers_ == HeaderState::kSent || headers_ == HeaderState::kNone;
  if (!broken_ && headers_done && !finish_started_ && responses_.CanStartWrite()) {
    responses_.WriteStarted();
    ops.client_write = true;
  }

  // Finish only after the upstream's status and after the last response was written.
  if (!finish_started_ && upstream_status_ && threads_starting_ops_ == 0 && headers_ != HeaderState::kSending &&
      !responses_.write_pending() && (responses_.Drained() || broken_)) {
    finish_started_ = true;
    client_status_ = broken_ && upstream_status_->ok()
                         ? grpc::Status(grpc::StatusCode::CANCELLED, "client went away")
                         : *upstream_status_;
    ops.client_finish = true;
  }
  if (ops.AnyBeforeFinish()) ++threads_starting_ops_;
}

void ProxyCall::Run(Ops ops) {
  while (ops.AnyBeforeFinish()) {
    // Pointers into the pumps stay valid: each buffer is only touched again by the completion of
    // the operation started on it here.
    if (ops.upstream_cancel) upstream_context_->TryCancel();
    if (ops.upstream_read) upstream_.StartRead(responses_.read_target());
    if (ops.upstream_write) upstream_.StartWrite(requests_.write_source());
    if (ops.upstream_writes_done) upstream_.StartWritesDone();
    if (ops.client_read) downstream_.StartRead(requests_.read_target());
    if (ops.client_send_headers) downstream_.StartSendInitialMetadata();
    if (ops.client_write) downstream_.StartWrite(responses_.write_source());
    // Holds go after the operations they protect.
    for (int i = 0; i < ops.upstream_holds_released; ++i) upstream_.RemoveHold();
    // The Finish that our operations held back may now be due.
    const bool finish = ops.client_finish;
    ops = Ops{};
    std::lock_guard lock(mu_);
    --threads_starting_ops_;
    PlanLocked(ops);
    ops.client_finish = ops.client_finish || finish;
  }
  // Last: once Finish is started the downstream reactor may finish and the call be deleted.
  if (ops.client_finish) downstream_.Finish(*client_status_);
}

void ProxyCall::NotifyCallEnded() {
  if (taps_.empty()) return;
  CallEnd end;
  // grpc::Status::error_message() returns a copy in gRPC 1.51: keep it alive for the taps.
  const std::string error_message = client_status_ ? client_status_->error_message() : std::string();
  if (client_status_) end.code = client_status_->error_code();
  end.error_message = error_message;
  end.duration = std::chrono::steady_clock::now() - started_at_;
  if (first_response_at_) end.time_to_first_response = *first_response_at_ - started_at_;
  end.requests = request_count_;
  end.responses = response_count_;
  for (auto& tap : taps_) tap->OnCallEnded(end);
}

}  // namespace sparktrace::proxy
