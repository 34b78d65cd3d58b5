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

struct ProxyConfig {
  std::string listen = "0.0.0.0:15002";
  std::string admin = "127.0.0.1:9464";
  std::string admin_token;  // empty: the trace view is open to whoever reaches --admin
  std::string history_server_url;  // the trace view links jobs and stages there when set
  UpstreamOptions upstream;
  std::uint64_t max_message_bytes = 256ULL << 20;
  std::optional<ListenerTls> tls;
  std::chrono::milliseconds drain_timeout{150'000};
  int worker_threads = 1;  // relay workers, one event loop each (see --threads)
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;
};

std::span<const FlagSpec> ProxyFlagSpecs();

Result<ProxyConfig> ProxyConfigFromFlags(const ParsedFlags& flags);

// Checks "host:port" / "[v6]:port" with a port in 0..65535 (0 = pick a free one when listening).
Result<void> ValidateHostPort(const std::string& address);

}  // namespace sparktrace::proxy
