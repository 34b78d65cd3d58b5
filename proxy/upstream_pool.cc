#include "proxy/upstream_pool.h"

#include <algorithm>

#include <event2/bufferevent_ssl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include "proxy/relay_context.h"

namespace sparktrace::proxy {
namespace {

timeval ToTimeval(std::chrono::milliseconds duration) {
  return {static_cast<time_t>(duration.count() / 1000), static_cast<suseconds_t>(duration.count() % 1000 * 1000)};
}

// A TLS session to `host` that checks the certificate names it (a name or an IP address).
SSL* NewClientSsl(SSL_CTX* context, const std::string& host) {
  SSL* ssl = SSL_new(context);
  if (ssl == nullptr) return nullptr;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  in6_addr address6{};
  in_addr address4{};
  const bool is_ip = inet_pton(AF_INET, host.c_str(), &address4) == 1 || inet_pton(AF_INET6, host.c_str(), &address6) == 1;
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  }
  return ssl;
}

}  // namespace

UpstreamPool::UpstreamPool(RelayContext& context, UpstreamTarget target, evdns_base* dns, UpstreamStatus& status,
                           RelayStats& stats, Http2Settings settings)
    : context_(context),
      target_(std::move(target)),
      dns_(dns),
      status_(status),
      stats_(stats),
      settings_(settings),
      jitter_(static_cast<std::minstd_rand::result_type>(reinterpret_cast<std::uintptr_t>(this))) {
  reconnect_timer_.reset(evtimer_new(context_.base(), OnReconnectTimer, this));
  maintenance_timer_.reset(event_new(context_.base(), -1, EV_PERSIST, OnMaintenanceTimer, this));
  const timeval interval = ToTimeval(kMaintenanceInterval);
  evtimer_add(maintenance_timer_.get(), &interval);
}

UpstreamPool::~UpstreamPool() {
  stopped_ = true;
  for (auto& connection : connections_) {
    if (connection->ready()) status_.connected.fetch_sub(1, std::memory_order_relaxed);
  }
}

void UpstreamPool::KeepWarm() {
  keep_warm_ = true;
  if (connections_.empty()) Connect();
}

void UpstreamPool::Stop() {
  stopped_ = true;
  keep_warm_ = false;
  evtimer_del(reconnect_timer_.get());
  evtimer_del(maintenance_timer_.get());
  // Closing tells the streams still open; OnClosed retires each connection.
  while (!connections_.empty()) connections_.back()->Close("proxy stopping");
}

bool UpstreamPool::BackingOff() const {
  return backoff_.count() > 0 && std::chrono::steady_clock::now() < next_attempt_at_;
}

Http2Connection* UpstreamPool::Acquire(std::string* why) {
  if (stopped_) {
    *why = "the proxy is stopping";
    return nullptr;
  }
  Http2Connection* least_loaded = nullptr;  // with room under the upstream's stream limit
  Http2Connection* any = nullptr;           // the least loaded of all, when every one is full
  bool connecting = false;                  // one is still connecting
  for (const auto& connection : connections_) {
    if (connection->closed()) continue;
    connecting = connecting || !connection->ready();
    if (any == nullptr || connection->open_streams() < any->open_streams()) any = connection.get();
    if (connection->HasStreamCapacity() &&
        (least_loaded == nullptr || connection->open_streams() < least_loaded->open_streams())) {
      least_loaded = connection.get();
    }
  }
  // No new connection while one is still connecting (it may fail like the others would) or
  // while backing off: the ones there are serve, or the call fails fast.
  const bool room_for_another = connections_.size() < kMaxConnections && !connecting && !BackingOff();
  if (least_loaded != nullptr && (least_loaded->open_streams() < kStreamsPerConnection || !room_for_another)) {
    return least_loaded;
  }
  if (room_for_another) {
    if (Http2Connection* fresh = Connect()) return fresh;
  }
  if (least_loaded == nullptr && any == nullptr) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_attempt_at_ -
                                                                            std::chrono::steady_clock::now());
    *why = last_failure_.empty() ? "cannot connect" : last_failure_;
    if (wait.count() > 0) {
      *why += "; next attempt in " + std::to_string(wait.count()) + " ms";
      stats_.Hit(RelayLimit::kUpstreamBackoff);
    }
    return nullptr;
  }
  return least_loaded != nullptr ? least_loaded : any;  // any: nghttp2 holds the stream until one has room
}

Http2Connection* UpstreamPool::Connect() {
  if (stopped_) return nullptr;
  const timeval connect_timeout = ToTimeval(kConnectTimeout);
  std::unique_ptr<ConnectionIo> io;
  if (target_.tls == nullptr) {
    io = SocketIo::Connect(context_, dns_, target_.host, target_.port, connect_timeout);
    stats_.UpstreamConnectAttempt();
  } else {
    SSL* ssl = NewClientSsl(target_.tls, target_.host);
    bufferevent* raw = ssl != nullptr ? bufferevent_openssl_socket_new(context_.base(), -1, ssl,
                                                                       BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)
                                      : nullptr;
    if (raw == nullptr) {
      ConnectFailed("cannot create a TLS session");
      return nullptr;
    }
    BufferEventPtr bufferevent(raw);
    bufferevent_set_timeouts(raw, nullptr, &connect_timeout);  // cleared once connected
    stats_.UpstreamConnectAttempt();
    if (bufferevent_socket_connect_hostname(raw, dns_, AF_UNSPEC, target_.host.c_str(), target_.port) != 0) {
      ConnectFailed("cannot start connecting");
      return nullptr;
    }
    io = std::make_unique<BufferEventIo>(context_, std::move(bufferevent));
  }
  const std::string peer = target_.host + ":" + std::to_string(target_.port);
  connections_.push_back(std::make_unique<Http2Connection>(context_, Http2Connection::Role::kClient, std::move(io),
                                                           peer, *this, settings_));
  Http2Connection* connection = connections_.back().get();
  connection->Start();  // may fail at once (and leave connections_): then there is none to offer
  return connection->closed() ? nullptr : connection;
}

Http2Stream* UpstreamPool::OnNewStream(Http2Connection& /*connection*/, std::int32_t /*stream_id*/) {
  return nullptr;  // the upstream cannot open streams towards a client (no server push)
}

void UpstreamPool::OnReady(Http2Connection& connection) {
  if (failures_in_outage_ > 0) {
    spdlog::info("upstream {} reachable again after {} failed connection attempt(s)", connection.peer(),
                 failures_in_outage_);
  }
  backoff_ = std::chrono::milliseconds(0);
  failures_in_outage_ = 0;
  last_failure_.clear();
  warnings_.Reset();
  status_.connected.fetch_add(1, std::memory_order_relaxed);
}

void UpstreamPool::OnClosed(Http2Connection& connection) {
  const auto it = std::find_if(connections_.begin(), connections_.end(),
                               [&connection](const auto& owned) { return owned.get() == &connection; });
  if (it == connections_.end()) return;
  const bool was_ready = connection.ready();
  const std::string why = connection.close_reason();
  context_.Retire(std::move(*it));
  connections_.erase(it);
  if (stopped_) {
    if (was_ready) status_.connected.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  if (was_ready) {
    status_.connected.fetch_sub(1, std::memory_order_relaxed);
    // Lost or closed as idle: the warm one comes back after a pause (not at once, so that an
    // upstream that accepts and then drops connections is not dialled in a loop).
    if (keep_warm_ && connections_.empty()) ScheduleReconnect(kFirstBackoff);
  } else {
    ConnectFailed(why);
  }
}

void UpstreamPool::ConnectFailed(std::string_view why) {
  if (status_.on_connect_failure) status_.on_connect_failure();
  ++failures_in_outage_;
  last_failure_ = std::string(why);
  backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(kMaxBackoff, backoff_ * 2);
  // +-20 %: workers (and proxies) that lost the upstream together do not all dial it together.
  std::uniform_int_distribution<long> spread(backoff_.count() * 8 / 10, backoff_.count() * 12 / 10);
  const std::chrono::milliseconds delay(spread(jitter_));
  next_attempt_at_ = std::chrono::steady_clock::now() + delay;
  if (const auto held_back = warnings_.Allow()) {
    spdlog::warn("cannot connect to upstream {}:{}: {}; calls fail at once (UNAVAILABLE) until the next attempt in "
                 "{} ms{}",
                 target_.host, target_.port, why, delay.count(),
                 *held_back > 0 ? fmt::format(" ({} more failed attempts not logged)", *held_back) : "");
  }
  ScheduleReconnect(delay);
}

void UpstreamPool::ScheduleReconnect(std::chrono::milliseconds delay) {
  if (stopped_) return;
  evtimer_del(reconnect_timer_.get());
  const timeval when = ToTimeval(delay);
  evtimer_add(reconnect_timer_.get(), &when);
}

void UpstreamPool::OnReconnectTimer(evutil_socket_t, short, void* self) {
  auto* pool = static_cast<UpstreamPool*>(self);
  const RelayContext::EventScope scope(pool->context_);
  // One attempt per step, while nothing is up or on its way: the warm connection, or the probe
  // that ends the outage (calls meanwhile failed fast rather than dialling).
  const bool none = std::none_of(pool->connections_.begin(), pool->connections_.end(),
                                 [](const auto& connection) { return !connection->closed(); });
  if (none && (pool->keep_warm_ || pool->backoff_.count() > 0)) pool->Connect();
}

void UpstreamPool::OnMaintenanceTimer(evutil_socket_t, short, void* self) {
  auto* pool = static_cast<UpstreamPool*>(self);
  const RelayContext::EventScope scope(pool->context_);
  pool->CloseIdleConnections();
  if (++pool->maintenance_ticks_ % (kPingInterval / kMaintenanceInterval) == 0) pool->SendKeepalivePings();
}

void UpstreamPool::CloseIdleConnections() {
  std::vector<Http2Connection*> idle;
  for (const auto& connection : connections_) {
    // TakeActivity clears the flag: idle means no stream since the previous tick, and none now.
    if (!connection->TakeActivity() && connection->open_streams() == 0) idle.push_back(connection.get());
  }
  // The warm one stays: readiness and the next call's latency depend on it.
  if (idle.size() == connections_.size() && !idle.empty()) idle.pop_back();
  for (Http2Connection* connection : idle) connection->Close("idle");
}

void UpstreamPool::SendKeepalivePings() {
  std::vector<Http2Connection*> dead;
  for (const auto& connection : connections_) {
    if (connection->ready() && connection->open_streams() > 0 && !connection->Ping()) dead.push_back(connection.get());
  }
  for (Http2Connection* connection : dead) connection->Close("keepalive PING unanswered");
}

}  // namespace sparktrace::proxy
