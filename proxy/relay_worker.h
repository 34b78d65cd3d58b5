#pragma once
// One relay worker: a thread running its own libevent loop with its own listening socket
// (SO_REUSEPORT: the kernel spreads new connections over the workers), its own client
// connections, its own upstream connections and its own receive blocks. Workers share nothing
// but the read-only environment and two counters, so adding workers adds throughput instead of
// contention.
//
// Other threads talk to a worker only through the Run* methods, which queue a task, wake the
// loop and wait for the task to have run there.

#include <event2/dns.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/log_throttle.h"
#include "common/result.h"
#include "proxy/call_registry.h"
#include "proxy/http2_connection.h"
#include "proxy/libevent_handles.h"
#include "proxy/relay_context.h"
#include "proxy/relayed_call.h"
#include "proxy/upstream_pool.h"

namespace sparktrace::proxy {

// The bounds on client connections, the same for every worker.
struct ClientLimits {
  std::int64_t max_connections = 4096;  // all workers together
  std::uint32_t max_streams_per_connection = 128;
  std::chrono::milliseconds handshake_timeout{10'000};           // TLS handshake + HTTP/2 preface + SETTINGS
  std::chrono::milliseconds idle_timeout{3'600'000};             // no call open; 0: never
  std::size_t connection_buffer_budget = std::size_t{64} << 20;  // what one connection's windows may grow by
};

struct WorkerSetup {
  const RelayEnvironment* environment = nullptr;
  UpstreamTarget upstream;
  SSL_CTX* listener_tls = nullptr;  // null: plaintext (h2c)
  int listen_fd = -1;               // bound and listening; the worker owns it from now on
  UpstreamStatus* upstream_status = nullptr;
  LiveCalls* live_calls = nullptr;
  RelayStats* stats = nullptr;
  ClientLimits limits;
  Http2Settings client_settings;    // what client connections are told
  Http2Settings upstream_settings;  // what upstream connections are told
};

class RelayWorker final : public Http2ConnectionOwner, public CallOwner {
 public:
  static Result<std::unique_ptr<RelayWorker>> Create(const WorkerSetup& setup);
  ~RelayWorker() override;
  RelayWorker(const RelayWorker&) = delete;
  RelayWorker& operator=(const RelayWorker&) = delete;

  void Start();
  // Closes the listener and sends GOAWAY on every client connection; returns once done.
  void StopAccepting();
  // Cancels every call still running (drain timeout); returns once done.
  void CancelAll();
  // Closes every connection, ends the loop and joins the thread.
  void Stop();

  Http2Stream* OnNewStream(Http2Connection& connection, std::int32_t stream_id) override;
  void OnReady(Http2Connection& connection) override;
  void OnClosed(Http2Connection& connection) override;
  void OnStreamsOverLimit(Http2Connection& connection) override;

  // The calls' owner: upstream streams come from the pool, finished calls go back to the registry.
  CallConnection* AcquireUpstream(std::string* why) override { return upstream_->Acquire(why); }
  void Finished(RelayedCall& call) override { calls_->Finished(call); }

 private:
  struct DnsDeleter {
    void operator()(evdns_base* dns) const { evdns_base_free(dns, 1); }
  };

  explicit RelayWorker(const WorkerSetup& setup);
  // Runs `task` on the loop and waits for it.
  void RunOnLoop(const std::function<void()>& task);
  static void OnWake(evutil_socket_t, short, void* self);
  static void OnAccept(evconnlistener*, evutil_socket_t fd, sockaddr* address, int length, void* self);
  // accept() failed (out of file descriptors, most likely): pause accepting briefly instead of
  // spinning on a listener that stays readable.
  static void OnAcceptError(evconnlistener* listener, void* self);
  static void OnResumeAccepting(evutil_socket_t, short, void* self);
  void Accept(evutil_socket_t fd, const sockaddr* address);
  // At --max-connections: sends GOAWAY to, and closes, this worker's client connection that has had
  // no open stream for longest (one still in its handshake counts from when it was accepted).
  // False when every connection has a call open.
  bool EvictLongestIdle();
  // Closes client connections whose handshake is overdue, and drains those idle too long.
  static void OnSweep(evutil_socket_t, short, void* self);
  void Sweep();

  const WorkerSetup setup_;
  EventBasePtr base_;
  std::unique_ptr<RelayContext> context_;
  // After the context: evdns_base_free reports pending lookups to it (RelayContext::Resolution).
  std::unique_ptr<evdns_base, DnsDeleter> dns_;
  std::unique_ptr<UpstreamPool> upstream_;
  struct ClientConnection {
    std::unique_ptr<Http2Connection> connection;
    std::chrono::steady_clock::time_point accepted_at;
    std::chrono::steady_clock::time_point last_busy;  // a call was open then (the sweep's or a new stream's time)
    std::shared_ptr<ConnectionShare> share;           // its part of the relay budget
  };
  std::unordered_map<Http2Connection*, ClientConnection> clients_;
  std::unique_ptr<CallRegistry> calls_;
  ListenerPtr listener_;
  EventPtr wake_;
  EventPtr resume_accepting_;
  EventPtr sweep_;
  LogThrottle accept_warnings_{std::chrono::seconds(10)};
  std::mutex tasks_mu_;
  std::vector<std::function<void()>> tasks_;
  std::thread thread_;
  bool accepting_ = true;
};

}  // namespace sparktrace::proxy
