#pragma once
// The proxy's only outward-facing hook: "a call started / a message passed / a call ended".
// Metrics, the access log and tracing implement it; the proxy knows nothing about them, and they
// know nothing about HTTP/2 or the library that speaks it.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sparktrace::proxy {

// gRPC status codes (the numbers are the gRPC specification's).
enum class StatusCode : std::uint8_t {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// The client's request headers as they came on the wire, pseudo-headers excluded. Values of
// `-bin` headers are as sent (base64), not decoded.
using ClientMetadata = std::multimap<std::string_view, std::string_view>;

// Request headers an observer sets on the upstream call in place of the client's: tracing swaps
// the client's traceparent for one naming its own span. Every client header with an overridden
// key is left out; a key set to nullopt is only removed. A value set here is taken to be made for
// this call, and is sent never indexed (Header::never_index).
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
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> entries_;  // few: a linear scan
};

struct CallStart {
  std::string_view method;     // full path, "/spark.connect.SparkConnectService/ExecutePlan"
  std::string_view peer;       // "ipv4:10.0.0.7:53122" / "ipv6:[::1]:53122", as gRPC names peers
  std::string_view authority;  // the :authority the client used, "proxy:15002"
  const ClientMetadata& client_metadata;
  std::chrono::steady_clock::time_point started_at;
  UpstreamHeaderOverrides& upstream_headers;  // observers may add to it; read once all have run
};

// One gRPC message as the pieces of the proxy's receive buffers it arrived in: a field may start
// in one piece and end in the next. The pieces are only valid during the tap call.
using MessageBytes = std::span<const std::span<const std::uint8_t>>;

struct TappedMessage {
  std::uint64_t wire_bytes = 0;  // length on the wire, as the 5-byte prefix gave it
  bool compressed = false;       // the prefix's compressed flag was set
  // The message, decompressed when it was compressed. Empty with `bytes_available` false when
  // no tap of the call asked for bytes (CallTap::NeedsMessageBytes), or when it was compressed
  // with an encoding the proxy cannot decode.
  MessageBytes bytes;
  bool bytes_available = false;
};

struct MessageCount {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;         // wire bytes of the messages (without the 5-byte prefixes)
  std::uint64_t undecodable = 0;   // compressed with an encoding the taps could not be given
};

struct CallEnd {
  StatusCode code = StatusCode::kOk;  // what the client was told (CANCELLED if it went away)
  std::string_view error_message;     // empty for OK
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
  // Whether OnRequestMessage/OnResponseMessage need the message's bytes. The proxy keeps a
  // message's receive buffers until its last byte only while some tap of the call needs them;
  // taps that count need only the sizes. Asked once, when the call starts.
  virtual bool NeedsMessageBytes() const { return true; }
  virtual void OnRequestMessage(const TappedMessage& message) = 0;
  virtual void OnResponseMessage(const TappedMessage& message) = 0;
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
