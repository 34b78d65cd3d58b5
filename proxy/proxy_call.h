#pragma once
// One proxied RPC, driven by completion-queue events: the client's call (downstream, through
// gRPC's async generic service) and Spark Connect's (upstream, through a generic stub) joined by
// two MessagePumps. Every method is treated as a bidi stream of ByteBuffers, which forwards
// unary, client-, server- and bidi-streaming calls alike without ever parsing a payload.
//
// Threads: both halves of a call complete on the completion queue of the worker that accepted
// it, and that worker is the only thread draining the queue. So all of a call's events run on one
// thread, one at a time: no lock, and no hand-off between threads (gRPC 1.51's callback API
// would run every reaction on a separate "nexting" thread).
//
// Gather, then write: reads are started as soon as they can be, writes (to either side) only
// when the worker has taken every completion that is already there (Flush). A unary call's
// request (headers, message, half-close) and response (headers, message, status) usually
// arrive together, and then each goes out as one batch instead of three.
//
// Backpressure: a read is only started when its pump has room, so a slow side stalls the other
// through HTTP/2 flow control. Lifetime: a call is created waiting for an incoming RPC and deletes
// itself once its downstream side is finished and no operation is outstanding.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

#include "proxy/call_observer.h"
#include "proxy/completion.h"
#include "proxy/message_pump.h"

namespace sparktrace::proxy {

class UpstreamChannels;

// What every call needs from the server; owned by ProxyServer, outlives all calls.
class ProxyCallEnvironment {
 public:
  grpc::AsyncGenericService* service = nullptr;
  UpstreamChannels* upstream = nullptr;
  std::vector<CallObserver*> observers;
  std::atomic<bool> accepting{true};  // false once the server drains: no new accepts are posted

  // Calls that accepted an RPC and are not deleted yet. A call may still start operations until
  // it is deleted, so the completion queues can only be shut down once this reaches zero.
  void CallStarted();
  void CallEnded();
  void WaitUntilNoCalls();

 private:
  std::mutex mu_;
  std::condition_variable no_calls_;
  int live_calls_ = 0;
};

class ProxyCall {
 public:
  // Messages buffered per direction, counting the one being written.
  static constexpr std::size_t kWindow = 2;

  // The completion-queue tag of one kind of operation of one call. Each kind has at most one
  // operation outstanding at a time, so one tag per kind suffices.
  class Tag final : public Completion {
   public:
    void Complete(bool ok) override;

   private:
    friend class ProxyCall;
    ProxyCall* call_ = nullptr;
    std::uint8_t event_ = 0;
  };

  // Posts a new call that waits for the next incoming RPC on `queue`.
  static void Accept(ProxyCallEnvironment& environment, grpc::ServerCompletionQueue* queue);

  // Calls with writes to start, collected while a worker takes the completions that are ready.
  class FlushList {
   public:
    // Starts the pending writes of every listed call (and deletes calls that are done).
    void Flush();

   private:
    friend class ProxyCall;
    std::vector<ProxyCall*> calls_;
  };
  // The worker thread's list; set by the worker before it drains its queue.
  static void SetThreadFlushList(FlushList* list);

  ProxyCall(const ProxyCall&) = delete;
  ProxyCall& operator=(const ProxyCall&) = delete;

 private:
  enum Event : std::uint8_t {
    kAccepted,
    kClientDone,  // AsyncNotifyWhenDone: finished or cancelled
    kClientRead,
    kClientHeadersSent,
    kClientWrite,
    kClientFinished,
    kUpstreamStarted,
    kUpstreamHeaders,
    kUpstreamRead,
    kUpstreamWrite,
    kUpstreamWritesDone,
    kUpstreamFinished,
    kEventCount,
  };

  // Response headers towards the client: awaiting the upstream's, arrived and not yet sent, being
  // sent on their own, sent (alone or with a message or the status), or none (the upstream sent
  // none; the status goes out trailers-only).
  enum class HeaderState { kAwaiting, kPending, kSending, kSent, kNone };

  ProxyCall(ProxyCallEnvironment& environment, grpc::ServerCompletionQueue* queue);

  void Handle(Event event, bool ok);
  void OnAccepted();
  void OnUpstreamHeaders(bool ok);
  void OnUpstreamFinished();
  void OnClientRead(bool ok);
  void OnUpstreamRead(bool ok);
  // The client is gone (cancelled, or a write to it failed): stop moving data, cancel upstream.
  void Break();
  // Starts every read the state allows (and the upstream's status, which is a read).
  void StartReads();
  // Starts every write the state allows, on both sides; runs from FlushList::Flush.
  void StartWrites();
  void StartUpstreamCall();
  void StartClientWrites();
  void RequestFlush();
  // Deletes the call if it is finished, nothing is outstanding and no flush is due.
  void DeleteIfDone();
  void* TagFor(Event event);
  void NotifyCallEnded();

  ProxyCallEnvironment& environment_;
  grpc::ServerCompletionQueue* const queue_;
  Tag tags_[kEventCount];
  int pending_ = 0;  // operations started and not yet completed

  grpc::GenericServerContext context_;
  grpc::GenericServerAsyncReaderWriter stream_{&context_};
  std::unique_ptr<grpc::ClientContext> upstream_context_;
  // The stub's call keeps a raw pointer to its channel: hold it for the call's life.
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> upstream_;
  std::vector<std::unique_ptr<CallTap>> taps_;
  std::chrono::steady_clock::time_point started_at_;

  MessagePump requests_{kWindow};   // client → upstream
  MessagePump responses_{kWindow};  // upstream → client
  HeaderState headers_ = HeaderState::kAwaiting;
  bool flush_requested_ = false;
  bool upstream_call_started_ = false;   // StartCall issued
  bool upstream_started_ = false;        // writes may go (StartCall completed, or corked)
  bool upstream_headers_done_ = false;   // ReadInitialMetadata completed; reads may go
  bool upstream_reads_ended_ = false;
  bool upstream_writes_failed_ = false;
  bool writes_done_started_ = false;
  bool upstream_finish_started_ = false;
  bool upstream_finished_ = false;
  bool broken_ = false;
  bool finish_started_ = false;
  bool finished_ = false;
  grpc::Status upstream_status_;
  grpc::Status client_status_;  // what Finish sent
  MessageCount request_count_;
  MessageCount response_count_;
  std::optional<std::chrono::steady_clock::time_point> first_response_at_;
};

}  // namespace sparktrace::proxy
