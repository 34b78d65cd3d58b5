#pragma once
// One proxied RPC: the client's HTTP/2 stream (downstream) joined to a stream on an upstream
// connection. Headers, DATA and trailers are relayed as they arrive, each direction through a
// RelayQueue whose bytes are sent on without being copied again; the gRPC framing is only read
// (MessageTapper) to count messages, enforce the size limit on the 5-byte prefix, and show
// messages to the taps.
//
// Flow control: a direction's receive window reopens (CallConnection::Consume) only when the
// other side's session takes bytes out of its queue to write them, so a call holds at most one
// stream window per direction however slow the reader.
//
// gRPC semantics the relay keeps itself, because no gRPC library sits on either side:
// grpc-timeout is forwarded and enforced (DEADLINE_EXCEEDED); a client reset cancels the
// upstream stream and an upstream reset or lost connection ends the client's call with the status
// gRPC gives that reset (StatusForResetCode); an upstream that cannot be reached is a
// trailers-only UNAVAILABLE; a message over --max-message-bytes is RESOURCE_EXHAUSTED.
//
// Threads: one relay worker's; all of a call's taps run there, one at a time.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/call_connection.h"
#include "proxy/call_observer.h"
#include "proxy/http2_stream.h"
#include "proxy/libevent_handles.h"
#include "proxy/message_tapper.h"
#include "proxy/receive_blocks.h"
#include "proxy/relay_budget.h"
#include "proxy/relay_context.h"
#include "proxy/relay_stats.h"

namespace sparktrace::proxy {

class RelayedCall;

// What a call needs from the worker that runs it (RelayWorker; a fake in the unit tests).
// Called at a call's start and end only, never per frame.
class CallOwner {
 public:
  // A connection for the call's upstream stream (maybe still connecting), or nullptr when none
  // can be had; `why` then says why.
  virtual CallConnection* AcquireUpstream(std::string* why) = 0;
  // The call is over, both of its streams forgotten: free it after the current event.
  virtual void Finished(RelayedCall& call) = 0;

 protected:
  ~CallOwner() = default;
};

// What every call on every worker shares; outlives them all.
struct RelayEnvironment {
  std::string upstream_authority;  // :authority on upstream requests ("spark-connect:15002")
  bool upstream_tls = false;
  std::uint32_t max_message_bytes = 256U << 20;
  // A client's request metadata larger than this is refused at the proxy (RESOURCE_EXHAUSTED);
  // so is a response header block from the upstream (INTERNAL).
  std::uint32_t max_header_list_bytes = 16U << 10;
  WindowSizes windows;
  // Messages larger than this are forwarded but not kept for the taps (bytes_available false).
  std::uint32_t max_traced_message_bytes = 16U << 20;
  RelayBudget* budget = nullptr;  // windows and kept message bytes are drawn from it
  RelayStats* stats = nullptr;
  std::vector<CallObserver*> observers;
};

// State: one enum per direction (as nghttpx's Downstream keeps request_state_ and
// response_state_), plus the two connections it is relayed between (null once that stream is over).
class RelayedCall final : public Retirable {
 public:
  // What the client has sent: the request direction, client -> upstream.
  enum class RequestState {
    kReceivingHeaders,  // the client's HEADERS block is arriving
    kStreaming,         // headers done: DATA goes upstream as it arrives
    kHalfClosed,        // the client sent END_STREAM: what is queued goes upstream, then END_STREAM
    kClosed,            // nothing more goes upstream: its stream is over, was reset or never opened
  };
  // What the client has been sent: the response direction, upstream -> client. In order: from
  // kTrailersQueued on, the final status is decided.
  enum class ResponseState {
    kAwaitingHeaders,   // nothing yet
    kStreaming,         // response headers sent: DATA goes to the client as it arrives
    kTrailersQueued,    // the final status is known: trailers go out after what is queued
    kTrailersSent,      // the trailers are submitted (the final status is on its way)
    kTrailersOnlySent,  // headers and final status went out in one block
  };

  // `downstream`: the client's connection, carrying `stream_id`. `share`: the client
  // connection's part of the relay budget (both windows grow out of it).
  RelayedCall(RelayContext& context, const RelayEnvironment& environment, CallOwner& owner,
              CallConnection& downstream, std::int32_t stream_id, std::shared_ptr<ConnectionShare> share);
  ~RelayedCall() override;
  RelayedCall(const RelayedCall&) = delete;
  RelayedCall& operator=(const RelayedCall&) = delete;

  Http2Stream& downstream_stream() { return downstream_side_; }
  // The proxy is stopping and the drain time is over: cancels both sides.
  void Cancel();

  RequestState request_state() const { return request_state_; }
  ResponseState response_state() const { return response_state_; }

 private:
  // Adapts one connection's stream events to the call.
  class Side final : public Http2Stream {
   public:
    Side(RelayedCall& call, bool upstream) : call_(call), upstream_(upstream) {}
    void OnHeader(std::string_view name, std::string_view value, bool never_index) override;
    void OnHeadersComplete(bool end_stream) override;
    void OnData(std::span<const std::uint8_t> bytes) override;
    void OnEndOfData() override;
    void OnStreamClosed(std::uint32_t error_code) override;
    ssize_t ReadyToSend(std::size_t max_bytes, bool* end_of_data, bool* no_end_stream) override;
    void SendData(evbuffer* out, std::size_t bytes) override;
    void OnOpened(std::int32_t stream_id) override;

   private:
    RelayedCall& call_;
    const bool upstream_;
  };

  // Request side.
  void OnRequestHeaders(bool end_stream);
  void StartUpstream(const UpstreamHeaderOverrides& overrides);
  void OnRequestData(std::span<const std::uint8_t> bytes);
  // Queues DATA bytes for the other side and feeds them to the direction's tapper; on a framing
  // error (message over the limit, bad flag) ends the call and returns false.
  bool QueueAndTap(RelayQueue& queue, MessageTapper& tapper, std::span<const std::uint8_t> bytes,
                   std::string_view direction);
  void OnRequestEnd();
  void OnDownstreamClosed(std::uint32_t error_code);
  // Response side.
  void OnResponseHeaders(bool end_stream);
  void OnResponseData(std::span<const std::uint8_t> bytes);
  void OnUpstreamClosed(std::uint32_t error_code);
  static void OnDeadline(evutil_socket_t, short, void* self);

  // Ends the client's call with `code` (trailers-only when no headers went out yet, else
  // trailers after what is queued), unless a final status is already on its way; cancels the
  // upstream stream if it is still open.
  void EndWithStatus(StatusCode code, std::string message);
  // Resets the upstream stream (CANCEL) and forgets it; queued request bytes are dropped.
  void ResetUpstream();
  // Moves `bytes` of `queue` (received on `from`, stream `from_id`) into `out`: reopens that much
  // of the sender's window, and grows it when the window is what holds the sender back.
  void Forwarded(RelayQueue& queue, StreamWindow& window, CallConnection* from, std::int32_t from_id,
                 evbuffer* out, std::size_t bytes);
  // Whether the final status is known (queued as trailers, or already sent).
  bool FinalStatusDecided() const { return response_state_ >= ResponseState::kTrailersQueued; }
  // Whether the final status went out to the client (trailers or trailers-only).
  bool FinalStatusSent() const { return response_state_ >= ResponseState::kTrailersSent; }
  // Whether the trailers are queued or sent (not trailers-only).
  bool HasTrailers() const {
    return response_state_ == ResponseState::kTrailersQueued ||
           response_state_ == ResponseState::kTrailersSent;
  }
  std::string HeaderListTooLargeForUpstream() const;
  void Deliver(bool request, const TappedMessage& message);
  void FinishIfDone();

  RelayContext& context_;
  const RelayEnvironment& environment_;
  CallOwner& owner_;
  Side downstream_side_{*this, false};
  Side upstream_side_{*this, true};
  CallConnection* downstream_;  // null once the client's stream is closed
  const std::int32_t downstream_id_;
  CallConnection* upstream_ = nullptr;  // null until the request goes out, and once it is over
  std::int32_t upstream_id_ = -1;

  std::vector<Header> request_headers_;  // as the client sent them, pseudo-headers first
  std::vector<Header> incoming_;         // the upstream's HEADERS block being received
  // Header list sizes (RFC 9113's measure) of the blocks being received; past the limit, fields
  // are counted but no longer kept.
  std::size_t request_header_bytes_ = 0;
  std::size_t incoming_header_bytes_ = 0;
  std::vector<Header> trailers_;  // the final status block, for the client
  std::vector<std::unique_ptr<CallTap>> taps_;
  std::chrono::steady_clock::time_point started_at_;
  std::optional<std::chrono::steady_clock::time_point> first_response_at_;
  EventPtr deadline_;

  RelayQueue requests_;
  RelayQueue responses_;
  // The receive windows the two peers send into: the client's stream on the downstream
  // connection (requests) and the call's stream on the upstream connection (responses).
  StreamWindow request_window_;
  StreamWindow response_window_;
  std::unique_ptr<MessageTapper> request_tapper_;
  std::unique_ptr<MessageTapper> response_tapper_;

  RequestState request_state_ = RequestState::kReceivingHeaders;
  ResponseState response_state_ = ResponseState::kAwaitingHeaders;
  bool finished_ = false;  // the taps and the owner were told: once
  StatusCode status_ = StatusCode::kOk;
  std::string status_message_;
};

}  // namespace sparktrace::proxy
