#pragma once
// gRPC-over-HTTP/2 facts the relay needs without a gRPC library: the grpc-timeout header, the
// status trailers, and which status a client is owed when HTTP/2 itself ends a stream.
// (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md, doc/http-grpc-status-mapping.md)

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/call_observer.h"

namespace sparktrace::proxy {

// "100m" → 100 ms; nullopt when malformed (1 to 8 digits, then one of H M S m u n).
std::optional<std::chrono::nanoseconds> ParseGrpcTimeout(std::string_view value);

// The grpc-status trailer's value; nullopt when it is not a number in 0..99.
std::optional<StatusCode> ParseGrpcStatus(std::string_view value);

// The status for a stream the peer reset with RST_STREAM `error_code` (RFC 9113 §7) before any
// grpc-status: REFUSED_STREAM → UNAVAILABLE, CANCEL → CANCELLED, ENHANCE_YOUR_CALM →
// RESOURCE_EXHAUSTED, INADEQUATE_SECURITY → PERMISSION_DENIED, anything else → INTERNAL.
StatusCode StatusForResetCode(std::uint32_t error_code);

// The status for a response whose :status is not 200 (gRPC's HTTP-to-status mapping).
StatusCode StatusForHttpStatus(int http_status);

// grpc-message is percent-encoded on the wire: everything outside printable ASCII, and '%'.
std::string PercentEncodeGrpcMessage(std::string_view message);
std::string PercentDecodeGrpcMessage(std::string_view value);

}  // namespace sparktrace::proxy
