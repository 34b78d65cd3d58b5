#include "listener/rest/spark_ui_endpoint.h"

#include <charconv>

namespace sparktrace::listener::rest {

std::string SparkUiEndpoint::Authority() const {
  const std::string shown_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return shown_host + ":" + std::to_string(port);
}

Result<SparkUiEndpoint> ParseSparkUiUrl(std::string_view url) {
  const std::string quoted = "--spark-ui \"" + std::string(url) + "\": ";
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://")) {
    return InvalidArgument(quoted + "https is not supported; point it at the UI's plain http port");
  }
  if (!url.starts_with(kScheme)) return InvalidArgument(quoted + "expected http://HOST[:PORT][/PREFIX]");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return InvalidArgument(quoted + "a query string or fragment is not allowed");
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos)
    return InvalidArgument(quoted + "user info is not allowed");

  SparkUiEndpoint endpoint;
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgument(quoted + "unclosed '[' in the host");
    endpoint.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return InvalidArgument(quoted + "expected ':' after ']'");
      port_text = after.substr(1);
      if (port_text.empty()) return InvalidArgument(quoted + "empty port");
    }
  } else {
    const std::size_t colon = authority.find(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return InvalidArgument(quoted + "empty port");
    }
  }
  if (endpoint.host.empty()) return InvalidArgument(quoted + "missing host");
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (error != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      return InvalidArgument(quoted + "port must be 1..65535");
    }
    endpoint.port = static_cast<std::uint16_t>(port);
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  // Users paste the API root too; the poller adds /api/v1 itself.
  if (path.ends_with("/api/v1")) path.remove_suffix(std::string_view("/api/v1").size());
  endpoint.path_prefix = std::string(path);
  return endpoint;
}

}  // namespace sparktrace::listener::rest
