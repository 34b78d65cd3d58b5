#include "tracing/otlp/endpoint.h"

#include <algorithm>

namespace sparktrace::tracing::otlp {
namespace {

Result<OtlpEndpoint> ParseHostPort(std::string_view text, std::string_view what) {
  const std::string quoted = std::string(what) + " '" + std::string(text) + "'";
  OtlpEndpoint endpoint;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return InvalidArgument(quoted + ": expected [address]:port");
    }
    endpoint.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return InvalidArgument(quoted + ": expected host:port");
    endpoint.host = std::string(text.substr(0, colon));
    if (endpoint.host.find(':') != std::string::npos)
      return InvalidArgument(quoted + ": write IPv6 addresses as [address]:port");
    port = text.substr(colon + 1);
  }
  if (endpoint.host.empty()) return InvalidArgument(quoted + ": empty host");
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return InvalidArgument(quoted + ": port must be a number");
  }
  const int number = std::stoi(std::string(port));
  if (number < 1 || number > 65535) return InvalidArgument(quoted + ": port out of range");
  endpoint.port = static_cast<std::uint16_t>(number);
  return endpoint;
}

}  // namespace

Result<OtlpEndpoint> ParseOtlpGrpcEndpoint(std::string_view text) {
  if (text.find("://") != std::string_view::npos) {
    return InvalidArgument("OTLP/gRPC endpoint '" + std::string(text) +
                           "': give host:port without a scheme (TLS is a separate option)");
  }
  return ParseHostPort(text, "OTLP/gRPC endpoint");
}

Result<OtlpEndpoint> ParseOtlpHttpEndpoint(std::string_view text) {
  if (text.starts_with("https://")) {
    return InvalidArgument("OTLP/HTTP endpoint '" + std::string(text) +
                           "': https is not supported by the OTLP/HTTP exporter; use OTLP/gRPC with TLS");
  }
  std::string_view rest = text;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return InvalidArgument("OTLP/HTTP endpoint '" + std::string(text) + "': only http:// URLs");
  }
  const auto slash = rest.find('/');
  auto endpoint = ParseHostPort(rest.substr(0, slash), "OTLP/HTTP endpoint");
  if (!endpoint.ok()) return endpoint.error();
  endpoint->path = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash));
  if (endpoint->path.empty() || endpoint->path == "/") endpoint->path = std::string(kOtlpHttpTracesPath);
  if (endpoint->path.find_first_of(" \r\n\t#") != std::string::npos) {
    return InvalidArgument("OTLP/HTTP endpoint '" + std::string(text) + "': bad characters in the path");
  }
  return endpoint;
}

}  // namespace sparktrace::tracing::otlp
