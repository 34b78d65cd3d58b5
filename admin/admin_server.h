#pragma once
// The admin HTTP endpoint on its own libevent loop and thread: GET /healthz, /readyz and /metrics,
// plus whatever POST routes the caller registers (e.g. the driver-event push endpoint). The server
// knows nothing of what a route does: it hands over the request and sends back the answer.
//
// Threads: every handler (readiness probe, POST routes, collectables) is called on the admin
// thread, one request at a time; a slow handler delays every other admin request, so handlers must
// return quickly (hand work to another thread, answer 503 when it is busy).

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"

struct event_base;
struct evhttp;
struct evhttp_request;

namespace sparktrace::admin {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, e.g. Retry-After
};

// A request as a POST route sees it. Valid only during the handler call.
struct HttpRequest {
  std::string path;
  std::string query;  // after '?', undecoded; empty when none
  std::string body;
  // A request header's value (case-insensitive name), or nullopt.
  std::function<std::optional<std::string>(const std::string& name)> header;
};

using PostHandler = std::function<HttpResponse(const HttpRequest& request)>;

// Answers a GET (or HEAD) of a path the server does not serve itself (the trace view's pages, assets
// and /api/v1 JSON), or nullopt for a 404. Called on the admin thread.
using GetHandler = std::function<std::optional<HttpResponse>(const HttpRequest& request)>;

// The trace view on the admin port: its GET handler and who may use it.
struct AdminUi {
  GetHandler handler;  // empty: no trace view (only /healthz, /readyz, /metrics and the POST routes)
  // Whether `handler` answers GET on this path, without running it: another method there gets 405
  // rather than 404 (and a POST to a large attempt's path does not compute its answer).
  std::function<bool(const std::string& path)> serves;
  // When not empty, every path the handler serves needs it: `Authorization: Bearer TOKEN`, or the
  // cookie that a page opened once with `?token=TOKEN` sets (HttpOnly, SameSite=Strict). The probes,
  // /metrics and the POST routes stay open. Compared in constant time; never logged.
  std::string token;
};

struct PostRoute {
  std::string path;  // exact, e.g. "/api/v1/events"
  // Larger bodies are refused with 413 before the handler is called.
  std::size_t max_body_bytes = std::size_t{1} << 20;
  PostHandler handler;
};

// Tells /readyz why the proxy is not ready, or "" when it is. Called on the admin thread.
using ReadinessProbe = std::function<std::string()>;

class AdminServer {
 public:
  // Binds `address` ("host:port", port 0 picks one) and starts serving on a new thread. /metrics
  // shows `registry` and then each of `more` (metrics read from elsewhere at scrape time).
  // `post_routes` answer POST on their path (other methods there: 405); every other path is GET.
  // Whatever the routes and collectables capture must outlive the server.
  static Result<std::unique_ptr<AdminServer>> Start(
      const std::string& address, ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
      std::vector<std::shared_ptr<const prometheus::Collectable>> more = {},
      std::vector<PostRoute> post_routes = {}, AdminUi ui = {});
  ~AdminServer();  // stops the loop and joins the thread
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // "127.0.0.1:9464" with the port actually bound.
  const std::string& address() const { return address_; }

 private:
  AdminServer() = default;
  void Serve(evhttp_request* request) const;
  HttpResponse HandleGet(const std::string& path) const;
  HttpResponse HandleUi(const std::string& path, evhttp_request* request) const;
  HttpResponse HandlePost(const PostRoute& route, evhttp_request* request, const std::string& path) const;

  struct EventBaseDeleter {
    void operator()(event_base* base) const;
  };
  struct EvhttpDeleter {
    void operator()(evhttp* http) const;
  };

  std::unique_ptr<event_base, EventBaseDeleter> base_;
  std::unique_ptr<evhttp, EvhttpDeleter> http_;
  ReadinessProbe readiness_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<std::shared_ptr<const prometheus::Collectable>> more_collectables_;
  std::vector<PostRoute> post_routes_;
  AdminUi ui_;
  std::string address_;
  std::thread loop_;
};

}  // namespace sparktrace::admin
