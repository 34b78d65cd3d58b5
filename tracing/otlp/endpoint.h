#pragma once
// Where an OTLP exporter sends to, checked once when the exporter is made. Pure; any thread.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::tracing::otlp {

// The OTLP/HTTP path for traces (OTLP spec, "OTLP/HTTP Request").
inline constexpr std::string_view kOtlpHttpTracesPath = "/v1/traces";

struct OtlpEndpoint {
  std::string host;  // without IPv6 brackets
  std::uint16_t port = 0;
  std::string path;  // HTTP only; starts with '/'
};

// "host:port" or "[v6]:port", as gRPC targets are written. A URL is refused with a hint: TLS
// is an option of its own, not a scheme.
Result<OtlpEndpoint> ParseOtlpGrpcEndpoint(std::string_view text);

// "host:port" (path /v1/traces) or "http://host:port[/path]" (no path means /v1/traces).
// "https://" is refused: the OTLP/HTTP exporter speaks plain HTTP only.
Result<OtlpEndpoint> ParseOtlpHttpEndpoint(std::string_view text);

}  // namespace sparktrace::tracing::otlp
