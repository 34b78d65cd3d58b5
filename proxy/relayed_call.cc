#include "proxy/relayed_call.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

#include "proxy/grpc_wire.h"

namespace sparktrace::proxy {
namespace {

// Headers a block's list makes room for at its first header: a grpcio request has 11 (pseudo-headers,
// content-type, te, user-agent, grpc-accept-encoding, grpc-timeout, one of metadata).
constexpr std::size_t kUsualHeaderBlock = 14;

std::string_view Find(const std::vector<Header>& headers, std::string_view name) {
  for (const Header& header : headers) {
    if (header.name == name) return header.value;
  }
  return {};
}

std::vector<Header> StatusTrailers(StatusCode code, std::string_view message) {
  std::vector<Header> block = {{"grpc-status", std::to_string(static_cast<int>(code))}};
  if (!message.empty()) block.push_back({"grpc-message", PercentEncodeGrpcMessage(message)});
  return block;
}

std::string FramingErrorMessage(const MessageTapper& tapper, GrpcFramingError error,
                                std::string_view direction) {
  if (error == GrpcFramingError::kMessageTooLarge) {
    return std::string(direction) + " message larger than max (" +
           std::to_string(tapper.framer().refused_length()) + " vs. " +
           std::to_string(tapper.framer().max_message_bytes()) + ")";
  }
  return std::string(direction) + " message with an invalid compressed flag";
}

}  // namespace

RelayedCall::RelayedCall(RelayContext& context, const RelayEnvironment& environment, CallOwner& owner,
                         CallConnection& downstream, std::int32_t stream_id,
                         std::shared_ptr<ConnectionShare> share)
    : context_(context),
      environment_(environment),
      owner_(owner),
      downstream_(&downstream),
      downstream_id_(stream_id),
      started_at_(std::chrono::steady_clock::now()),
      requests_(context.blocks()),
      responses_(context.blocks()),
      request_window_(*environment.budget, share, environment.windows),
      response_window_(*environment.budget, std::move(share), environment.windows) {
  request_window_.Open();  // the client's stream exists: it was announced the initial window
}

RelayedCall::~RelayedCall() {
  // Only reached through CallRegistry::Finished (both streams forgotten) or at worker teardown,
  // when the connections are going away with the loop.
  if (downstream_ != nullptr) downstream_->DetachStream(downstream_id_, downstream_side_);
  if (upstream_ != nullptr) upstream_->DetachStream(upstream_id_, upstream_side_);
}

// --- the client's side -----------------------------------------------------------------------

void RelayedCall::OnRequestHeaders(bool end_stream) {
  if (request_state_ != RequestState::kReceivingHeaders) {  // the client's trailers, ending the request
    if (end_stream) OnRequestEnd();
    return;
  }
  request_state_ = end_stream ? RequestState::kHalfClosed : RequestState::kStreaming;
  started_at_ = std::chrono::steady_clock::now();

  ClientMetadata metadata;
  for (const Header& header : request_headers_) {
    if (!header.name.starts_with(':')) metadata.emplace(header.name, header.value);
  }
  UpstreamHeaderOverrides overrides;
  const CallStart start{Find(request_headers_, ":path"),
                        downstream_->peer(),
                        Find(request_headers_, ":authority"),
                        metadata,
                        started_at_,
                        overrides};
  bool keep_bytes = false;
  for (CallObserver* observer : environment_.observers) {
    if (auto tap = observer->OnCallStarted(start)) {
      keep_bytes = keep_bytes || tap->NeedsMessageBytes();
      taps_.push_back(std::move(tap));
    }
  }
  const TapLimits tap_limits{environment_.max_traced_message_bytes, environment_.budget, environment_.stats};
  request_tapper_ = std::make_unique<MessageTapper>(
      environment_.max_message_bytes, keep_bytes, [this](const TappedMessage& m) { Deliver(true, m); },
      tap_limits);
  request_tapper_->SetEncoding(Find(request_headers_, "grpc-encoding"));
  response_tapper_ = std::make_unique<MessageTapper>(
      environment_.max_message_bytes, keep_bytes, [this](const TappedMessage& m) { Deliver(false, m); },
      tap_limits);

  // The header goes upstream unchanged (the proxy adds no measurable time before forwarding);
  // the proxy enforces it too, so that a client still gets DEADLINE_EXCEEDED from an upstream
  // that does not answer at all.
  if (const auto timeout = ParseGrpcTimeout(Find(request_headers_, "grpc-timeout"))) {
    deadline_.reset(evtimer_new(context_.base(), OnDeadline, this));
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(*timeout).count();
    const timeval delay{static_cast<time_t>(micros / 1'000'000),
                        static_cast<suseconds_t>(micros % 1'000'000)};
    evtimer_add(deadline_.get(), &delay);
  }
  if (request_header_bytes_ > environment_.max_header_list_bytes) {
    // Refused here, alone (the taps see a failed call): forwarded, it could make the upstream fail
    // its connection, and every other client's call on it (gRPC servers refuse metadata over 8 KiB
    // by default).
    environment_.stats->Hit(RelayLimit::kHeaderListSize);
    request_state_ = RequestState::kClosed;
    EndWithStatus(StatusCode::kResourceExhausted,
                  "request metadata of " + std::to_string(request_header_bytes_) +
                      " bytes is larger than the " + std::to_string(environment_.max_header_list_bytes) +
                      " bytes the proxy accepts");
    return;
  }
  StartUpstream(overrides);
}

void RelayedCall::StartUpstream(const UpstreamHeaderOverrides& overrides) {
  std::string why_unavailable;
  upstream_ = owner_.AcquireUpstream(&why_unavailable);
  if (upstream_ == nullptr) {
    request_state_ = RequestState::kClosed;
    EndWithStatus(StatusCode::kUnavailable, "upstream unreachable: " + why_unavailable);
    return;
  }
  std::vector<Header> headers;
  headers.reserve(request_headers_.size() + overrides.entries().size() + 1);
  headers.push_back({":method", std::string(Find(request_headers_, ":method"))});
  headers.push_back({":scheme", environment_.upstream_tls ? "https" : "http"});
  headers.push_back({":path", std::string(Find(request_headers_, ":path"))});
  headers.push_back({":authority", environment_.upstream_authority});
  // Everything else byte for byte and in order (user-agent, grpc-timeout, grpc-encoding, -bin
  // values as sent), but what an observer replaces.
  for (const Header& header : request_headers_) {
    if (!header.name.starts_with(':') && !overrides.Overrides(header.name)) headers.push_back(header);
  }
  // An observer's value is made for this call (UpstreamHeaderOverrides): never indexed.
  for (const auto& [name, value] : overrides.entries()) {
    if (value) headers.push_back({name, *value, /*never_index=*/true});
  }
  switch (upstream_->SubmitRequest(std::move(headers), upstream_side_)) {
    case CallConnection::Submitted::kYes:
      break;
    case CallConnection::Submitted::kClosing:
      upstream_ = nullptr;
      request_state_ = RequestState::kClosed;
      EndWithStatus(StatusCode::kUnavailable, "upstream connection is closing");
      break;
    case CallConnection::Submitted::kOverPeerHeaderLimit:
      upstream_ = nullptr;
      request_state_ = RequestState::kClosed;
      environment_.stats->Hit(RelayLimit::kHeaderListSize);
      EndWithStatus(StatusCode::kResourceExhausted, HeaderListTooLargeForUpstream());
      break;
  }
}

std::string RelayedCall::HeaderListTooLargeForUpstream() const {
  return "request metadata of " + std::to_string(request_header_bytes_) +
         " bytes is larger than the upstream accepts (its SETTINGS_MAX_HEADER_LIST_SIZE)";
}

void RelayedCall::OnRequestData(std::span<const std::uint8_t> bytes) {
  if (upstream_ == nullptr || request_tapper_ == nullptr) {
    downstream_->Consume(downstream_id_, bytes.size());  // nobody will take them: drop
    return;
  }
  request_window_.Received(bytes.size());
  if (!QueueAndTap(requests_, *request_tapper_, bytes, "Received")) return;
  upstream_->ResumeData(upstream_id_);
}

bool RelayedCall::QueueAndTap(RelayQueue& queue, MessageTapper& tapper, std::span<const std::uint8_t> bytes,
                              std::string_view direction) {
  GrpcFramingError error = GrpcFramingError::kNone;
  queue.Append(bytes, [&](ReceiveBlock* block, std::size_t offset, std::size_t size) {
    if (error == GrpcFramingError::kNone) error = tapper.Feed(block, offset, size);
  });
  if (error == GrpcFramingError::kNone) return true;
  const StatusCode code =
      error == GrpcFramingError::kMessageTooLarge ? StatusCode::kResourceExhausted : StatusCode::kInternal;
  EndWithStatus(code, FramingErrorMessage(tapper, error, direction));
  return false;
}

void RelayedCall::OnRequestEnd() {
  if (request_state_ == RequestState::kStreaming) request_state_ = RequestState::kHalfClosed;
  if (upstream_ == nullptr) return;
  upstream_->ResumeData(upstream_id_);
}

void RelayedCall::OnDownstreamClosed(std::uint32_t error_code) {
  // The client's stream is over (closed, reset, or its connection gone). Request bytes not yet sent
  // upstream go nowhere now (the connection's window reopened when they arrived, and the stream's
  // is gone with it); bytes promised to a frame still go out. The window goes back to the budget.
  requests_.Clear();
  request_window_.Close();
  downstream_ = nullptr;
  if (!FinalStatusSent()) {
    status_ = StatusCode::kCancelled;
    status_message_ = error_code == kConnectionLost ? "client connection closed" : "cancelled by the client";
  }
  // What the client will never get no longer holds the upstream's window.
  if (upstream_ != nullptr) upstream_->Consume(upstream_id_, responses_.Clear());
  responses_.Clear();
  if (request_state_ != RequestState::kClosed) ResetUpstream();
  FinishIfDone();
}

// --- the upstream's side ---------------------------------------------------------------------

void RelayedCall::OnResponseHeaders(bool end_stream) {
  std::vector<Header> block = std::move(incoming_);
  incoming_.clear();
  const std::size_t block_bytes = std::exchange(incoming_header_bytes_, 0);
  if (downstream_ == nullptr || FinalStatusDecided()) return;
  if (block_bytes > environment_.max_header_list_bytes) {
    environment_.stats->Hit(RelayLimit::kHeaderListSize);
    EndWithStatus(StatusCode::kInternal, "upstream sent a header block of " + std::to_string(block_bytes) +
                                             " bytes, larger than the " +
                                             std::to_string(environment_.max_header_list_bytes) +
                                             " bytes the proxy accepts");
    return;
  }

  if (response_state_ != ResponseState::kAwaitingHeaders) {  // trailers: the final status
    status_ = ParseGrpcStatus(Find(block, "grpc-status")).value_or(StatusCode::kUnknown);
    status_message_ = PercentDecodeGrpcMessage(Find(block, "grpc-message"));
    trailers_ = std::move(block);
    response_state_ = ResponseState::kTrailersQueued;
    downstream_->ResumeData(downstream_id_);
    return;
  }

  const std::string_view http_status = Find(block, ":status");
  if (http_status != "200") {
    int code = 0;
    std::from_chars(http_status.data(), http_status.data() + http_status.size(), code);
    EndWithStatus(StatusForHttpStatus(code), "upstream answered HTTP status " + std::string(http_status));
    return;
  }
  if (end_stream) {  // trailers-only: headers and status in one block
    status_ = ParseGrpcStatus(Find(block, "grpc-status")).value_or(StatusCode::kUnknown);
    status_message_ = PercentDecodeGrpcMessage(Find(block, "grpc-message"));
    downstream_->SubmitResponse(downstream_id_, block, nullptr);
    response_state_ = ResponseState::kTrailersOnlySent;
    return;
  }
  response_tapper_->SetEncoding(Find(block, "grpc-encoding"));
  downstream_->SubmitResponse(downstream_id_, block, &downstream_side_);
  response_state_ = ResponseState::kStreaming;
}

void RelayedCall::OnResponseData(std::span<const std::uint8_t> bytes) {
  if (downstream_ == nullptr || response_state_ != ResponseState::kStreaming) {
    upstream_->Consume(upstream_id_, bytes.size());
    return;
  }
  response_window_.Received(bytes.size());
  if (!QueueAndTap(responses_, *response_tapper_, bytes, "Upstream sent a")) return;
  downstream_->ResumeData(downstream_id_);
}

void RelayedCall::OnUpstreamClosed(std::uint32_t error_code) {
  upstream_ = nullptr;
  request_state_ = RequestState::kClosed;
  response_window_.Close();  // the upstream stream is over: nothing more can arrive on it
  // Request bytes that will never go out no longer hold the client's window.
  const std::size_t dropped = requests_.Clear();
  if (downstream_ != nullptr) downstream_->Consume(downstream_id_, dropped);
  if (!FinalStatusDecided()) {
    if (error_code == kHeaderListTooLarge) {
      environment_.stats->Hit(RelayLimit::kHeaderListSize);
      EndWithStatus(StatusCode::kResourceExhausted, HeaderListTooLargeForUpstream());
    } else if (error_code == kConnectionLost) {
      EndWithStatus(StatusCode::kUnavailable, "upstream connection failed or was lost");
    } else if (error_code == kHttp2NoError) {
      EndWithStatus(StatusCode::kInternal, "upstream closed the stream without a status");
    } else {
      EndWithStatus(StatusForResetCode(error_code),
                    std::string("upstream reset the stream: ") + Http2ErrorName(error_code));
    }
  }
  FinishIfDone();
}

void RelayedCall::OnDeadline(evutil_socket_t, short, void* self) {
  auto* call = static_cast<RelayedCall*>(self);
  const RelayContext::EventScope scope(call->context_);
  call->EndWithStatus(StatusCode::kDeadlineExceeded, "Deadline Exceeded");
}

// --- endings ----------------------------------------------------------------------------------

void RelayedCall::EndWithStatus(StatusCode code, std::string message) {
  if (!FinalStatusDecided()) {
    status_ = code;
    status_message_ = std::move(message);
    if (downstream_ != nullptr) {
      if (response_state_ == ResponseState::kAwaitingHeaders) {
        std::vector<Header> block = {{":status", "200"}, {"content-type", "application/grpc"}};
        for (Header& header : StatusTrailers(code, status_message_)) block.push_back(std::move(header));
        downstream_->SubmitResponse(downstream_id_, block, nullptr);
        response_state_ = ResponseState::kTrailersOnlySent;
      } else {
        // The call failed: what is still queued for the client is not delivered.
        responses_.Clear();
        trailers_ = StatusTrailers(code, status_message_);
        response_state_ = ResponseState::kTrailersQueued;
        downstream_->ResumeData(downstream_id_);
      }
    }
  }
  if (request_state_ != RequestState::kClosed) ResetUpstream();
}

void RelayedCall::ResetUpstream() {
  request_state_ = RequestState::kClosed;
  if (upstream_ == nullptr) return;
  if (upstream_id_ > 0) upstream_->ResetStream(upstream_id_, kHttp2Cancel);
  upstream_->DetachStream(upstream_id_, upstream_side_);
  upstream_ = nullptr;
  response_window_.Close();
  const std::size_t dropped = requests_.Clear();
  if (downstream_ != nullptr) downstream_->Consume(downstream_id_, dropped);
}

void RelayedCall::Cancel() {
  if (downstream_ != nullptr) {
    downstream_->ResetStream(downstream_id_, kHttp2Cancel);
    downstream_->DetachStream(downstream_id_, downstream_side_);
    downstream_ = nullptr;
    request_window_.Close();
  }
  if (!FinalStatusSent()) {
    status_ = StatusCode::kCancelled;
    status_message_ = "proxy shutting down: drain timeout reached";
  }
  if (request_state_ != RequestState::kClosed) ResetUpstream();
  FinishIfDone();
}

void RelayedCall::Deliver(bool request, const TappedMessage& message) {
  if (!request && !first_response_at_) first_response_at_ = std::chrono::steady_clock::now();
  for (const auto& tap : taps_) {
    if (request) {
      tap->OnRequestMessage(message);
    } else {
      tap->OnResponseMessage(message);
    }
  }
}

void RelayedCall::FinishIfDone() {
  if (finished_ || downstream_ != nullptr || request_state_ != RequestState::kClosed) return;
  finished_ = true;
  deadline_.reset();
  CallEnd end;
  end.code = status_;
  end.error_message = status_ == StatusCode::kOk ? std::string_view() : std::string_view(status_message_);
  end.duration = std::chrono::steady_clock::now() - started_at_;
  if (first_response_at_) end.time_to_first_response = *first_response_at_ - started_at_;
  if (request_tapper_) end.requests = request_tapper_->count();
  if (response_tapper_) end.responses = response_tapper_->count();
  for (const auto& tap : taps_) tap->OnCallEnded(end);
  owner_.Finished(*this);
}

// --- the two sides, as the connections see them ------------------------------------------------

void RelayedCall::Side::OnHeader(std::string_view name, std::string_view value, bool never_index) {
  std::size_t& block_bytes = upstream_ ? call_.incoming_header_bytes_ : call_.request_header_bytes_;
  block_bytes += HeaderFieldSize(name, value);
  // Past the limit the block is refused when complete; nothing more of it is kept meanwhile.
  if (block_bytes > call_.environment_.max_header_list_bytes) return;
  std::vector<Header>& block = upstream_ ? call_.incoming_ : call_.request_headers_;
  // A usual block in one allocation, rather than five as it grows (1, 2, 4, 8, 16), and one that
  // stays within the allocator's per-thread cache (glibc's tcache: up to 1,032 bytes, 14 headers).
  if (block.capacity() == 0) block.reserve(kUsualHeaderBlock);
  block.push_back({std::string(name), std::string(value), never_index});
}

void RelayedCall::Side::OnHeadersComplete(bool end_stream) {
  if (upstream_) {
    call_.OnResponseHeaders(end_stream);
  } else {
    call_.OnRequestHeaders(end_stream);
  }
}

void RelayedCall::Side::OnData(std::span<const std::uint8_t> bytes) {
  if (upstream_) {
    call_.OnResponseData(bytes);
  } else {
    call_.OnRequestData(bytes);
  }
}

void RelayedCall::Side::OnEndOfData() {
  if (!upstream_) {
    call_.OnRequestEnd();
  } else if (!call_.HasTrailers()) {
    call_.EndWithStatus(StatusCode::kInternal, "upstream ended the response without a status");
  }
}

void RelayedCall::Side::OnStreamClosed(std::uint32_t error_code) {
  if (upstream_) {
    call_.OnUpstreamClosed(error_code);
  } else {
    call_.OnDownstreamClosed(error_code);
  }
}

void RelayedCall::Side::OnOpened(std::int32_t stream_id) {
  call_.upstream_id_ = stream_id;
  call_.response_window_.Open();
}

ssize_t RelayedCall::Side::ReadyToSend(std::size_t max_bytes, bool* end_of_data, bool* no_end_stream) {
  RelayQueue& queue = upstream_ ? call_.requests_ : call_.responses_;
  if (!queue.empty()) {
    const std::size_t ready = std::min(max_bytes, queue.size());
    queue.Promise(ready);  // SendData takes them, maybe after this call has failed
    return static_cast<ssize_t>(ready);
  }
  if (upstream_) {
    if (call_.request_state_ != RequestState::kHalfClosed) return kNothingToSendYet;
    *end_of_data = true;
    return 0;
  }
  if (!call_.HasTrailers() || call_.downstream_ == nullptr) return kNothingToSendYet;
  // The status goes out as trailers: DATA ends without END_STREAM, the trailers carry it.
  if (!call_.downstream_->SubmitTrailers(call_.downstream_id_, call_.trailers_)) return kNothingToSendYet;
  call_.response_state_ = ResponseState::kTrailersSent;
  *end_of_data = true;
  *no_end_stream = true;
  return 0;
}

void RelayedCall::Side::SendData(evbuffer* out, std::size_t bytes) {
  if (upstream_) {
    call_.Forwarded(call_.requests_, call_.request_window_, call_.downstream_, call_.downstream_id_, out,
                    bytes);
  } else {
    call_.Forwarded(call_.responses_, call_.response_window_, call_.upstream_, call_.upstream_id_, out,
                    bytes);
  }
}

void RelayedCall::Forwarded(RelayQueue& queue, StreamWindow& window, CallConnection* from,
                            std::int32_t from_id, evbuffer* out, std::size_t bytes) {
  queue.MoveTo(out, bytes);
  if (from == nullptr) return;
  from->Consume(from_id, bytes);
  if (!queue.empty()) return;
  GrowthRefusal refusal = GrowthRefusal::kNone;
  if (const std::int32_t grown = window.GrowIfStarved(&refusal); grown > 0) {
    from->GrowStreamWindow(from_id, grown);
  } else if (refusal == GrowthRefusal::kBudget) {
    environment_.stats->Hit(RelayLimit::kBufferBudget);
  } else if (refusal == GrowthRefusal::kConnectionShare) {
    environment_.stats->Hit(RelayLimit::kConnectionBuffer);
  }
}

}  // namespace sparktrace::proxy
