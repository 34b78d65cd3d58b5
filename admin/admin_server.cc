#include "admin/admin_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <mutex>
#include <sstream>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

namespace sparktrace::admin {
namespace {

// libevent's cross-thread wake-up (loopbreak from the destructor) needs its pthread support,
// switched on once per process before the first event_base.
void EnableLibeventThreads() {
  static std::once_flag once;
  std::call_once(once, [] { evthread_use_pthreads(); });
}

Result<int> BoundPort(evhttp_bound_socket* handle) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(evhttp_bound_socket_get_fd(handle), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return Error{ErrorCode::kIo, "getsockname failed on the admin socket"};
  }
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

}  // namespace

void AdminServer::EventBaseDeleter::operator()(event_base* base) const { event_base_free(base); }
void AdminServer::EvhttpDeleter::operator()(evhttp* http) const { evhttp_free(http); }

Result<std::unique_ptr<AdminServer>> AdminServer::Start(
    const std::string& address, ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
    std::vector<std::shared_ptr<const prometheus::Collectable>> more) {
  EnableLibeventThreads();
  const auto colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const auto port = static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)));

  auto server = std::unique_ptr<AdminServer>(new AdminServer());
  server->readiness_ = std::move(readiness);
  server->registry_ = std::move(registry);
  server->more_collectables_ = std::move(more);
  server->base_.reset(event_base_new());
  if (!server->base_) return Error{ErrorCode::kInternal, "libevent: event_base_new failed"};
  server->http_.reset(evhttp_new(server->base_.get()));
  if (!server->http_) return Error{ErrorCode::kInternal, "libevent: evhttp_new failed"};
  evhttp_set_allowed_methods(server->http_.get(), EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
  evhttp_bound_socket* handle = evhttp_bind_socket_with_handle(server->http_.get(), host.c_str(), port);
  if (handle == nullptr) return Error{ErrorCode::kIo, "cannot listen on --admin " + address};
  auto bound_port = BoundPort(handle);
  if (!bound_port.ok()) return bound_port.error();
  server->address_ = address.substr(0, colon) + ":" + std::to_string(*bound_port);

  evhttp_set_gencb(
      server->http_.get(),
      [](evhttp_request* request, void* self) {
        const char* path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(request));
        const HttpResponse response = static_cast<AdminServer*>(self)->Handle(path ? path : "/");
        evkeyvalq* headers = evhttp_request_get_output_headers(request);
        evhttp_add_header(headers, "Content-Type", response.content_type.c_str());
        evhttp_add_header(headers, "Cache-Control", "no-store");
        evbuffer* body = evbuffer_new();
        evbuffer_add(body, response.body.data(), response.body.size());
        evhttp_send_reply(request, response.status, nullptr, body);
        evbuffer_free(body);
      },
      server.get());

  server->loop_ = std::thread([base = server->base_.get()] { event_base_dispatch(base); });
  return server;
}

AdminServer::~AdminServer() {
  if (loop_.joinable()) {
    // loopexit, not loopbreak: it is queued as an event, so it also stops a loop that has not
    // started dispatching yet (a loopbreak before that is lost and join() would hang).
    event_base_loopexit(base_.get(), nullptr);
    loop_.join();
  }
}

HttpResponse AdminServer::Handle(const std::string& path) const {
  if (path == "/healthz") return {200, "text/plain; charset=utf-8", "ok\n"};
  if (path == "/readyz") {
    const std::string reason = readiness_();
    if (reason.empty()) return {200, "text/plain; charset=utf-8", "ready\n"};
    return {503, "text/plain; charset=utf-8", "not ready: " + reason + "\n"};
  }
  if (path == "/metrics") {
    std::ostringstream out;
    std::vector<prometheus::MetricFamily> families = registry_->Collect();
    for (const auto& collectable : more_collectables_) {
      for (auto& family : collectable->Collect()) families.push_back(std::move(family));
    }
    prometheus::TextSerializer().Serialize(out, families);
    return {200, "text/plain; version=0.0.4; charset=utf-8", out.str()};
  }
  return {404, "text/plain; charset=utf-8", "not found; try /healthz, /readyz or /metrics\n"};
}

}  // namespace sparktrace::admin
