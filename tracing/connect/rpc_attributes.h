#pragma once
// Pieces of the OpenTelemetry RPC semantic conventions for the proxy's SERVER spans: addresses
// from gRPC's peer string and the :authority, and which status codes make a span an error.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sparktrace::tracing::connect {

struct NetworkAddress {
  std::string address;  // host name or IP (IPv6 without brackets), or a unix socket path
  std::optional<std::int64_t> port;
};

// gRPC peer strings: "ipv4:10.0.0.7:53122", "ipv6:[::1]:53122", "unix:/tmp/s". nullopt for others.
std::optional<NetworkAddress> ParseGrpcPeer(std::string_view peer);

// ":authority" values: "proxy:15002", "[::1]:15002", "proxy" (no port). nullopt when empty.
std::optional<NetworkAddress> ParseAuthority(std::string_view authority);

// The server-side error codes of the RPC conventions: UNKNOWN, DEADLINE_EXCEEDED,
// UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS. The rest are the client's doing.
bool IsServerError(int grpc_status_code);

// At most `max_bytes`, cut on a UTF-8 character boundary.
std::string TruncateUtf8(std::string_view text, std::size_t max_bytes = 256);

}  // namespace sparktrace::tracing::connect
