#pragma once
// One relay worker's HTTP/2 connections to the upstream. Calls are multiplexed on them: a call
// takes the least loaded connection with room under the upstream's
// SETTINGS_MAX_CONCURRENT_STREAMS. Once every connection carries kStreamsPerConnection streams
// another is opened (up to kMaxConnections; past that, nghttp2 queues a stream until one ends):
// gRPC servers serve each connection on one thread (Spark Connect's Netty: one event loop per
// connection), so a worker's concurrent calls are spread over a few connections instead of
// queueing behind one thread. Connections idle for a whole kMaintenanceInterval are closed, but
// one is kept open while idle, reconnecting with backoff, so that readiness can say whether the
// upstream is reachable and the first call is not slowed by a connect. Keepalive: a PING every
// kPingInterval while streams are open, and a connection whose PING goes unanswered for a whole
// interval is closed (its calls end UNAVAILABLE).
//
// Outages: a failed connect starts a backoff (kFirstBackoff doubling to kMaxBackoff, with
// jitter) shared by all the worker's calls. Until the next attempt is due, a call that finds no
// connection fails at once (UNAVAILABLE, saying when the next attempt is) instead of dialling
// again: an outage under load costs one attempt per backoff step, not one per call. The
// warning is logged once, then at most every kWarningInterval with the count held back.
//
// Threads: the worker's event loop; `UpstreamStatus` is the one thing other threads read.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <random>

#include <event2/dns.h>

#include "common/log_throttle.h"
#include "proxy/http2_connection.h"
#include "proxy/libevent_handles.h"
#include "proxy/relay_stats.h"

namespace sparktrace::proxy {

class RelayContext;

struct UpstreamTarget {
  std::string host;
  int port = 0;
  SSL_CTX* tls = nullptr;  // null: plaintext (h2c)
};

// Shared by every worker's pool.
struct UpstreamStatus {
  std::atomic<int> connected{0};            // connections with the peer's SETTINGS received
  std::function<void()> on_connect_failure;  // runs on a worker, once per failed attempt
};

class UpstreamPool final : public Http2ConnectionOwner {
 public:
  static constexpr std::size_t kMaxConnections = 16;
  static constexpr std::size_t kStreamsPerConnection = 8;
  static constexpr std::chrono::seconds kMaintenanceInterval{30};
  // Not shorter: gRPC servers count more frequent PINGs without data as abuse (gRPC Java's
  // permitKeepAliveTime and grpc-core's min ping interval default to 5 minutes) and close the
  // connection, which would end every stream on it.
  static constexpr std::chrono::seconds kPingInterval{300};
  static constexpr std::chrono::seconds kConnectTimeout{10};
  static constexpr std::chrono::milliseconds kFirstBackoff{250};
  static constexpr std::chrono::milliseconds kMaxBackoff{5000};
  static constexpr std::chrono::seconds kWarningInterval{10};

  UpstreamPool(RelayContext& context, UpstreamTarget target, evdns_base* dns, UpstreamStatus& status,
               RelayStats& stats, Http2Settings settings);
  ~UpstreamPool() override;
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  // Opens the idle connection and keeps one open from now on.
  void KeepWarm();
  // A connection for one more call (maybe still connecting), or nullptr when none can be made;
  // `why` then says why (the last connect failure, and when the next attempt is).
  Http2Connection* Acquire(std::string* why);
  // No more connections, warm or new; the open ones close.
  void Stop();

  Http2Stream* OnNewStream(Http2Connection& connection, std::int32_t stream_id) override;
  void OnReady(Http2Connection& connection) override;
  void OnClosed(Http2Connection& connection) override;

 private:
  Http2Connection* Connect();
  // A connect failed (`why`): backs off, schedules the next attempt, warns (rate-limited).
  void ConnectFailed(std::string_view why);
  void ScheduleReconnect(std::chrono::milliseconds delay);
  bool BackingOff() const;
  static void OnReconnectTimer(evutil_socket_t, short, void* self);
  static void OnMaintenanceTimer(evutil_socket_t, short, void* self);
  void CloseIdleConnections();
  void SendKeepalivePings();

  RelayContext& context_;
  const UpstreamTarget target_;
  evdns_base* const dns_;
  UpstreamStatus& status_;
  RelayStats& stats_;
  const Http2Settings settings_;
  std::vector<std::unique_ptr<Http2Connection>> connections_;
  EventPtr reconnect_timer_;
  EventPtr maintenance_timer_;
  int maintenance_ticks_ = 0;
  std::chrono::milliseconds backoff_{0};  // 0: the last attempt succeeded
  std::chrono::steady_clock::time_point next_attempt_at_{};
  std::string last_failure_;
  std::uint64_t failures_in_outage_ = 0;
  LogThrottle warnings_{kWarningInterval};
  std::minstd_rand jitter_;
  bool keep_warm_ = false;
  bool stopped_ = false;
};

}  // namespace sparktrace::proxy
