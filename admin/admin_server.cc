#include "admin/admin_server.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <event2/util.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "admin/admin_metrics.h"
#include "admin/admin_routes.h"
#include "admin/host_check.h"
#include "admin/http_connection.h"
#include "admin/http_message.h"
#include "admin/libevent_log.h"
#include "admin/loop_mailbox.h"
#include "admin/ui_worker.h"

namespace sparktrace::admin {
namespace {

// libevent's cross-thread wake-ups (loopexit from the destructor, the UI worker's answers) need its
// pthread support, switched on once per process before the first event_base.
void EnableLibeventThreads() {
  static std::once_flag once;
  std::call_once(once, [] { evthread_use_pthreads(); });
}

// How long accepting pauses after accept() failed (EMFILE: connections must close first). A
// listener left enabled would be readable again at once and spin a core.
constexpr timeval kAcceptPause{0, 100'000};
// At most one warning about it per this long; the pauses are counted (sparktrace_admin_accept_pauses_total).
constexpr int kListenBacklog = 128;

Result<int> BoundPort(evutil_socket_t fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return Error{ErrorCode::kIo, "getsockname failed on the admin socket"};
  }
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

// The client's address ("10.0.0.7", "2001:db8::1"), the key of max_connections_per_peer; "" when
// the listener gave none.
std::string PeerAddress(const sockaddr* address) {
  if (address == nullptr) return {};
  char text[INET6_ADDRSTRLEN] = {};
  const void* bytes = nullptr;
  if (address->sa_family == AF_INET) bytes = &reinterpret_cast<const sockaddr_in*>(address)->sin_addr;
  if (address->sa_family == AF_INET6) bytes = &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  if (bytes == nullptr || inet_ntop(address->sa_family, bytes, text, sizeof(text)) == nullptr) return {};
  return text;
}

// What a connection admitted past the caps may ask: the kubelet's liveness and readiness probes.
bool IsProbe(const RequestHead& head) {
  return (head.method == "GET" || head.method == "HEAD") &&
         (head.path == "/healthz" || head.path == "/readyz");
}

HttpResponse Busy(std::string body) {
  HttpResponse response = TextResponse(503, std::move(body));
  response.headers.emplace_back("Retry-After", "1");
  return response;
}

}  // namespace

void AdminServer::EventBaseDeleter::operator()(event_base* base) const { event_base_free(base); }
void AdminServer::EventDeleter::operator()(event* e) const { event_free(e); }
void AdminServer::ListenerDeleter::operator()(evconnlistener* listener) const {
  evconnlistener_free(listener);
}

AdminServer::AdminServer() = default;

Result<std::unique_ptr<AdminServer>> AdminServer::Start(
    const std::string& address, ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
    std::vector<std::shared_ptr<const prometheus::Collectable>> more, std::vector<PostRoute> post_routes,
    AdminUi ui, AdminLimits limits) {
  EnableLibeventThreads();
  RouteLibeventLogToSpdlog();
  const auto colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const std::string port = address.substr(colon + 1);

  auto server = std::unique_ptr<AdminServer>(new AdminServer());
  const bool has_ui = static_cast<bool>(ui.handler);
  server->limits_ = std::move(limits);
  server->base_.reset(event_base_new());
  if (!server->base_) return Error{ErrorCode::kInternal, "libevent: event_base_new failed"};
  event_base* base = server->base_.get();
  server->metrics_ = std::make_unique<AdminMetrics>(*registry);
  server->routes_ = std::make_unique<AdminRoutes>(
      std::move(readiness), std::move(registry), std::move(more), std::move(post_routes), std::move(ui),
      HostPolicy::Create(address.substr(0, colon), server->limits_.allowed_hosts), *server->metrics_);
  server->limits_.max_body_buffer_bytes =
      std::max(server->limits_.max_body_buffer_bytes, server->routes_->max_post_body_bytes());
  auto mailbox = LoopMailbox::Create(base);
  if (!mailbox.ok()) return mailbox.error();
  server->mailbox_ = std::move(*mailbox);
  server->resume_accepting_.reset(evtimer_new(base, OnResumeAccepting, server.get()));
  server->reap_.reset(event_new(base, -1, 0, OnReap, server.get()));
  if (!server->resume_accepting_ || !server->reap_)
    return Error{ErrorCode::kInternal, "libevent: event_new failed"};

  // As evhttp did: the first address the name resolves to that can be bound.
  evutil_addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = EVUTIL_AI_PASSIVE;
  evutil_addrinfo* resolved = nullptr;
  if (evutil_getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &resolved) != 0) {
    return Error{ErrorCode::kIo, "cannot listen on --admin " + address + ": cannot resolve '" + host + "'"};
  }
  for (const evutil_addrinfo* candidate = resolved; candidate != nullptr && !server->listener_;
       candidate = candidate->ai_next) {
    server->listener_.reset(evconnlistener_new_bind(
        base, OnAccept, server.get(), LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
        kListenBacklog, candidate->ai_addr, static_cast<int>(candidate->ai_addrlen)));
  }
  evutil_freeaddrinfo(resolved);
  if (!server->listener_) return Error{ErrorCode::kIo, "cannot listen on --admin " + address};
  evconnlistener_set_error_cb(server->listener_.get(), OnAcceptError);
  auto bound_port = BoundPort(evconnlistener_get_fd(server->listener_.get()));
  if (!bound_port.ok()) return bound_port.error();
  server->address_ = address.substr(0, colon) + ":" + std::to_string(*bound_port);

  if (has_ui) server->ui_worker_ = std::make_unique<UiWorker>(server->limits_.max_ui_queue);
  server->loop_ = std::thread([base] { event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY); });
  return server;
}

AdminServer::~AdminServer() {
  if (loop_.joinable()) {
    // loopexit, not loopbreak: it is queued as an event, so it also stops a loop that has not
    // started dispatching yet (a loopbreak before that is lost and join() would hang).
    event_base_loopexit(base_.get(), nullptr);
    loop_.join();
  }
  // Then the worker (the loop no longer submits to it): a job still running finishes and posts its
  // answer to the mailbox, which outlives the worker and drops it.
  ui_worker_.reset();
}

void AdminServer::OnAccept(evconnlistener*, int fd, sockaddr* address, int, void* self) {
  static_cast<AdminServer*>(self)->Accept(fd, address);
}

void AdminServer::Accept(int fd, const sockaddr* address) {
  std::string peer = PeerAddress(address);
  const Admission admission = Admit(peer);
  if (admission == Admission::kRefused) {
    // Every slot, the probes' too, is serving a request: this one is told so, best effort, and closed.
    metrics_->Refused(RefuseReason::kMaxConnections);
    const HttpResponse busy = Busy("too many admin connections\n");
    const std::string bytes = SerializeResponseHead(busy, ResponseFraming{false, false, 1}) + busy.body;
    (void)send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    evutil_closesocket(fd);
    return;
  }
  const std::uint64_t id = next_connection_id_++;
  ConnectionOwner& owner = *this;  // the base is private: converted here, not inside make_unique
  auto connection = std::make_unique<HttpConnection>(base_.get(), fd, id, limits_, owner);
  if (!connection->Start()) return;
  const bool probe_only = admission == Admission::kProbeOnly;
  metrics_->ConnectionOpened(probe_only);
  if (probe_only) {
    ++probe_connections_;
  } else {
    ++regular_connections_;
    ++connections_per_peer_[peer];
  }
  connections_.emplace(id, Slot{std::move(connection), std::move(peer), probe_only});
}

AdminServer::Admission AdminServer::Admit(const std::string& peer) {
  const auto own = connections_per_peer_.find(peer);
  const bool peer_full =
      own != connections_per_peer_.end() && own->second >= limits_.max_connections_per_peer;
  // At its share a peer makes room among its own connections; at the cap, among everyone's.
  const bool regular =
      peer_full ? EvictOne(Pool::kRegular, &peer)
                : regular_connections_ < limits_.max_connections || EvictOne(Pool::kRegular, nullptr);
  if (regular) return Admission::kRegular;
  if (limits_.probe_connections > 0 &&
      (probe_connections_ < limits_.probe_connections || EvictOne(Pool::kProbe, nullptr))) {
    return Admission::kProbeOnly;
  }
  return Admission::kRefused;
}

bool AdminServer::EvictOne(Pool pool, const std::string* peer) {
  // Probe connections are answered as soon as their head is in: one still receiving a body asked
  // for something else and is being refused.
  const HttpConnection::Loss worst_allowed =
      pool == Pool::kProbe ? HttpConnection::Loss::kHead : HttpConnection::Loss::kBody;
  HttpConnection* victim = nullptr;
  HttpConnection::Loss victim_loss = HttpConnection::Loss::kAnswer;
  for (const auto& [id, slot] : connections_) {
    if (slot.probe_only != (pool == Pool::kProbe) || (peer != nullptr && slot.peer != *peer)) continue;
    const HttpConnection::Loss loss = slot.connection->loss_if_closed();
    // Strictly less: of equal losses the oldest (first by id) stays chosen.
    if (loss <= worst_allowed && loss < victim_loss) {
      victim = slot.connection.get();
      victim_loss = loss;
      if (loss == HttpConnection::Loss::kNothing) break;
    }
  }
  if (victim == nullptr) return false;
  metrics_->Refused(RefuseReason::kEvicted);
  victim->Close();  // OnClosed takes it out of connections_
  return true;
}

void AdminServer::OnAcceptError(evconnlistener* listener, void* self) {
  auto* server = static_cast<AdminServer*>(self);
  server->metrics_->AcceptPaused();
  if (server->accept_warnings_.Allow()) {
    spdlog::warn(
        "admin port: cannot accept connections: {}; pausing {} ms each time (counted in "
        "sparktrace_admin_accept_pauses_total)",
        evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()), kAcceptPause.tv_usec / 1000);
  }
  evconnlistener_disable(listener);
  evtimer_add(server->resume_accepting_.get(), &kAcceptPause);
}

void AdminServer::OnResumeAccepting(int, short, void* self) {
  auto* server = static_cast<AdminServer*>(self);
  if (server->listener_) evconnlistener_enable(server->listener_.get());
}

void AdminServer::OnReap(int, short, void* self) { static_cast<AdminServer*>(self)->closed_.clear(); }

void AdminServer::OnClosed(HttpConnection& connection) {
  ReleaseBody(connection.id());
  auto node = connections_.extract(connection.id());
  if (node.empty()) return;
  Slot& slot = node.mapped();
  metrics_->ConnectionClosed(slot.probe_only);
  if (slot.probe_only) {
    --probe_connections_;
  } else {
    --regular_connections_;
    if (const auto own = connections_per_peer_.find(slot.peer);
        own != connections_per_peer_.end() && --own->second == 0) {
      connections_per_peer_.erase(own);
    }
  }
  closed_.push_back(std::move(slot.connection));
  event_active(reap_.get(), EV_READ, 0);
}

void AdminServer::OnRefused(RefuseReason reason) { metrics_->Refused(reason); }

void AdminServer::OnHead(HttpConnection& connection, const RequestHead& head, std::uint64_t body_bytes) {
  if (const auto slot = connections_.find(connection.id());
      slot != connections_.end() && slot->second.probe_only) {
    // Past the caps: the probes are answered, and the connection closed to free its place at once.
    if (!IsProbe(head)) {
      metrics_->Refused(RefuseReason::kProbeOnly);
      Reply(connection, Busy("too many admin connections\n"), /*close=*/true);
      return;
    }
    AdminRoutes::Decision probe = routes_->Route(head, body_bytes);
    Reply(connection, std::move(probe.answer), /*close=*/true);
    return;
  }
  AdminRoutes::Decision decision = routes_->Route(head, body_bytes);
  switch (decision.kind) {
    case AdminRoutes::Decision::Kind::kAnswer:
      Reply(connection, std::move(decision.answer));
      return;
    case AdminRoutes::Decision::Kind::kRunUi:
      RunUi(connection, head);
      return;
    case AdminRoutes::Decision::Kind::kReadBody:
      if (pending_body_bytes_ + body_bytes > limits_.max_body_buffer_bytes) {
        metrics_->Refused(RefuseReason::kBusy);
        Reply(connection, Busy("receiving other request bodies; retry in a moment\n"));
        return;
      }
      if (body_bytes > 0) {
        pending_bodies_[connection.id()] = body_bytes;
        pending_body_bytes_ += body_bytes;
      }
      connection.ReadBody();
      return;
  }
}

void AdminServer::OnBody(HttpConnection& connection, std::string body) {
  // The budget is released once the handler is done with the bytes, not when they arrived.
  Reply(connection, routes_->Post(connection.head(), std::move(body)));
  ReleaseBody(connection.id());
}

void AdminServer::ReleaseBody(std::uint64_t connection_id) {
  const auto pending = pending_bodies_.find(connection_id);
  if (pending == pending_bodies_.end()) return;
  pending_body_bytes_ -= pending->second;
  pending_bodies_.erase(pending);
}

void AdminServer::RunUi(HttpConnection& connection, const RequestHead& head) {
  metrics_->UiRequests(1);
  const bool queued = ui_worker_->TrySubmit(
      [this, id = connection.id(), request = AdminRoutes::MakeRequest(head, std::string())] {
        HttpResponse response = routes_->Ui(request);
        metrics_->UiRequests(-1);
        // Back on the loop: the connection may have closed meanwhile (then the answer is dropped).
        mailbox_->Post([this, id, response = std::move(response)] {
          if (const auto found = connections_.find(id); found != connections_.end()) {
            Reply(*found->second.connection, response);
          }
        });
      });
  if (!queued) {
    metrics_->UiRequests(-1);
    metrics_->Refused(RefuseReason::kBusy);
    Reply(connection, Busy("the trace view is busy; retry in a moment\n"));
  }
}

void AdminServer::Reply(HttpConnection& connection, HttpResponse response, bool close) {
  const bool has_cache_control =
      std::any_of(response.headers.begin(), response.headers.end(),
                  [](const auto& header) { return header.first == "Cache-Control"; });
  if (!has_cache_control) response.headers.emplace_back("Cache-Control", "no-store");
  connection.Respond(response, close);
}

}  // namespace sparktrace::admin
