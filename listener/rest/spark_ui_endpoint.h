#pragma once
// The `--spark-ui URL` value: where the driver's UI (or a History Server) serves /api/v1.
// Validated once, into an immutable value. Pure function; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::listener::rest {

struct SparkUiEndpoint {
  std::string host;         // a name, an IPv4 address, or an IPv6 address without brackets
  std::uint16_t port = 80;  // the URL's port; 80 when it has none (the driver UI is usually 4040)
  // Path before "/api/v1", without a trailing '/': empty, or e.g. "/proxy/app-123" behind a
  // reverse proxy that serves the UI under a prefix.
  std::string path_prefix;

  // "host:port", with brackets around an IPv6 address: the Host header and the start of messages.
  std::string Authority() const;
};

// Parses "http://HOST[:PORT][/PREFIX][/]". https is refused with a message (the evhttp client
// has no TLS); so are user info, query strings, fragments, empty hosts and ports outside 1..65535.
Result<SparkUiEndpoint> ParseSparkUiUrl(std::string_view url);

}  // namespace sparktrace::listener::rest
