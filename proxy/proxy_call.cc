#include "proxy/proxy_call.h"

#include <string_view>

#include <spdlog/spdlog.h>

#include "proxy/metadata_policy.h"
#include "proxy/upstream_channels.h"

namespace sparktrace::proxy {
namespace {

std::string_view View(const grpc::string_ref& ref) { return {ref.data(), ref.size()}; }

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

void ProxyCall::Tag::Complete(bool ok) { call_->Handle(static_cast<Event>(event_), ok); }

void ProxyCall::Accept(ProxyCallEnvironment& environment, grpc::ServerCompletionQueue* queue) {
  // The call owns itself from here on: it is deleted by Handle once it is finished and nothing
  // is outstanding (or at once if the server shuts down before an RPC arrives).
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
      if (!ok) {  // the call failed before it started; its status comes from Finish
        upstream_writes_failed_ = true;
        upstream_reads_ended_ = true;
        upstream_headers_done_ = true;
        headers_ = HeaderState::kNone;
      } else {
        upstream_->ReadInitialMetadata(TagFor(kUpstreamHeaders));
      }
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
  Advance();
  if (finished_ && pending_ == 0) {
    NotifyCallEnded();
    ProxyCallEnvironment& environment = environment_;
    delete this;
    environment.CallEnded();
  }
}

void ProxyCall::OnAccepted() {
  started_at_ = std::chrono::steady_clock::now();
  const std::string peer = context_.peer();
  const CallStart start{context_.method(), peer, context_.client_metadata(), started_at_};
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
    if (!IsForwardedRequestHeader(key)) continue;
    // `-bin` values arrive decoded; AddMetadata re-encodes them, byte-exact.
    upstream_context_->AddMetadata(std::string(key), std::string(View(value_ref)));
  }
  channel_ = environment_.upstream->ForUserAgent(user_agent);
  grpc::GenericStub stub(channel_);
  upstream_ = stub.PrepareCall(upstream_context_.get(), context_.method(), queue_);
  upstream_->StartCall(TagFor(kUpstreamStarted));
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
  if (broken_) {
    headers_ = HeaderState::kNone;
    return;
  }
  // Headers go out as soon as the upstream's arrive, even without application metadata: a client
  // may be waiting for them on a stream that stays quiet for a long time.
  headers_ = HeaderState::kSending;
  stream_.SendInitialMetadata(TagFor(kClientHeadersSent));
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

void ProxyCall::Advance() {
  if (!upstream_) return;  // not accepted yet

  // Client → upstream: read while there is room, write what was read, then half-close upstream.
  const bool forwarding_requests = !broken_ && !upstream_reads_ended_ && !upstream_writes_failed_;
  if (forwarding_requests && !finish_started_ && requests_.CanStartRead()) {
    requests_.ReadStarted();
    stream_.Read(requests_.read_target(), TagFor(kClientRead));
  }
  if (forwarding_requests && upstream_started_ && requests_.CanStartWrite()) {
    requests_.WriteStarted();
    if (requests_.source_done() && requests_.Drained(/*ignoring_write=*/true)) {
      // The client already half-closed: the last message and the half-close go in one batch.
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

  // Upstream → client, once the upstream's headers have been dealt with.
  if (!broken_ && upstream_headers_done_ && !upstream_reads_ended_ && responses_.CanStartRead()) {
    responses_.ReadStarted();
    upstream_->Read(responses_.read_target(), TagFor(kUpstreamRead));
  }
  const bool headers_done = headers_ == HeaderState::kSent || headers_ == HeaderState::kNone;
  if (!broken_ && headers_done && !finish_started_ && responses_.CanStartWrite()) {
    responses_.WriteStarted();
    stream_.Write(*responses_.write_source(), TagFor(kClientWrite));
  }

  // The upstream's status: once it has no more messages for us (or we stopped listening).
  if (upstream_started_ && !upstream_finish_started_ && !responses_.read_pending() &&
      (upstream_reads_ended_ || broken_)) {
    upstream_finish_started_ = true;
    upstream_->Finish(&upstream_status_, TagFor(kUpstreamFinished));
  }

  // Finish only after the upstream's status and after the last response was written.
  if (!finish_started_ && upstream_finished_ && headers_ != HeaderState::kSending && !responses_.write_pending() &&
      (responses_.Drained() || broken_)) {
    finish_started_ = true;
    client_status_ = broken_ && upstream_status_.ok()
                         ? grpc::Status(grpc::StatusCode::CANCELLED, "client went away")
                         : upstream_status_;
    stream_.Finish(client_status_, TagFor(kClientFinished));
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
