#include "admin/admin_server.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "admin/http_caching.h"
#include "admin/ui_access.h"

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

// GET and HEAD carry no body worth reading: the limit when no POST route needs more.
constexpr std::size_t kMaxGetBodyBytes = std::size_t{64} * 1024;

bool IsGetPath(const std::string& path) {
  return path == "/healthz" || path == "/readyz" || path == "/metrics";
}

// The request as handlers see it; valid while `request` is.
HttpRequest MakeRequest(evhttp_request* request, const std::string& path) {
  HttpRequest http_request;
  http_request.path = path;
  const char* query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(request));
  if (query != nullptr) http_request.query = query;
  evkeyvalq* headers = evhttp_request_get_input_headers(request);
  http_request.header = [headers](const std::string& name) -> std::optional<std::string> {
    const char* value = evhttp_find_header(headers, name.c_str());  // case-insensitive
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return http_request;
}

// What every trace-view answer carries: the page runs only its own scripts and styles, talks only
// to its own origin, and cannot be framed or sniffed into another type.
void AddUiSecurityHeaders(HttpResponse& response) {
  response.headers.emplace_back(
      "Content-Security-Policy",
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
      "base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
  response.headers.emplace_back("X-Frame-Options", "DENY");
}

bool HasHeader(const HttpResponse& response, std::string_view name) {
  return std::any_of(response.headers.begin(), response.headers.end(),
                     [name](const auto& header) { return header.first == name; });
}

HttpResponse Unauthorized(const std::string& path) {
  if (path.starts_with("/api/")) {
    return HttpResponse{
        401,
        "application/json; charset=utf-8",
        "{\"error\":\"this sparktrace needs its admin token: send Authorization: Bearer TOKEN\"}\n",
        {{"WWW-Authenticate", "Bearer"}}};
  }
  return HttpResponse{
      401,
      "text/plain; charset=utf-8",
      "This sparktrace trace view needs its admin token: open this URL once with ?token=TOKEN "
      "(the value of --admin-token).\n",
      {{"WWW-Authenticate", "Bearer"}}};
}

HttpResponse MethodNotAllowed(const char* allowed, std::string body) {
  HttpResponse response{405, "text/plain; charset=utf-8", std::move(body), {}};
  response.headers.emplace_back("Allow", allowed);
  return response;
}

}  // namespace

void AdminServer::EventBaseDeleter::operator()(event_base* base) const { event_base_free(base); }
void AdminServer::EvhttpDeleter::operator()(evhttp* http) const { evhttp_free(http); }

Result<std::unique_ptr<AdminServer>> AdminServer::Start(
    const std::string& address, ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
    std::vector<std::shared_ptr<const prometheus::Collectable>> more, std::vector<PostRoute> post_routes,
    AdminUi ui) {
  EnableLibeventThreads();
  const auto colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const auto port = static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)));

  auto server = std::unique_ptr<AdminServer>(new AdminServer());
  server->readiness_ = std::move(readiness);
  server->registry_ = std::move(registry);
  server->more_collectables_ = std::move(more);
  server->post_routes_ = std::move(post_routes);
  server->ui_ = std::move(ui);
  server->base_.reset(event_base_new());
  if (!server->base_) return Error{ErrorCode::kInternal, "libevent: event_base_new failed"};
  server->http_.reset(evhttp_new(server->base_.get()));
  if (!server->http_) return Error{ErrorCode::kInternal, "libevent: evhttp_new failed"};
  // Every method reaches Serve(), so that a wrong one gets 405 rather than libevent's 501.
  evhttp_set_allowed_methods(server->http_.get(), EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                                      EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH |
                                                      EVHTTP_REQ_OPTIONS);
  // libevent refuses a larger body with 413 while reading it, so that it is never buffered whole;
  // lingering close reads (and discards) the rest first, so that the client sees the 413 rather
  // than a reset connection. A route with a smaller limit checks its own in HandlePost.
  std::size_t max_body = kMaxGetBodyBytes;
  for (const PostRoute& route : server->post_routes_) max_body = std::max(max_body, route.max_body_bytes);
  evhttp_set_max_body_size(server->http_.get(), static_cast<ev_ssize_t>(max_body));
  evhttp_set_flags(server->http_.get(), EVHTTP_SERVER_LINGERING_CLOSE);
  evhttp_bound_socket* handle = evhttp_bind_socket_with_handle(server->http_.get(), host.c_str(), port);
  if (handle == nullptr) return Error{ErrorCode::kIo, "cannot listen on --admin " + address};
  auto bound_port = BoundPort(handle);
  if (!bound_port.ok()) return bound_port.error();
  server->address_ = address.substr(0, colon) + ":" + std::to_string(*bound_port);

  evhttp_set_gencb(
      server->http_.get(),
      [](evhttp_request* request, void* self) { static_cast<const AdminServer*>(self)->Serve(request); },
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

void AdminServer::Serve(evhttp_request* request) const {
  const evhttp_uri* uri = evhttp_request_get_evhttp_uri(request);
  const char* raw_path = evhttp_uri_get_path(uri);
  const std::string path = raw_path != nullptr && *raw_path != '\0' ? raw_path : "/";
  const evhttp_cmd_type method = evhttp_request_get_command(request);
  const auto route = std::find_if(post_routes_.begin(), post_routes_.end(),
                                  [&path](const PostRoute& candidate) { return candidate.path == path; });
  HttpResponse response;
  if (route != post_routes_.end()) {
    response = method == EVHTTP_REQ_POST ? HandlePost(*route, request, path)
                                         : MethodNotAllowed("POST", "send events with POST\n");
  } else if (method == EVHTTP_REQ_GET || method == EVHTTP_REQ_HEAD) {
    response = IsGetPath(path) || !ui_.handler ? HandleGet(path) : HandleUi(path, request);
  } else if (!IsGetPath(path) && !(ui_.serves && ui_.serves(path))) {
    response = HandleGet(path);  // an unknown path is a 404 whatever the method
  } else {
    response = MethodNotAllowed("GET, HEAD", "only GET here\n");
  }
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  evhttp_add_header(headers, "Content-Type", response.content_type.c_str());
  if (!HasHeader(response, "Cache-Control")) evhttp_add_header(headers, "Cache-Control", "no-store");
  for (const auto& [name, value] : response.headers) evhttp_add_header(headers, name.c_str(), value.c_str());
  evbuffer* body = evbuffer_new();
  evbuffer_add(body, response.body.data(), response.body.size());
  evhttp_send_reply(request, response.status, nullptr, body);
  evbuffer_free(body);
}

HttpResponse AdminServer::HandlePost(const PostRoute& route, evhttp_request* request,
                                     const std::string& path) const {
  evbuffer* input = evhttp_request_get_input_buffer(request);
  const std::size_t length = evbuffer_get_length(input);
  if (length > route.max_body_bytes) {
    return HttpResponse{
        413,
        "application/json",
        "{\"error\":\"body larger than " + std::to_string(route.max_body_bytes) + " bytes\"}\n",
        {}};
  }
  HttpRequest http_request = MakeRequest(request, path);
  http_request.body.resize(length);
  if (length > 0) evbuffer_remove(input, http_request.body.data(), length);
  return route.handler(http_request);
}

HttpResponse AdminServer::HandleUi(const std::string& path, evhttp_request* request) const {
  const HttpRequest http_request = MakeRequest(request, path);
  HttpResponse response;
  const TokenLogin login = SplitTokenParameter(http_request.query);
  bool allowed = ui_.token.empty();
  if (!allowed && login.token) {
    if (!ConstantTimeEquals(*login.token, ui_.token)) return Unauthorized(path);
    // The token leaves the address bar (and the browser history) at once; the cookie carries it.
    response.status = 303;
    response.headers.emplace_back("Location",
                                  login.rest_of_query.empty() ? path : path + "?" + login.rest_of_query);
    response.headers.emplace_back(
        "Set-Cookie", std::string(kTokenCookie) + "=" + ui_.token + "; Path=/; HttpOnly; SameSite=Strict");
    response.body = "signed in\n";
    AddUiSecurityHeaders(response);
    return response;
  }
  if (!allowed) {
    const auto authorization = http_request.header("Authorization");
    const auto cookie = http_request.header("Cookie");
    const auto bearer = authorization ? BearerToken(*authorization) : std::nullopt;
    const auto from_cookie = cookie ? CookieValue(*cookie, kTokenCookie) : std::nullopt;
    allowed = (bearer && ConstantTimeEquals(*bearer, ui_.token)) ||
              (from_cookie && ConstantTimeEquals(*from_cookie, ui_.token));
  }
  if (!allowed) return Unauthorized(path);

  std::optional<HttpResponse> answer = ui_.handler(http_request);
  if (!answer) {
    answer = HttpResponse{404, "text/plain; charset=utf-8", "not found\n", {}};
  }
  response = std::move(*answer);
  AddUiSecurityHeaders(response);
  if (response.status != 200) return response;
  // Revalidate every time (the store changes under the same URL), but cheaply: a matching ETag is a
  // 304 without a body.
  const std::string etag = EntityTag(response.body);
  response.headers.emplace_back("ETag", etag);
  if (!HasHeader(response, "Cache-Control")) response.headers.emplace_back("Cache-Control", "no-cache");
  if (const auto if_none_match = http_request.header("If-None-Match");
      if_none_match && MatchesIfNoneMatch(*if_none_match, etag)) {
    response.status = 304;
    response.body.clear();
    return response;
  }
  response.headers.emplace_back("Vary", "Accept-Encoding");
  if (const auto accept = http_request.header("Accept-Encoding");
      accept && AcceptsGzip(*accept) && WorthCompressing(response.content_type, response.body.size())) {
    if (std::optional<std::string> compressed = Gzip(response.body)) {
      response.body = std::move(*compressed);
      response.headers.emplace_back("Content-Encoding", "gzip");
    }
  }
  return response;
}

HttpResponse AdminServer::HandleGet(const std::string& path) const {
  if (path == "/healthz") return HttpResponse{200, "text/plain; charset=utf-8", "ok\n", {}};
  if (path == "/readyz") {
    const std::string reason = readiness_();
    if (reason.empty()) return HttpResponse{200, "text/plain; charset=utf-8", "ready\n", {}};
    return HttpResponse{503, "text/plain; charset=utf-8", "not ready: " + reason + "\n", {}};
  }
  if (path == "/metrics") {
    std::ostringstream out;
    std::vector<prometheus::MetricFamily> families = registry_->Collect();
    for (const auto& collectable : more_collectables_) {
      for (auto& family : collectable->Collect()) families.push_back(std::move(family));
    }
    prometheus::TextSerializer().Serialize(out, families);
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", out.str(), {}};
  }
  std::string paths = "/healthz, /readyz, /metrics";
  for (const PostRoute& route : post_routes_) paths += ", POST " + route.path;
  return HttpResponse{404, "text/plain; charset=utf-8", "not found; try " + paths + "\n", {}};
}

}  // namespace sparktrace::admin
