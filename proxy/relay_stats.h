#pragma once
// What the relay's bounds did, counted for /metrics: every limit of the data path has a counter
// of the times it bit, and the gauges an operator sizes them by. Written by every relay worker
// (relaxed atomics, no locks), read at scrape time (RelayMetrics).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sparktrace::proxy {

// Each is the label value of sparktrace_relay_limit_hits_total{limit=...}.
enum class RelayLimit {
  kMaxConnections,         // a client connection refused: --max-connections reached, none idle to evict
  kHandshakeTimeout,       // a client connection closed: no TLS handshake / HTTP/2 preface in time
  kIdleTimeout,            // a client connection closed (GOAWAY) after --idle-timeout without calls
  kStreamsPerConnection,   // a stream refused: --max-streams-per-connection open on its connection
  kHeaderListSize,         // a call refused: its metadata is over --max-header-list-bytes or the upstream's limit
  kTracedMessageBytes,     // a message forwarded but not shown to tracing: over --max-traced-message-bytes
  kBufferBudget,           // a window or a traced message could not grow: --relay-buffer-budget spent
  kConnectionBuffer,       // a window could not grow: its client connection's --connection-buffer-budget spent
  kUpstreamBackoff,        // a call failed fast: the upstream is unreachable and the next attempt is not due
};
inline constexpr std::size_t kRelayLimitCount = 9;

std::string_view RelayLimitName(RelayLimit limit);

class RelayStats {
 public:
  void Hit(RelayLimit limit) { hits_[Index(limit)].fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t hits(RelayLimit limit) const { return hits_[Index(limit)].load(std::memory_order_relaxed); }

  void ClientConnected() { client_connections_.fetch_add(1, std::memory_order_relaxed); }
  void ClientDisconnected() { client_connections_.fetch_sub(1, std::memory_order_relaxed); }
  std::int64_t client_connections() const { return client_connections_.load(std::memory_order_relaxed); }

  // An idle client connection closed to admit a new one at --max-connections (not a refusal: the
  // bound held and nobody was turned away).
  void IdleConnectionEvicted() { idle_connections_evicted_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t idle_connections_evicted() const {
    return idle_connections_evicted_.load(std::memory_order_relaxed);
  }

  void UpstreamConnectAttempt() { upstream_connect_attempts_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t upstream_connect_attempts() const {
    return upstream_connect_attempts_.load(std::memory_order_relaxed);
  }

 private:
  static std::size_t Index(RelayLimit limit) { return static_cast<std::size_t>(limit); }

  std::array<std::atomic<std::uint64_t>, kRelayLimitCount> hits_{};
  std::atomic<std::int64_t> client_connections_{0};
  std::atomic<std::uint64_t> upstream_connect_attempts_{0};
  std::atomic<std::uint64_t> idle_connections_evicted_{0};
};

}  // namespace sparktrace::proxy
