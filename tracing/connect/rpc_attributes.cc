#include "tracing/connect/rpc_attributes.h"

#include <charconv>

#include "common/utf8.h"

namespace sparktrace::tracing::connect {
namespace {

std::optional<std::int64_t> ParsePort(std::string_view text) {
  std::int64_t port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || end != text.data() + text.size() || port < 0 || port > 65535) return std::nullopt;
  return port;
}

// "host:port", "[v6]:port", "host" or "[v6]".
NetworkAddress SplitHostPort(std::string_view text) {
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close != std::string_view::npos) {
      NetworkAddress result{std::string(text.substr(1, close - 1)), std::nullopt};
      if (close + 1 < text.size() && text[close + 1] == ':') result.port = ParsePort(text.substr(close + 2));
      return result;
    }
  }
  const auto colon = text.rfind(':');
  // More than one colon without brackets: a bare IPv6 address, no port.
  if (colon == std::string_view::npos || text.find(':') != colon) return {std::string(text), std::nullopt};
  return {std::string(text.substr(0, colon)), ParsePort(text.substr(colon + 1))};
}

}  // namespace

std::optional<NetworkAddress> ParseGrpcPeer(std::string_view peer) {
  if (peer.starts_with("ipv4:") || peer.starts_with("ipv6:")) return SplitHostPort(peer.substr(5));
  if (peer.starts_with("unix:")) return NetworkAddress{std::string(peer.substr(5)), std::nullopt};
  return std::nullopt;
}

std::optional<NetworkAddress> ParseAuthority(std::string_view authority) {
  if (authority.empty()) return std::nullopt;
  return SplitHostPort(authority);
}

bool IsServerError(int grpc_status_code) {
  switch (grpc_status_code) {
    case 2:   // UNKNOWN
    case 4:   // DEADLINE_EXCEEDED
    case 12:  // UNIMPLEMENTED
    case 13:  // INTERNAL
    case 14:  // UNAVAILABLE
    case 15:  // DATA_LOSS
      return true;
    default:
      return false;
  }
}

std::string TruncateUtf8(std::string_view text, std::size_t max_bytes) {
  return std::string(Utf8Prefix(text, max_bytes));
}

}  // namespace sparktrace::tracing::connect
