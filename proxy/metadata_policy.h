#pragma once
// Which metadata the proxy forwards, and which values must never reach a log.

#include <string>
#include <string_view>

#include "proxy/call_observer.h"

namespace sparktrace::proxy {

// Request headers forwarded to the upstream: everything an application can set. Excluded are
// HTTP/2 pseudo-headers and transport headers gRPC manages itself (grpc-*, te, content-type,
// user-agent — the client's user agent is carried by the upstream channel instead).
bool IsForwardedRequestHeader(std::string_view key);

// Response headers and trailers copied back to the client. Excluded: transport headers and the
// status trailers (grpc-status, grpc-message, grpc-status-details-bin), which travel in grpc::Status.
bool IsForwardedResponseHeader(std::string_view key);

// authorization, authentication, cookie, proxy-authorization, and names containing token,
// password, passwd, secret, api-key/apikey, credential or session-key.
bool IsSecretHeader(std::string_view key);

// "authorization=<redacted> x-dag=etl trace-bin=<16 bytes>" for debug logs. Values of secret
// headers are never included; binary values are summarised by size.
std::string DescribeHeadersForLog(const ClientMetadata& metadata);

}  // namespace sparktrace::proxy
