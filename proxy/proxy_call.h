#pragma once
// One proxied RPC: a server reactor facing the client (downstream) and a client reactor facing
// Spark Connect (upstream), joined by two MessagePumps. Every method is treated as a bidi stream of
// ByteBuffers, which forwards unary, client-, server- and bidi-streaming calls alike without ever
// parsing or re-serialising a payload.
//
// Threads: reactions of the two reactors run on gRPC's threads, possibly at the same time. All
// state lives under `mu_`; a reaction updates it, decides which operations to start next (Plan),
// and starts them after releasing the lock (gRPC may run a reaction inline, which would then
// re-enter the lock). Backpressure: a read is only started when its pump has room, so a slow
// side stalls the other through HTTP/2 flow control.
//
// Lifetime: created by ForwardingService for each incoming call; deletes itself when both
// reactors' OnDone have run. The downstream call is finished only after the upstream one is done.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/client_callback.h>

#include "proxy/call_observer.h"
#include "proxy/message_pump.h"

namespace sparktrace::proxy {

class UpstreamChannels;

class ProxyCall {
 public:
  // Messages buffered per direction, counting the one being written.
  static constexpr std::size_t kWindow = 2;

  // Starts forwarding the call; the returned reactor belongs to the call and must be handed to gRPC.
  static grpc::ServerGenericBidiReactor* Start(grpc::GenericCallbackServerContext* context,
                                               UpstreamChannels& upstream,
                                               std::span<CallObserver* const> observers);

  ProxyCall(const ProxyCall&) = delete;
  ProxyCall& operator=(const ProxyCall&) = delete;

 private:
  class Downstream final : public grpc::ServerGenericBidiReactor {
   public:
    explicit Downstream(ProxyCall& call) : call_(call) {}
    void OnSendInitialMetadataDone(bool ok) override { call_.OnClientHeadersSent(ok); }
    void OnReadDone(bool ok) override { call_.OnClientReadDone(ok); }
    void OnWriteDone(bool ok) override { call_.OnClientWriteDone(ok); }
    void OnCancel() override { call_.OnClientCancelled(); }
    void OnDone() override { call_.OnReactorDone(); }

   private:
    ProxyCall& call_;
  };

  class Upstream final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    explicit Upstream(ProxyCall& call) : call_(call) {}
    void OnReadInitialMetadataDone(bool ok) override { call_.OnUpstreamHeaders(ok); }
    void OnReadDone(bool ok) override { call_.OnUpstreamReadDone(ok); }
    void OnWriteDone(bool ok) override { call_.OnUpstreamWriteDone(ok); }
    void OnWritesDoneDone(bool /*ok*/) override {}
    void OnDone(const grpc::Status& status) override { call_.OnUpstreamDone(status); }

   private:
    ProxyCall& call_;
  };

  // Response headers towards the client: awaiting the upstream's, being sent, sent, or none
  // (the upstream sent none; the status goes out trailers-only).
  enum class HeaderState { kAwaiting, kSending, kSent, kNone };

  // Operations to start once the lock is released.
  struct Ops {
    bool client_read = false;
    bool client_send_headers = false;
    bool client_write = false;
    bool client_finish = false;
    bool upstream_read = false;
    bool upstream_write = false;
    bool upstream_writes_done = false;
    bool upstream_cancel = false;
    int upstream_holds_released = 0;

    // Anything besides Finish, i.e. work that touches the call after the lock is released.
    bool AnyBeforeFinish() const {
      return client_read || client_send_headers || client_write || upstream_read || upstream_write ||
             upstream_writes_done || upstream_cancel || upstream_holds_released > 0;
    }
  };

  ProxyCall(grpc::GenericCallbackServerContext* context, std::vector<std::unique_ptr<CallTap>> taps);

  void StartUpstream(UpstreamChannels& upstream);

  // Reactions.
  void OnClientHeadersSent(bool ok);
  void OnClientReadDone(bool ok);
  void OnClientWriteDone(bool ok);
  void OnClientCancelled();
  void OnUpstreamHeaders(bool ok);
  void OnUpstreamReadDone(bool ok);
  void OnUpstreamWriteDone(bool ok);
  void OnUpstreamDone(const grpc::Status& status);
  void OnReactorDone();

  // Marks the call broken (the client is gone): stop moving data, cancel upstream.
  void BreakLocked(Ops& ops);
  // Decides, under the lock, which operations to start next, and marks them started.
  void PlanLocked(Ops& ops);
  // Starts `ops` (lock not held). Finish goes last and only when no other thread is still
  // starting operations, so nothing touches the call after Finish may have deleted it.
  void Run(Ops ops);
  void NotifyCallEnded();

  grpc::GenericCallbackServerContext* const context_;
  const std::chrono::steady_clock::time_point started_at_;
  std::unique_ptr<grpc::ClientContext> upstream_context_;
  // The generic stub's call keeps a raw pointer to its channel: hold it for the call's life.
  std::shared_ptr<grpc::Channel> channel_;
  Downstream downstream_{*this};
  Upstream upstream_{*this};
  std::vector<std::unique_ptr<CallTap>> taps_;

  std::mutex mu_;
  MessagePump requests_{kWindow};   // client → upstream
  MessagePump responses_{kWindow};  // upstream → client
  HeaderState headers_ = HeaderState::kAwaiting;
  bool upstream_reads_ended_ = false;
  bool upstream_writes_failed_ = false;
  bool writes_done_started_ = false;
  bool upstream_write_hold_ = true;  // we may still start writes on the upstream reactor
  bool upstream_read_hold_ = true;   // we may still start reads on the upstream reactor
  bool broken_ = false;
  bool finish_started_ = false;
  int threads_starting_ops_ = 0;  // Runs between planning and starting their operations
  std::optional<grpc::Status> upstream_status_;
  std::optional<grpc::Status> client_status_;  // what Finish sent
  MessageCount request_count_;
  MessageCount response_count_;
  std::optional<std::chrono::steady_clock::time_point> first_response_at_;

  // Both reactors' OnDone must run before the call may be deleted.
  std::atomic<int> reactors_running_{2};
};

}  // namespace sparktrace::proxy
