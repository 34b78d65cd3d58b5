#pragma once
// How an RPC span names the gRPC method of its call, from the request's :path: "/pkg.Service/Method"
// gives the span name "pkg.Service/Method" and rpc.service / rpc.method. A path that is not such a
// name, or too long to be a sane one, is named `_OTHER` (the OpenTelemetry RPC conventions' value
// for a method the instrumentation does not recognise), so that a client cannot put arbitrary text
// into span names.
//
// Threads: pure; call it from any thread.

#include <cstddef>
#include <string>
#include <string_view>

namespace sparktrace::tracing::connect {

// The longest :path named by its text. Generous: the longest Spark Connect path is 52 bytes, and
// fully qualified protobuf service names of real APIs stay well under 100.
inline constexpr std::size_t kMaxNamedMethodPathBytes = 128;

inline constexpr std::string_view kOtherMethodName = "_OTHER";

struct RpcMethodName {
  std::string_view service;  // "spark.connect.SparkConnectService"; empty for _OTHER
  std::string_view method;   // "ListSqlExecutions", or _OTHER
  bool named_by_path = false;

  // "spark.connect.SparkConnectService/ListSqlExecutions", or "_OTHER".
  std::string SpanName() const;
};

// Views into `path` (or the _OTHER constant): valid as long as `path` is. A path is named when it
// is "/" service "/" method, within kMaxNamedMethodPathBytes, the service one or more dot-separated
// identifiers and the method one identifier (ASCII letters, digits and '_'), as protobuf names are.
RpcMethodName NameRpcMethod(std::string_view path);

}  // namespace sparktrace::tracing::connect
