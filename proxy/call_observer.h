#pragma once
// The proxy's only outward-facing hook: "a call started / a message passed / a call ended".
// Metrics, the access log and (later) tracing implement it; the proxy knows nothing about them.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>
#include <grpcpp/support/string_ref.h>

namespace sparktrace::proxy {

using ClientMetadata = std::multimap<grpc::string_ref, grpc::string_ref>;

// Request headers an observer sets on the upstream call in place of the client's: tracing swaps
// the client's traceparent for one naming its own span. Every client header with an overridden
// key is left out; a key set to nullopt is only removed.
class UpstreamHeaderOverrides {
 public:
  void Set(std::string key, std::optional<std::string> value) {
    for (auto& entry : entries_) {
      if (entry.first == key) {
        entry.second = std::move(value);
        return;
      }
    }
    entries_.emplace_back(std::move(key), std::move(value));
  }
  bool Overrides(std::string_view key) const {
    for (const auto& entry : entries_) {
      if (entry.first == key) return true;
    }
    return false;
  }
  const std::vector<std::pair<std::string, std::optional<std::string>>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> entries_;  // few: a linear scan
};

struct CallStart {
  std::string_view method;     // full path, "/spark.connect.SparkConnectService/ExecutePlan"
  std::string_view peer;       // gRPC's peer string, "ipv4:10.0.0.7:53122"
  std::string_view authority;  // the :authority the client used, "proxy:15002"
  const ClientMetadata& client_metadata;
  std::chrono::steady_clock::time_point started_at;
  UpstreamHeaderOverrides& upstream_headers;  // observers may add to it; read once all have run
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
