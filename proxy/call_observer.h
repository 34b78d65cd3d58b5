#pragma once
// The proxy's only outward-facing hook: "a call started / a message passed / a call ended".
// Metrics, the access log and (later) tracing implement it; the proxy knows nothing about them.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>
#include <grpcpp/support/string_ref.h>

namespace sparktrace::proxy {

using ClientMetadata = std::multimap<grpc::string_ref, grpc::string_ref>;

struct CallStart {
  std::string_view method;  // full path, "/spark.connect.SparkConnectService/ExecutePlan"
  std::string_view peer;    // gRPC's peer string, "ipv4:10.0.0.7:53122"
  const ClientMetadata& client_metadata;
  std::chrono::steady_clock::time_point started_at;
};

struct MessageCount {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

struct CallEnd {
  grpc::StatusCode code = grpc::StatusCode::OK;  // what the client was told (CANCELLED if it went away)
  std::string_view error_message;                // empty for OK
  std::chrono::steady_clock::duration duration{};
  std::optional<std::chrono::steady_clock::duration> time_to_first_response;
  MessageCount requests;   // client → upstream
  MessageCount responses;  // upstream → client
};

// Per-call hooks. Threads: all calls of one tap come from the worker thread that owns the call,
// one at a time; OnCallEnded comes last, once. None may block: a worker forwards many calls.
class CallTap {
 public:
  virtual ~CallTap() = default;
  virtual void OnRequestMessage(const grpc::ByteBuffer& message) = 0;
  virtual void OnResponseMessage(const grpc::ByteBuffer& message) = 0;
  virtual void OnCallEnded(const CallEnd& end) = 0;
};

class CallObserver {
 public:
  virtual ~CallObserver() = default;
  // Called on a worker thread as a call arrives, before it is forwarded; may run on several
  // workers at once. Returns the tap for this call, or nullptr to ignore it. `start` is only
  // valid during the call.
  virtual std::unique_ptr<CallTap> OnCallStarted(const CallStart& start) = 0;
};

}  // namespace sparktrace::proxy
