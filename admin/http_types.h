#pragma once
// The request and the answer as the admin server's routes see them, without the server: the trace
// view (traceview/) and the event push route build and read these. Plain values; thread-compatible.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::admin {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, e.g. Retry-After
};

// A request as a route sees it. The server's requests own their headers (the trace view's are read
// on the UI worker thread, after the connection may be gone); copies are independent.
struct HttpRequest {
  std::string path;
  std::string query;  // after '?', undecoded; empty when none
  std::string body;
  // A request header's value (case-insensitive name), or nullopt.
  std::function<std::optional<std::string>(const std::string& name)> header;
};

}  // namespace sparktrace::admin
