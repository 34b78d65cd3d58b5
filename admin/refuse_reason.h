#pragma once
// Why the admin server refused a request or closed a connection itself rather than a route answering
// it: the `reason` label of sparktrace_admin_requests_refused_total (a fixed, bounded set).

#include <cstddef>
#include <string_view>

namespace sparktrace::admin {

enum class RefuseReason {
  kBadRequest,       // 400: malformed head or framing; 505
  kUriTooLong,       // 414
  kHeadersTooLarge,  // 431
  kLengthRequired,   // 411: Transfer-Encoding instead of Content-Length
  kBodyTooLarge,     // 413
  kHeaderTimeout,    // 408 (or a silent close when no byte came)
  kBodyTimeout,      // 408
  kIdleTimeout,      // keep-alive connection closed
  kWriteTimeout,     // the client did not read the answer
  kMaxConnections,   // 503 at accept: the caps and the probe connections are full, nothing could be closed
  kEvicted,          // a connection closed to make room at a cap (idle, then sending a head, then a body)
  kHost,             // 421: Host not allowed
  kOrigin,           // 403: cross-origin write
  kContentType,      // 415: a POST body type the route does not take
  kBusy,             // 503: the trace view's queue, or the bodies being received, are full
  kUnauthorized,     // 401: a POST route that needs the admin token came without it
  kProbeOnly,        // 503: a connection admitted past the caps for the probes asked for something else
};
inline constexpr std::size_t kRefuseReasonCount = static_cast<std::size_t>(RefuseReason::kProbeOnly) + 1;

// "uri_too_long": the label value.
constexpr std::string_view RefuseReasonName(RefuseReason reason) {
  switch (reason) {
    case RefuseReason::kBadRequest:
      return "bad_request";
    case RefuseReason::kUriTooLong:
      return "uri_too_long";
    case RefuseReason::kHeadersTooLarge:
      return "headers_too_large";
    case RefuseReason::kLengthRequired:
      return "length_required";
    case RefuseReason::kBodyTooLarge:
      return "body_too_large";
    case RefuseReason::kHeaderTimeout:
      return "header_timeout";
    case RefuseReason::kBodyTimeout:
      return "body_timeout";
    case RefuseReason::kIdleTimeout:
      return "idle_timeout";
    case RefuseReason::kWriteTimeout:
      return "write_timeout";
    case RefuseReason::kMaxConnections:
      return "max_connections";
    case RefuseReason::kEvicted:
      return "evicted";
    case RefuseReason::kHost:
      return "host";
    case RefuseReason::kOrigin:
      return "origin";
    case RefuseReason::kContentType:
      return "content_type";
    case RefuseReason::kBusy:
      return "busy";
    case RefuseReason::kUnauthorized:
      return "unauthorized";
    case RefuseReason::kProbeOnly:
      return "probe_only";
  }
  return "unknown";
}

}  // namespace sparktrace::admin
