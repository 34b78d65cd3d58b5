#pragma once
// What the admin port answers, apart from how requests are read and answers written
// (admin/http_connection.h): /healthz, /readyz and /metrics; the POST routes behind their Host,
// Origin, Content-Type and size checks; the trace view behind its Host and token checks, with its
// security headers, ETag/304 and gzip; 404 and 405 elsewhere. It never touches a socket, a thread
// or the clock.
//
// Threads: Route and Post run on the loop thread; Ui on the UI worker thread. All are const over
// state fixed at construction; what the handlers and probes capture is theirs to synchronise.

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "admin/admin_metrics.h"
#include "admin/admin_server.h"
#include "admin/host_check.h"
#include "admin/http_parser.h"

namespace sparktrace::admin {

class AdminRoutes {
 public:
  // `metrics` counts the refusals decided here (host, origin, content_type, body_too_large); it
  // must outlive the routes.
  AdminRoutes(ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
              std::vector<std::shared_ptr<const prometheus::Collectable>> more,
              std::vector<PostRoute> post_routes, AdminUi ui, HostPolicy hosts, AdminMetrics& metrics);

  // What to do with a request whose head arrived (its body of `body_bytes` not read yet).
  struct Decision {
    enum class Kind {
      kAnswer,    // send `answer` now
      kReadBody,  // read the body, then Post(*route, ...)
      kRunUi,     // run Ui(...) on the UI worker and send what it returns
    };
    Kind kind = Kind::kAnswer;
    HttpResponse answer;
    const PostRoute* route = nullptr;
  };
  Decision Route(const RequestHead& head, std::uint64_t body_bytes) const;

  // kReadBody's answer, from the handler of the route Route chose for this head.
  HttpResponse Post(const RequestHead& head, std::string body) const;

  // kRunUi's answer: the trace view's handler (slow for a large attempt), then its security headers,
  // and for a 200 an ETag (304 when it matches If-None-Match) and gzip when accepted. A handler that
  // sets its own ETag (from a revision, not the bytes) keeps it, and may answer a match 304 itself.
  HttpResponse Ui(const HttpRequest& request) const;

  // The request as a handler sees it; owns copies of the head's headers (valid on any thread, for as
  // long as the request lives).
  static HttpRequest MakeRequest(const RequestHead& head, std::string body);

  // The largest body any POST route takes.
  std::size_t max_post_body_bytes() const;

 private:
  std::optional<HttpResponse> RefuseHost(const RequestHead& head) const;
  std::optional<HttpResponse> RefuseCrossOriginWrite(const PostRoute& route, const RequestHead& head) const;
  Decision UiAccess(const RequestHead& head) const;
  // Whether a POST may pass a route's needs_admin_token: no token set, or its bearer header.
  bool HasAdminToken(const RequestHead& head) const;
  HttpResponse HandleGet(const std::string& path) const;

  ReadinessProbe readiness_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<std::shared_ptr<const prometheus::Collectable>> more_collectables_;
  std::vector<PostRoute> post_routes_;
  AdminUi ui_;
  HostPolicy hosts_;
  AdminMetrics& metrics_;
};

}  // namespace sparktrace::admin
