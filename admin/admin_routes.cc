#include "admin/admin_routes.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <sstream>
#include <utility>

#include "admin/http_caching.h"
#include "admin/http_message.h"
#include "admin/ui_access.h"
#include "common/text_trim.h"

namespace sparktrace::admin {
namespace {

bool IsGetPath(const std::string& path) {
  return path == "/healthz" || path == "/readyz" || path == "/metrics";
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
  HttpResponse response = TextResponse(405, std::move(body));
  response.headers.emplace_back("Allow", allowed);
  return response;
}

HttpResponse JsonError(int status, std::string_view message) {
  return HttpResponse{status, "application/json", "{\"error\":\"" + std::string(message) + "\"}\n", {}};
}

// "application/x-ndjson; charset=utf-8" -> "application/x-ndjson".
std::string MediaType(std::string_view content_type) {
  const std::string_view type = TrimBlanks(content_type.substr(0, content_type.find(';')));
  std::string lower(type);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return lower;
}

AdminRoutes::Decision Answer(HttpResponse response) {
  return AdminRoutes::Decision{AdminRoutes::Decision::Kind::kAnswer, std::move(response), nullptr};
}

}  // namespace

AdminRoutes::AdminRoutes(ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
                         std::vector<std::shared_ptr<const prometheus::Collectable>> more,
                         std::vector<PostRoute> post_routes, AdminUi ui, HostPolicy hosts,
                         AdminMetrics& metrics)
    : readiness_(std::move(readiness)),
      registry_(std::move(registry)),
      more_collectables_(std::move(more)),
      post_routes_(std::move(post_routes)),
      ui_(std::move(ui)),
      hosts_(std::move(hosts)),
      metrics_(metrics) {}

std::size_t AdminRoutes::max_post_body_bytes() const {
  std::size_t largest = 0;
  for (const PostRoute& route : post_routes_) largest = std::max(largest, route.max_body_bytes);
  return largest;
}

HttpRequest AdminRoutes::MakeRequest(const RequestHead& head, std::string body) {
  HttpRequest request;
  request.path = head.path;
  request.query = head.query;
  request.body = std::move(body);
  auto headers = std::make_shared<const std::vector<HttpHeader>>(head.headers);
  request.header = [headers](const std::string& name) -> std::optional<std::string> {
    for (const HttpHeader& header : *headers) {
      if (EqualsIgnoreCase(header.name, name)) return header.value;
    }
    return std::nullopt;
  };
  return request;
}

AdminRoutes::Decision AdminRoutes::Route(const RequestHead& head, std::uint64_t body_bytes) const {
  const std::string& path = head.path;
  const auto route = std::find_if(post_routes_.begin(), post_routes_.end(),
                                  [&path](const PostRoute& candidate) { return candidate.path == path; });
  if (route != post_routes_.end()) {
    if (head.method != "POST") return Answer(MethodNotAllowed("POST", "send events with POST\n"));
    if (auto refusal = RefuseHost(head)) return Answer(std::move(*refusal));
    if (auto refusal = RefuseCrossOriginWrite(*route, head)) return Answer(std::move(*refusal));
    if (route->needs_admin_token && !HasAdminToken(head)) {
      metrics_.Refused(RefuseReason::kUnauthorized);
      return Answer(Unauthorized(path));
    }
    if (body_bytes > route->max_body_bytes) {
      metrics_.Refused(RefuseReason::kBodyTooLarge);
      return Answer(JsonError(413, "body larger than " + std::to_string(route->max_body_bytes) + " bytes"));
    }
    return Decision{Decision::Kind::kReadBody, {}, &*route};
  }
  if (head.method == "GET" || head.method == "HEAD") {
    if (IsGetPath(path) || !ui_.handler) return Answer(HandleGet(path));
    if (auto refusal = RefuseHost(head)) return Answer(std::move(*refusal));
    return UiAccess(head);
  }
  if (!IsGetPath(path) && !(ui_.serves && ui_.serves(path))) {
    return Answer(HandleGet(path));  // an unknown path is a 404 whatever the method
  }
  return Answer(MethodNotAllowed("GET, HEAD", "only GET here\n"));
}

std::optional<HttpResponse> AdminRoutes::RefuseHost(const RequestHead& head) const {
  // No Host at all is HTTP/1.0 from a script, never a browser: nothing to rebind.
  const auto host = head.Header("Host");
  if (!host || hosts_.Allows(*host)) return std::nullopt;
  metrics_.Refused(RefuseReason::kHost);
  HttpResponse response = TextResponse(
      421, "this sparktrace does not answer for that Host name; list it in --admin-allowed-hosts\n");
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return response;
}

std::optional<HttpResponse> AdminRoutes::RefuseCrossOriginWrite(const PostRoute& route,
                                                                const RequestHead& head) const {
  // A browser adds Origin to every POST; a page of another site is refused even when it reached
  // this port (log shippers send no Origin).
  if (const auto origin = head.Header("Origin")) {
    const auto host = head.Header("Host");
    if (!host || !IsSameOrigin(*origin, *host)) {
      metrics_.Refused(RefuseReason::kOrigin);
      return JsonError(403, "cross-origin writes are refused");
    }
  }
  // A body type a browser may send from any page without asking first (text/plain, forms) is never
  // one of the route's; a request without Content-Type is a script's.
  if (const auto type = head.Header("Content-Type"); type && !route.content_types.empty()) {
    const std::string media = MediaType(*type);
    if (std::find(route.content_types.begin(), route.content_types.end(), media) ==
        route.content_types.end()) {
      metrics_.Refused(RefuseReason::kContentType);
      std::string accepted;
      for (const std::string& name : route.content_types) accepted += (accepted.empty() ? "" : " or ") + name;
      return JsonError(415, "send the body as " + accepted);
    }
  }
  return std::nullopt;
}

bool AdminRoutes::HasAdminToken(const RequestHead& head) const {
  if (ui_.token.empty()) return true;
  // The bearer header only: a write never rides on the browser's cookie.
  const auto authorization = head.Header("Authorization");
  const auto bearer = authorization ? BearerToken(*authorization) : std::nullopt;
  return bearer && ConstantTimeEquals(*bearer, ui_.token);
}

AdminRoutes::Decision AdminRoutes::UiAccess(const RequestHead& head) const {
  if (ui_.token.empty()) return Decision{Decision::Kind::kRunUi, {}, nullptr};
  const std::string& path = head.path;
  const TokenLogin login = SplitTokenParameter(head.query);
  if (login.token) {
    if (!ConstantTimeEquals(*login.token, ui_.token)) return Answer(Unauthorized(path));
    // The token leaves the address bar (and the browser history) at once; the cookie carries it.
    HttpResponse response = TextResponse(303, "signed in\n");
    response.headers.emplace_back("Location",
                                  login.rest_of_query.empty() ? path : path + "?" + login.rest_of_query);
    response.headers.emplace_back(
        "Set-Cookie", std::string(kTokenCookie) + "=" + ui_.token + "; Path=/; HttpOnly; SameSite=Strict");
    AddUiSecurityHeaders(response);
    return Answer(std::move(response));
  }
  const auto authorization = head.Header("Authorization");
  const auto cookie = head.Header("Cookie");
  const auto bearer = authorization ? BearerToken(*authorization) : std::nullopt;
  const auto from_cookie = cookie ? CookieValue(*cookie, kTokenCookie) : std::nullopt;
  const bool allowed = (bearer && ConstantTimeEquals(*bearer, ui_.token)) ||
                       (from_cookie && ConstantTimeEquals(*from_cookie, ui_.token));
  if (!allowed) return Answer(Unauthorized(path));
  return Decision{Decision::Kind::kRunUi, {}, nullptr};
}

HttpResponse AdminRoutes::Post(const RequestHead& head, std::string body) const {
  const auto route =
      std::find_if(post_routes_.begin(), post_routes_.end(),
                   [&head](const PostRoute& candidate) { return candidate.path == head.path; });
  if (route == post_routes_.end()) return HandleGet(head.path);  // not reached: Route chose a route
  return route->handler(MakeRequest(head, std::move(body)));
}

HttpResponse AdminRoutes::Ui(const HttpRequest& request) const {
  std::optional<HttpResponse> answer = ui_.handler(request);
  HttpResponse response = answer ? std::move(*answer) : TextResponse(404, "not found\n");
  AddUiSecurityHeaders(response);
  // A handler that knows its answer's revision sets the ETag itself (the trace view's attempts, from the
  // task index) and answers a matching If-None-Match with a 304 before building anything.
  const bool tagged = HasHeader(response, "ETag");
  if (response.status == 304 && tagged) {
    if (!HasHeader(response, "Cache-Control")) response.headers.emplace_back("Cache-Control", "no-cache");
    return response;
  }
  if (response.status != 200) return response;
  // Revalidate every time (the store changes under the same URL), but cheaply: a matching ETag is a
  // 304 without a body.
  std::string etag;
  if (tagged) {
    etag = std::find_if(response.headers.begin(), response.headers.end(), [](const auto& header) {
             return header.first == "ETag";
           })->second;
  } else {
    etag = EntityTag(response.body);
    response.headers.emplace_back("ETag", etag);
  }
  if (!HasHeader(response, "Cache-Control")) response.headers.emplace_back("Cache-Control", "no-cache");
  if (const auto if_none_match = request.header("If-None-Match");
      if_none_match && MatchesIfNoneMatch(*if_none_match, etag)) {
    response.status = 304;
    response.body.clear();
    return response;
  }
  // A handler may hand over its answer compressed already (the trace view keeps built answers gzipped).
  if (HasHeader(response, "Content-Encoding")) return response;
  response.headers.emplace_back("Vary", "Accept-Encoding");
  if (const auto accept = request.header("Accept-Encoding");
      accept && AcceptsGzip(*accept) && WorthCompressing(response.content_type, response.body.size())) {
    if (std::optional<std::string> compressed = Gzip(response.body)) {
      response.body = std::move(*compressed);
      response.headers.emplace_back("Content-Encoding", "gzip");
    }
  }
  return response;
}

HttpResponse AdminRoutes::HandleGet(const std::string& path) const {
  if (path == "/healthz") return TextResponse(200, "ok\n");
  if (path == "/readyz") {
    const std::string reason = readiness_();
    if (reason.empty()) return TextResponse(200, "ready\n");
    return TextResponse(503, "not ready: " + reason + "\n");
  }
  if (path == "/metrics") {
    std::ostringstream out;
    std::vector<prometheus::MetricFamily> families = registry_->Collect();
    for (const auto& collectable : more_collectables_) {
      for (auto& family : collectable->Collect()) families.push_back(std::move(family));
    }
    families.push_back(LibeventLogFamily());
    prometheus::TextSerializer().Serialize(out, families);
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", out.str(), {}};
  }
  std::string paths = "/healthz, /readyz, /metrics";
  for (const PostRoute& route : post_routes_) paths += ", POST " + route.path;
  return TextResponse(404, "not found; try " + paths + "\n");
}

}  // namespace sparktrace::admin
