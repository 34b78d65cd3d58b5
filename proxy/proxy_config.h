#pragma once
// The proxy's configuration: declared flags, and validation into an immutable ProxyConfig.
// Validation reads the TLS files once, so a bad path fails at start-up, not at first connection.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <spdlog/common.h>

#include "common/flags.h"
#include "common/logging.h"
#include "common/result.h"

namespace sparktrace::proxy {

struct UpstreamOptions {
  std::string target;  // "host:port"
  bool tls = false;
  std::string ca_pem;  // root certificates for TLS; empty = system roots
};

struct ListenerTls {
  std::string cert_pem;
  std::string key_pem;
};

// The bounds of the data path (README, "Operating it"): each has a flag, and a counter in
// sparktrace_relay_limit_hits_total when it bites.
struct RelayBounds {
  std::uint64_t buffer_budget = 256ULL << 20;       // --relay-buffer-budget
  std::uint64_t connection_buffer_budget = 64ULL << 20;  // --connection-buffer-budget
  std::int32_t initial_stream_window = 64 << 10;    // --initial-stream-window
  std::int32_t stream_window = 4 << 20;             // --stream-window
  std::int64_t max_connections = 4096;              // --max-connections
  std::uint32_t max_streams_per_connection = 128;   // --max-streams-per-connection
  std::uint32_t max_header_list_bytes = 16U << 10;  // --max-header-list-bytes
  std::uint32_t max_traced_message_bytes = 16U << 20;   // --max-traced-message-bytes
  std::chrono::milliseconds handshake_timeout{10'000};  // --handshake-timeout
  std::chrono::milliseconds idle_timeout{3'600'000};    // --idle-timeout (0: never)
};

struct ProxyConfig {
  std::string listen = "0.0.0.0:15002";
  std::string admin = "127.0.0.1:9464";
  std::string admin_token;  // empty: the trace view is open to whoever reaches --admin
  std::string history_server_url;  // the trace view links jobs and stages there when set
  UpstreamOptions upstream;
  std::uint64_t max_message_bytes = 256ULL << 20;
  std::optional<ListenerTls> tls;
  std::chrono::milliseconds drain_timeout{150'000};
  RelayBounds bounds;
  int worker_threads = 1;  // relay workers, one event loop each (see --threads)
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;
};

std::span<const FlagSpec> ProxyFlagSpecs();

Result<ProxyConfig> ProxyConfigFromFlags(const ParsedFlags& flags);

// Checks "host:port" / "[v6]:port" with a port in 0..65535 (0 = pick a free one when listening).
Result<void> ValidateHostPort(const std::string& address);

}  // namespace sparktrace::proxy
