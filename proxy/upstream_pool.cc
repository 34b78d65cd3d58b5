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

constexpr std::chrono::milliseconds kFirstBackoff{1000};
constexpr std::chrono::milliseconds kMaxBackoff{30'000};

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

UpstreamPool::UpstreamPool(RelayContext& context, UpstreamTarget target, evdns_base* dns, UpstreamStatus& status)
    : context_(context), target_(std::move(target)), dns_(dns), status_(status) {
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

Http2Connection* UpstreamPool::Acquire() {
  if (stopped_) return nullptr;
  Http2Connection* least_loaded = nullptr;  // with room under the upstream's stream limit
  Http2Connection* any = nullptr;           // the least loaded of all, when every one is full
  for (const auto& connection : connections_) {
    if (connection->closed()) continue;
    if (any == nullptr || connection->open_streams() < any->open_streams()) any = connection.get();
    if (connection->HasStreamCapacity() &&
        (least_loaded == nullptr || connection->open_streams() < least_loaded->open_streams())) {
      least_loaded = connection.get();
    }
  }
  const bool room_for_another = connections_.size() < kMaxConnections;
  if (least_loaded != nullptr && (least_loaded->open_streams() < kStreamsPerConnection || !room_for_another)) {
    return least_loaded;
  }
  if (room_for_another) {
    if (Http2Connection* fresh = Connect()) return fresh;
  }
  return least_loaded != nullptr ? least_loaded : any;  // any: nghttp2 holds the stream until one has room
}

Http2Connection* UpstreamPool::Connect() {
  if (stopped_) return nullptr;
  const timeval connect_timeout = ToTimeval(kConnectTimeout);
  std::unique_ptr<ConnectionIo> io;
  if (target_.tls == nullptr) {
    io = SocketIo::Connect(context_, dns_, target_.host, target_.port, connect_timeout);
  } else {
    SSL* ssl = NewClientSsl(target_.tls, target_.host);
    bufferevent* raw = ssl != nullptr ? bufferevent_openssl_socket_new(context_.base(), -1, ssl,
                                                                       BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)
                                      : nullptr;
    if (raw == nullptr) {
      return nullptr;
    }
    BufferEventPtr bufferevent(raw);
    bufferevent_set_timeouts(raw, nullptr, &connect_timeout);  // cleared once connected
    if (bufferevent_socket_connect_hostname(raw, dns_, AF_UNSPEC, target_.host.c_str(), target_.port) != 0) {
      if (status_.on_connect_failure) status_.on_connect_failure();
      return nullptr;
    }
    io = std::make_unique<BufferEventIo>(context_, std::move(bufferevent));
  }
  const std::string peer = target_.host + ":" + std::to_string(target_.port);
  connections_.push_back(std::make_unique<Http2Connection>(context_, Http2Connection::Role::kClient, std::move(io),
                                                           peer, *this, Http2Settings{}));
  Http2Connection* connection = connections_.back().get();
  connection->Start();  // may fail at once (and leave connections_): then there is none to offer
  return connection->closed() ? nullptr : connection;
}

Http2Stream* UpstreamPool::OnNewStream(Http2Connection& /*connection*/, std::int32_t /*stream_id*/) {
  return nullptr;  // the upstream cannot open streams towards a client (no server push)
}

void UpstreamPool::OnReady(Http2Connection& /*connection*/) {
  backoff_ = std::chrono::milliseconds(0);
  status_.connected.fetch_add(1, std::memory_order_relaxed);
}

void UpstreamPool::OnClosed(Http2Connection& connection) {
  const auto it = std::find_if(connections_.begin(), connections_.end(),
                               [&connection](const auto& owned) { return owned.get() == &connection; });
  if (it == connections_.end()) return;
  if (connection.ready()) {
    status_.connected.fetch_sub(1, std::memory_order_relaxed);
  } else if (!stopped_) {
    spdlog::warn("cannot connect to upstream {}", connection.peer());
    if (status_.on_connect_failure) status_.on_connect_failure();
  }
  context_.Retire(std::move(*it));
  connections_.erase(it);
  if (keep_warm_ && !stopped_ && connections_.empty()) ScheduleReconnect();
}

void UpstreamPool::ScheduleReconnect() {
  if (evtimer_pending(reconnect_timer_.get(), nullptr)) return;
  backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(kMaxBackoff, backoff_ * 2);
  const timeval delay = ToTimeval(backoff_);
  evtimer_add(reconnect_timer_.get(), &delay);
}

void UpstreamPool::OnReconnectTimer(evutil_socket_t, short, void* self) {
  auto* pool = static_cast<UpstreamPool*>(self);
  const RelayContext::EventScope scope(pool->context_);
  if (pool->keep_warm_ && pool->connections_.empty() && pool->Connect() == nullptr) pool->ScheduleReconnect();
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
