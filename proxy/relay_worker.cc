#include "proxy/relay_worker.h"

#include <arpa/inet.h>
#include <event2/bufferevent_ssl.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <future>

namespace sparktrace::proxy {
namespace {

// After the last calls are cancelled, how long the loop keeps running so that the resets and
// GOAWAYs already queued reach the sockets before they close.
constexpr timeval kLingerOnStop{0, 100'000};
// How long accepting pauses after accept() failed (EMFILE: connections must close first).
constexpr timeval kAcceptPause{0, 100'000};

// How often client connections are checked against the handshake and idle timeouts: a quarter
// of the shorter one (so a timeout bites within 25 % of its value), between 10 ms and 1 s.
timeval SweepInterval(const ClientLimits& limits) {
  auto shortest = limits.handshake_timeout;
  if (limits.idle_timeout.count() > 0) shortest = std::min(shortest, limits.idle_timeout);
  const auto interval =
      std::clamp(shortest / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  return {static_cast<time_t>(interval.count() / 1000),
          static_cast<suseconds_t>(interval.count() % 1000 * 1000)};
}

// gRPC's way of naming a peer: "ipv4:10.0.0.7:53122", "ipv6:[::1]:53122".
std::string PeerName(const sockaddr* address) {
  char host[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    return "ipv4:" + std::string(host) + ":" + std::to_string(ntohs(v4->sin_port));
  }
  if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    return "ipv6:[" + std::string(host) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  return "unknown";
}

}  // namespace

RelayWorker::RelayWorker(const WorkerSetup& setup) : setup_(setup) {}

Result<std::unique_ptr<RelayWorker>> RelayWorker::Create(const WorkerSetup& setup) {
  auto worker = std::unique_ptr<RelayWorker>(new RelayWorker(setup));
  worker->base_.reset(event_base_new());
  if (!worker->base_) {
    close(setup.listen_fd);
    return Error{ErrorCode::kInternal, "cannot create an event loop"};
  }
  event_base* base = worker->base_.get();
  worker->dns_.reset(evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS));
  if (!worker->dns_) worker->dns_.reset(evdns_base_new(base, 0));  // no resolv.conf: numeric and hosts only
  worker->context_ = std::make_unique<RelayContext>(base);
  worker->upstream_ =
      std::make_unique<UpstreamPool>(*worker->context_, setup.upstream, worker->dns_.get(),
                                     *setup.upstream_status, *setup.stats, setup.upstream_settings);
  worker->calls_ = std::make_unique<CallRegistry>(*worker->context_, *setup.live_calls);
  worker->listener_.reset(
      evconnlistener_new(base, OnAccept, worker.get(), LEV_OPT_CLOSE_ON_FREE, 0, setup.listen_fd));
  if (!worker->listener_) {
    close(setup.listen_fd);
    return Error{ErrorCode::kIo, "cannot listen"};
  }
  evconnlistener_set_error_cb(worker->listener_.get(), OnAcceptError);
  worker->resume_accepting_.reset(evtimer_new(base, OnResumeAccepting, worker.get()));
  worker->wake_.reset(event_new(base, -1, 0, OnWake, worker.get()));
  worker->sweep_.reset(event_new(base, -1, EV_PERSIST, OnSweep, worker.get()));
  const timeval sweep_interval = SweepInterval(setup.limits);
  evtimer_add(worker->sweep_.get(), &sweep_interval);
  return worker;
}

RelayWorker::~RelayWorker() { Stop(); }

void RelayWorker::Start() {
  thread_ = std::thread([this] {
    {
      const RelayContext::EventScope scope(*context_);
      upstream_->KeepWarm();
    }
    event_base_loop(base_.get(), EVLOOP_NO_EXIT_ON_EMPTY);
  });
}

void RelayWorker::RunOnLoop(const std::function<void()>& task) {
  if (!thread_.joinable()) return;
  std::promise<void> done;
  {
    const std::lock_guard lock(tasks_mu_);
    tasks_.push_back([&task, &done] {
      task();
      done.set_value();
    });
  }
  event_active(wake_.get(), EV_READ, 0);
  done.get_future().wait();
}

void RelayWorker::OnWake(evutil_socket_t, short, void* self) {
  auto* worker = static_cast<RelayWorker*>(self);
  std::vector<std::function<void()>> tasks;
  {
    const std::lock_guard lock(worker->tasks_mu_);
    tasks.swap(worker->tasks_);
  }
  const RelayContext::EventScope scope(*worker->context_);
  for (const auto& task : tasks) task();
}

void RelayWorker::StopAccepting() {
  RunOnLoop([this] {
    accepting_ = false;
    listener_.reset();
    for (const auto& [connection, client] : clients_) connection->Drain();
  });
}

void RelayWorker::CancelAll() {
  RunOnLoop([this] { calls_->CancelAll(); });
}

void RelayWorker::Stop() {
  if (!thread_.joinable()) return;
  RunOnLoop([this] {
    upstream_->Stop();
    event_base_loopexit(base_.get(), &kLingerOnStop);
  });
  thread_.join();
}

void RelayWorker::OnAccept(evconnlistener*, evutil_socket_t fd, sockaddr* address, int /*length*/,
                           void* self) {
  auto* worker = static_cast<RelayWorker*>(self);
  const RelayContext::EventScope scope(*worker->context_);
  worker->Accept(fd, address);
}

void RelayWorker::OnAcceptError(evconnlistener* listener, void* self) {
  auto* worker = static_cast<RelayWorker*>(self);
  const int error = EVUTIL_SOCKET_ERROR();
  if (const auto held_back = worker->accept_warnings_.Allow()) {
    spdlog::warn("cannot accept connections: {}; pausing for {} ms{}", evutil_socket_error_to_string(error),
                 kAcceptPause.tv_usec / 1000,
                 *held_back > 0 ? fmt::format(" ({} more pauses not logged)", *held_back) : "");
  }
  evconnlistener_disable(listener);
  evtimer_add(worker->resume_accepting_.get(), &kAcceptPause);
}

void RelayWorker::OnResumeAccepting(evutil_socket_t, short, void* self) {
  auto* worker = static_cast<RelayWorker*>(self);
  if (worker->listener_) evconnlistener_enable(worker->listener_.get());
}

bool RelayWorker::EvictLongestIdle() {
  Http2Connection* longest_idle = nullptr;
  auto idle_since = std::chrono::steady_clock::time_point::max();
  for (const auto& [connection, client] : clients_) {
    if (connection->closed() || connection->open_streams() > 0) continue;
    if (client.last_busy < idle_since) {
      idle_since = client.last_busy;
      longest_idle = connection;
    }
  }
  if (longest_idle == nullptr) return false;
  setup_.stats->IdleConnectionEvicted();
  longest_idle->GoAwayAndClose("idle longest at --max-connections: closed to admit a new client");
  return true;
}

void RelayWorker::Accept(evutil_socket_t fd, const sockaddr* address) {
  // At the cap, a connection without calls gives its slot up: otherwise connections that only
  // sent a preface (or went quiet) would hold every slot for the idle timeout and lock new
  // clients out. Only this worker's connections are candidates (the kernel spreads connections,
  // idle ones included, over the workers). With none idle here the new connection is refused at
  // once, not left in the backlog: the client sees it closed, and the descriptors stay for the
  // connections being served.
  if (setup_.stats->client_connections() >= setup_.limits.max_connections && !EvictLongestIdle()) {
    setup_.stats->Hit(RelayLimit::kMaxConnections);
    close(fd);
    return;
  }
  std::unique_ptr<ConnectionIo> io;
  if (setup_.listener_tls != nullptr) {
    SSL* ssl = SSL_new(setup_.listener_tls);
    bufferevent* raw = ssl != nullptr
                           ? bufferevent_openssl_socket_new(base_.get(), fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                                            BEV_OPT_CLOSE_ON_FREE)
                           : nullptr;
    if (raw == nullptr) {
      close(fd);
      return;
    }
    io = std::make_unique<BufferEventIo>(*context_, BufferEventPtr(raw));
  } else {
    io = std::make_unique<SocketIo>(*context_, fd);
  }
  auto connection =
      std::make_unique<Http2Connection>(*context_, Http2Connection::Role::kServer, std::move(io),
                                        PeerName(address), *this, setup_.client_settings);
  Http2Connection* added = connection.get();
  const auto now = std::chrono::steady_clock::now();
  clients_.emplace(
      added, ClientConnection{std::move(connection), now, now,
                              std::make_shared<ConnectionShare>(setup_.limits.connection_buffer_budget)});
  setup_.stats->ClientConnected();
  added->Start();
}

void RelayWorker::OnSweep(evutil_socket_t, short, void* self) {
  auto* worker = static_cast<RelayWorker*>(self);
  const RelayContext::EventScope scope(*worker->context_);
  worker->Sweep();
}

void RelayWorker::Sweep() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<Http2Connection*> overdue;
  std::vector<Http2Connection*> idle;
  for (auto& [connection, client] : clients_) {
    if (connection->closed()) continue;
    if (!connection->peer_settings_received()) {
      if (now - client.accepted_at > setup_.limits.handshake_timeout) overdue.push_back(connection);
      continue;
    }
    if (connection->TakeActivity() || connection->open_streams() > 0) {
      client.last_busy = now;
    } else if (setup_.limits.idle_timeout.count() > 0 && !connection->draining() &&
               now - client.last_busy > setup_.limits.idle_timeout) {
      idle.push_back(connection);
    }
  }
  // Closing retires the connection from clients_ (OnClosed): not while iterating it.
  for (Http2Connection* connection : overdue) {
    setup_.stats->Hit(RelayLimit::kHandshakeTimeout);
    connection->Close("no TLS handshake and HTTP/2 preface within the handshake timeout");
  }
  for (Http2Connection* connection : idle) {
    setup_.stats->Hit(RelayLimit::kIdleTimeout);
    connection->Drain();  // GOAWAY: a gRPC client reconnects on its next call
  }
}

Http2Stream* RelayWorker::OnNewStream(Http2Connection& connection, std::int32_t stream_id) {
  if (!accepting_) return nullptr;  // refused (REFUSED_STREAM): the client may retry elsewhere
  // Announced in SETTINGS, but a client may open streams before it has applied them.
  if (connection.open_streams() >= setup_.limits.max_streams_per_connection) {
    setup_.stats->Hit(RelayLimit::kStreamsPerConnection);
    return nullptr;
  }
  const auto client = clients_.find(&connection);
  if (client == clients_.end()) return nullptr;
  client->second.last_busy = std::chrono::steady_clock::now();  // the sweep may not have seen it yet
  auto call = std::make_unique<RelayedCall>(*context_, *setup_.environment, *this, connection, stream_id,
                                            client->second.share);
  return &calls_->Add(std::move(call)).downstream_stream();
}

void RelayWorker::OnReady(Http2Connection& /*connection*/) {}

void RelayWorker::OnStreamsOverLimit(Http2Connection& /*connection*/) {
  setup_.stats->Hit(RelayLimit::kStreamsPerConnection);
}

void RelayWorker::OnClosed(Http2Connection& connection) {
  const auto it = clients_.find(&connection);
  if (it == clients_.end()) return;
  context_->Retire(std::move(it->second.connection));
  clients_.erase(it);
  setup_.stats->ClientDisconnected();
}

}  // namespace sparktrace::proxy
