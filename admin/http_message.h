#pragma once
// The bytes of an HTTP/1.1 answer's head: status line, the framing headers this server owns
// (Content-Length, Connection, Date) and the answer's own headers. Pure; thread-safe.

#include <string>
#include <string_view>

#include "admin/http_types.h"

namespace sparktrace::admin {

// "Not Found" for 404; "Unknown" for a status without a phrase here.
std::string_view ReasonPhrase(int status);

struct ResponseFraming {
  bool head_only = false;   // a HEAD request: the headers of the GET answer, no body
  bool keep_alive = true;   // else "Connection: close"
  int version_minor = 1;    // an HTTP/1.0 client that keeps the connection is told "keep-alive"
};

// The status line and headers, up to the blank line. Header values are written without CR or LF
// (replaced by spaces), so that a value built from a request (a Location) cannot add headers.
std::string SerializeResponseHead(const HttpResponse& response, const ResponseFraming& framing);
// Whether the body follows the head: not for HEAD, and never for 1xx, 204 and 304.
bool SendsBody(const HttpResponse& response, const ResponseFraming& framing);

// An answer of this server's own (a refusal, a probe): a short text/plain body.
HttpResponse TextResponse(int status, std::string body);

}  // namespace sparktrace::admin
