#include "proxy/proxy_call.h"

#include <string_view>

#include "proxy/metadata_policy.h"
#include "proxy/upstream_channels.h"

namespace sparktrace::proxy {
namespace {

std::string_view View(const grpc::string_ref& ref) { return {ref.data(), ref.size()}; }

// The flush list of the worker running on this thread.
thread_local ProxyCall::FlushList* t_flush_list = nullptr;

}  // namespace

void ProxyCallEnvironment::CallStarted() {
  std::lock_guard lock(mu_);
  ++live_calls_;
}

void ProxyCallEnvironment::CallEnded() {
  std::lock_guard lock(mu_);
  if (--live_calls_ == 0) no_calls_.notify_all();
}

void ProxyCallEnvironment::WaitUntilNoCalls() {
  std::unique_lock lock(mu_);
  no_calls_.wait(lock, [this] { return live_calls_ == 0; });
}

void ProxyCall::SetThreadFlushList(FlushList* list) { t_flush_list = list; }

void ProxyCall::FlushList::Flush() {
  // A flush may not add to the list (writes only complete later), so plain iteration is safe.
  std::vector<ProxyCall*> calls;
  calls.swap(calls_);
  for (ProxyCall* call : calls) {
    call->flush_requested_ = false;
    call->StartWrites();
    call->StartReads();
    call->DeleteIfDone();
  }
}

void ProxyCall::Tag::Complete(bool ok) { call_->Handle(static_cast<Event>(event_), ok); }

void ProxyCall::Accept(ProxyCallEnvironment& environment, grpc::ServerCompletionQueue* queue) {
  // The call owns itself from here on: it is deleted once it is finished and nothing is
  // outstanding (or at once if the server shuts down before an RPC arrives).
  auto call = std::unique_ptr<ProxyCall>(new ProxyCall(environment, queue));
  ProxyCall* raw = call.release();
  raw->context_.AsyncNotifyWhenDone(raw->TagFor(kClientDone));
  environment.service->RequestCall(&raw->context_, &raw->stream_, queue, queue, raw->TagFor(kAccepted));
}

ProxyCall::ProxyCall(ProxyCallEnvironment& environment, grpc::ServerCompletionQueue* queue)
    : environment_(environment), queue_(queue) {
  for (std::uint8_t event = 0; event < kEventCount; ++event) {
    tags_[event].call_ = this;
    tags_[event].event_ = event;
  }
}

void* ProxyCall::TagFor(Event event) {
  ++pending_;
  // Workers cast tags back to Completion*, so that is the pointer to hand out.
  return static_cast<Completion*>(&tags_[event]);
}

void ProxyCall::Handle(Event event, bool ok) {
  --pending_;
  switch (event) {
    case kAccepted:
      if (!ok) {  // the server is shutting down: no RPC came, and the done tag never fires
        delete this;
        return;
      }
      environment_.CallStarted();
      if (environment_.accepting) Accept(environment_, queue_);  // keep one accept posted
      OnAccepted();
      break;
    case kClientDone:
      if (context_.IsCancelled()) Break();
      break;
    case kClientRead:
      OnClientRead(ok);
      break;
    case kClientHeadersSent:
      headers_ = HeaderState::kSent;
      if (!ok) Break();
      break;
    case kClientWrite:
      responses_.WriteFinished();
      if (!ok) Break();
      break;
    case kClientFinished:
      finished_ = true;
      break;
    case kUpstreamStarted:
      upstream_started_ = true;
      // A failed start means the call is over; its status comes from Finish.
      if (!ok) upstream_writes_failed_ = true;
      break;
    case kUpstreamHeaders:
      OnUpstreamHeaders(ok);
      break;
    case kUpstreamRead:
      OnUpstreamRead(ok);
      break;
    case kUpstreamWrite:
      requests_.WriteFinished();
      // A failed write means the upstream call is over; its status arrives through Finish.
      if (!ok) upstream_writes_failed_ = true;
      break;
    case kUpstreamWritesDone:
      break;
    case kUpstreamFinished:
      OnUpstreamFinished();
      break;
    case kEventCount:
      break;
  }
  StartReads();
  RequestFlush();
}

void ProxyCall::RequestFlush() {
  if (flush_requested_) return;
  flush_requested_ = true;
  t_flush_list->calls_.push_back(this);
}

void ProxyCall::DeleteIfDone() {
  if (!finished_ || pending_ != 0 || flush_requested_) return;
  NotifyCallEnded();
  ProxyCallEnvironment& environment = environment_;
  delete this;
  environment.CallEnded();
}

void ProxyCall::OnAccepted() {
  started_at_ = std::chrono::steady_clock::now();
  const std::string peer = context_.peer();
  UpstreamHeaderOverrides overrides;
  const CallStart start{context_.method(), peer, context_.host(), context_.client_metadata(), started_at_, overrides};
  for (CallObserver* observer : environment_.observers) {
    if (auto tap = observer->OnCallStarted(start)) taps_.push_back(std::move(tap));
  }

  // Deadline and cancellation of the client's call propagate to the upstream call through gRPC
  // core's parent-call link, without a timer of ours.
  upstream_context_ = grpc::ClientContext::FromServerContext(context_);
  std::string_view user_agent;
  for (const auto& [key_ref, value_ref] : context_.client_metadata()) {
    const std::string_view key = View(key_ref);
    if (key == "user-agent") user_agent = View(value_ref);
    if (!IsForwardedRequestHeader(key) || overrides.Overrides(key)) continue;
    // `-bin` values arrive decoded; AddMetadata re-encodes them, byte-exact.
    upstream_context_->AddMetadata(std::string(key), std::string(View(value_ref)));
  }
  for (const auto& [key, value] : overrides.entries()) {
    if (value) upstream_context_->AddMetadata(key, *value);
  }
  channel_ = environment_.upstream->ForUserAgent(user_agent);
  grpc::GenericStub stub(channel_);
  upstream_ = stub.PrepareCall(upstream_context_.get(), context_.method(), queue_);
  // Started at the flush: by then the request's first message has usually been read too.
}

void ProxyCall::OnClientRead(bool ok) {
  if (ok) {
    const grpc::ByteBuffer& message = *requests_.read_target();
    request_count_.messages += 1;
    request_count_.bytes += message.Length();
    for (auto& tap : taps_) tap->OnRequestMessage(message);
    requests_.ReadSucceeded();
  } else {
    requests_.ReadFailed();  // half-close (or a failed call, which the done tag also reports)
  }
}

void ProxyCall::OnUpstreamHeaders(bool ok) {
  upstream_headers_done_ = true;
  if (!ok) {
    // No headers: the call failed first, or the upstream answered trailers-only. The status
    // carries everything; Finish tells which.
    upstream_reads_ended_ = true;
    headers_ = HeaderState::kNone;
    return;
  }
  for (const auto& [key_ref, value_ref] : upstream_context_->GetServerInitialMetadata()) {
    if (!IsForwardedResponseHeader(View(key_ref))) continue;
    context_.AddInitialMetadata(std::string(View(key_ref)), std::string(View(value_ref)));
  }
  // Sent at the flush: with the first message or the status if they are already there, alone
  // otherwise. Never held longer: a client may be waiting for headers on a quiet stream.
  headers_ = broken_ ? HeaderState::kNone : HeaderState::kPending;
}

void ProxyCall::OnUpstreamRead(bool ok) {
  if (!ok) {
    responses_.ReadFailed();
    upstream_reads_ended_ = true;
    return;
  }
  const grpc::ByteBuffer& message = *responses_.read_target();
  if (!first_response_at_) first_response_at_ = std::chrono::steady_clock::now();
  response_count_.messages += 1;
  response_count_.bytes += message.Length();
  for (auto& tap : taps_) tap->OnResponseMessage(message);
  responses_.ReadSucceeded();
}

void ProxyCall::OnUpstreamFinished() {
  upstream_finished_ = true;
  // Trailers are only sent by Finish, which waits for this status.
  for (const auto& [key_ref, value_ref] : upstream_context_->GetServerTrailingMetadata()) {
    if (!IsForwardedResponseHeader(View(key_ref))) continue;
    context_.AddTrailingMetadata(std::string(View(key_ref)), std::string(View(value_ref)));
  }
}

void ProxyCall::Break() {
  if (broken_) return;
  broken_ = true;
  if (upstream_context_ && !upstream_finished_) upstream_context_->TryCancel();
}

void ProxyCall::StartReads() {
  if (!upstream_) return;  // not accepted yet
  const bool forwarding_requests = !broken_ && !upstream_reads_ended_ && !upstream_writes_failed_;
  if (forwarding_requests && !finish_started_ && requests_.CanStartRead()) {
    requests_.ReadStarted();
    stream_.Read(requests_.read_target(), TagFor(kClientRead));
  }
  if (!broken_ && upstream_headers_done_ && !upstream_reads_ended_ && responses_.CanStartRead()) {
    responses_.ReadStarted();
    upstream_->Read(responses_.read_target(), TagFor(kUpstreamRead));
  }
  // The upstream's status: once it has no more messages for us (or we stopped listening).
  if (upstream_call_started_ && !upstream_finish_started_ && !responses_.read_pending() &&
      (upstream_reads_ended_ || broken_)) {
    upstream_finish_started_ = true;
    upstream_->Finish(&upstream_status_, TagFor(kUpstreamFinished));
  }
}

void ProxyCall::StartWrites() {
  if (!upstream_) return;
  if (!upstream_call_started_) StartUpstreamCall();

  // Client → upstream: write what was read, then half-close; the last message and the half-close
  // in one batch when the client already half-closed.
  const bool forwarding_requests = !broken_ && !upstream_reads_ended_ && !upstream_writes_failed_;
  if (forwarding_requests && upstream_started_ && requests_.CanStartWrite()) {
    requests_.WriteStarted();
    if (requests_.source_done() && requests_.Drained(/*ignoring_write=*/true)) {
      writes_done_started_ = true;
      upstream_->WriteLast(*requests_.write_source(), grpc::WriteOptions(), TagFor(kUpstreamWrite));
    } else {
      upstream_->Write(*requests_.write_source(), TagFor(kUpstreamWrite));
    }
  }
  if (forwarding_requests && upstream_started_ && requests_.source_done() && requests_.Drained() &&
      !writes_done_started_) {
    writes_done_started_ = true;
    upstream_->WritesDone(TagFor(kUpstreamWritesDone));
  }
  StartClientWrites();
}

void ProxyCall::StartUpstreamCall() {
  upstream_call_started_ = true;
  if (requests_.CanStartWrite()) {
    // A message is waiting: the headers go out with it (corked start has no completion).
    upstream_context_->set_initial_metadata_corked(true);
    upstream_->StartCall(nullptr);
    upstream_started_ = true;
  } else {
    // Nothing to send yet (a client stream that waits for the server first): headers now.
    upstream_->StartCall(TagFor(kUpstreamStarted));
  }
  upstream_->ReadInitialMetadata(TagFor(kUpstreamHeaders));
}

void ProxyCall::StartClientWrites() {
  // Messages and the status wait while the headers are awaited or being sent on their own.
  if (headers_ == HeaderState::kAwaiting || headers_ == HeaderState::kSending) return;

  if (!broken_ && !finish_started_ && responses_.CanStartWrite()) {
    const bool last_message = upstream_finished_ && responses_.Buffered() == 1;
    responses_.WriteStarted();
    if (headers_ == HeaderState::kPending) headers_ = HeaderState::kSent;  // they go with it
    if (last_message) {
      // The last message, the trailers and the status in one batch.
      finish_started_ = true;
      client_status_ = upstream_status_;
      stream_.WriteAndFinish(*responses_.write_source(), grpc::WriteOptions(), client_status_,
                             TagFor(kClientFinished));
      // gRPC's send op holds its own reference to the message; the pump slot is free now.
      responses_.WriteFinished();
      return;
    }
    stream_.Write(*responses_.write_source(), TagFor(kClientWrite));
  }

  // Finish only after the upstream's status and after the last response was written.
  if (!finish_started_ && upstream_finished_ && !responses_.write_pending() &&
      (responses_.Drained() || broken_)) {
    finish_started_ = true;
    client_status_ = broken_ && upstream_status_.ok()
                         ? grpc::Status(grpc::StatusCode::CANCELLED, "client went away")
                         : upstream_status_;
    if (headers_ == HeaderState::kPending) headers_ = HeaderState::kSent;  // they go with it
    stream_.Finish(client_status_, TagFor(kClientFinished));
    return;
  }

  // Headers with nothing to go along: send them on their own, now.
  if (headers_ == HeaderState::kPending && !broken_ && !finish_started_) {
    headers_ = HeaderState::kSending;
    stream_.SendInitialMetadata(TagFor(kClientHeadersSent));
  }
}

void ProxyCall::NotifyCallEnded() {
  if (taps_.empty()) return;
  CallEnd end;
  // grpc::Status::error_message() returns a copy in gRPC 1.51: keep it alive for the taps.
  const std::string error_message = client_status_.error_message();
  end.code = client_status_.error_code();
  end.error_message = error_message;
  end.duration = std::chrono::steady_clock::now() - started_at_;
  if (first_response_at_) end.time_to_first_response = *first_response_at_ - started_at_;
  end.requests = request_count_;
  end.responses = response_count_;
  for (auto& tap : taps_) tap->OnCallEnded(end);
}

}  // namespace sparktrace::proxy
