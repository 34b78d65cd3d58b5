#include "proxy/proxy_config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/flag_values.h"
#include "common/units.h"

namespace sparktrace::proxy {
namespace {

Result<std::string> ReadFile(std::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("--" + std::string(flag) + ": cannot read '" + path + "'");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (contents.str().empty()) return InvalidArgument("--" + std::string(flag) + ": '" + path + "' is empty");
  return contents.str();
}

Result<RelayBounds> RelayBoundsFromFlags(const ParsedFlags& flags) {
  RelayBounds bounds;
  auto budget = ByteSizeFlag(flags, "relay-buffer-budget", 1ULL << 20, 1ULL << 40);
  if (!budget.ok()) return budget.error();
  bounds.buffer_budget = *budget;
  auto connection_budget = ByteSizeFlag(flags, "connection-buffer-budget", 1ULL << 20, 1ULL << 40);
  if (!connection_budget.ok()) return connection_budget.error();
  bounds.connection_buffer_budget = *connection_budget;
  // HTTP/2 windows are at most 2^31-1 bytes; below 16 KiB a DATA frame would not fit one.
  auto initial = ByteSizeFlag(flags, "initial-stream-window", 16ULL << 10, 1ULL << 30);
  if (!initial.ok()) return initial.error();
  bounds.initial_stream_window = static_cast<std::int32_t>(*initial);
  auto window = ByteSizeFlag(flags, "stream-window", 16ULL << 10, 1ULL << 30);
  if (!window.ok()) return window.error();
  bounds.stream_window = static_cast<std::int32_t>(*window);
  if (bounds.stream_window < bounds.initial_stream_window) {
    return InvalidArgument("--stream-window: must not be smaller than --initial-stream-window");
  }
  auto connections = IntegerFlag(flags, "max-connections", 1, 10'000'000);
  if (!connections.ok()) return connections.error();
  bounds.max_connections = *connections;
  auto streams = IntegerFlag(flags, "max-streams-per-connection", 1, 1'000'000);
  if (!streams.ok()) return streams.error();
  bounds.max_streams_per_connection = static_cast<std::uint32_t>(*streams);
  auto header_list = ByteSizeFlag(flags, "max-header-list-bytes", 1ULL << 10, 1ULL << 20);
  if (!header_list.ok()) return header_list.error();
  bounds.max_header_list_bytes = static_cast<std::uint32_t>(*header_list);
  auto traced = ByteSizeFlag(flags, "max-traced-message-bytes", 0, 1ULL << 30);
  if (!traced.ok()) return traced.error();
  bounds.max_traced_message_bytes = static_cast<std::uint32_t>(*traced);
  auto handshake = DurationFlag(flags, "handshake-timeout", std::chrono::milliseconds(1));
  if (!handshake.ok()) return handshake.error();
  bounds.handshake_timeout = *handshake;
  auto idle = DurationFlag(flags, "idle-timeout");  // 0: never
  if (!idle.ok()) return idle.error();
  bounds.idle_timeout = *idle;
  return bounds;
}

Result<std::string> HostPortFlag(const ParsedFlags& flags, std::string_view name) {
  const std::string& value = flags.Get(name);
  if (auto valid = ValidateHostPort(value); !valid.ok()) return FlagError(name, valid.error());
  return value;
}

}  // namespace

std::span<const FlagSpec> ProxyFlagSpecs() {
  static const std::array<FlagSpec, 25> kSpecs = {{
      {"listen", "HOST:PORT", "0.0.0.0:15002",
       "where Spark Connect clients connect (port 0 picks a free port)"},
      {"upstream", "HOST:PORT", "", "the Spark Connect server to forward to", /*required=*/true},
      {"admin", "HOST:PORT", "127.0.0.1:9464", "HTTP for /healthz, /readyz, /metrics and the trace view"},
      {"admin-token", "TOKEN", "",
       "require this token for the trace view and its API (Bearer header, or ?token= once); probes, /metrics "
       "and event pushes stay open"},
      {"history-server", "URL", "", "a Spark History Server (http://shs:18080): the trace view links jobs and stages there"},
      {"max-message-bytes", "BYTES", "256MiB",
       "largest message accepted and forwarded, each way (max 2GiB-1)"},
      {"upstream-tls", "", "", "connect to the upstream with TLS"},
      {"upstream-ca", "FILE", "",
       "PEM roots to verify the upstream with (implies --upstream-tls; default: system roots)"},
      {"tls-cert", "FILE", "", "PEM certificate chain: serve clients over TLS (needs --tls-key)"},
      {"tls-key", "FILE", "", "PEM private key for --tls-cert"},
      {"threads", "N", "", "relay worker threads, each with its own event loop (default: one per core)"},
      {"drain-timeout", "DURATION", "150s",
       "on SIGTERM, how long in-flight calls may finish before they are cancelled"},
      {"relay-buffer-budget", "BYTES", "256MiB",
       "the most all calls together may make the proxy hold (stream windows granted + traced message bytes); past "
       "it, windows stop growing and peers slow down"},
      {"connection-buffer-budget", "BYTES", "64MiB",
       "the most one client connection's calls may grow their windows by, out of --relay-buffer-budget"},
      {"initial-stream-window", "BYTES", "64KiB", "every stream's HTTP/2 receive window to begin with"},
      {"stream-window", "BYTES", "4MiB",
       "the largest window a stream grows to while its sender is held back by it (and the budget allows)"},
      {"max-connections", "N", "4096",
       "client connections at once (all workers); past it the one idle longest gets GOAWAY for the new one, "
       "which is closed at once when all have calls open. Lowered to fit the descriptor limit"},
      {"max-streams-per-connection", "N", "128", "calls one client connection may have open at once"},
      {"max-header-list-bytes", "BYTES", "16KiB",
       "largest request metadata (and response header block) accepted; larger calls fail RESOURCE_EXHAUSTED at the "
       "proxy, alone. The upstream's own announced limit applies too"},
      {"max-traced-message-bytes", "BYTES", "16MiB",
       "larger messages are forwarded but not decoded for tracing (their size is still counted)"},
      {"handshake-timeout", "DURATION", "10s",
       "a client connection must finish its TLS handshake and HTTP/2 preface within this, or it is closed"},
      {"idle-timeout", "DURATION", "1h", "a client connection without calls for this long gets GOAWAY (0: never)"},
      {"log-level", "LEVEL", "info", "trace, debug, info, warn, error or off"},
      {"log-format", "FORMAT", "text", "text or json (one object per line)"},
      {"help", "", "", "show this help"},
  }};
  return kSpecs;
}

Result<void> ValidateHostPort(const std::string& address) {
  const auto colon = address.rfind(':');
  if (address.empty()) return InvalidArgument("empty address (want HOST:PORT)");
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("'" + address + "' is not HOST:PORT");
  }
  const std::string host = address.substr(0, colon);
  if (host.front() == '[' && host.back() != ']')
    return InvalidArgument("'" + address + "' has an unclosed '['");
  const std::string port_text = address.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    return InvalidArgument("'" + address + "' has no valid port (0-65535)");
  }
  return {};
}

Result<ProxyConfig> ProxyConfigFromFlags(const ParsedFlags& flags) {
  ProxyConfig config;
  auto listen = HostPortFlag(flags, "listen");
  if (!listen.ok()) return listen.error();
  config.listen = *listen;
  auto admin = HostPortFlag(flags, "admin");
  if (!admin.ok()) return admin.error();
  config.admin = *admin;
  config.admin_token = flags.Get("admin-token");
  config.history_server_url = flags.Get("history-server");
  auto upstream = HostPortFlag(flags, "upstream");
  if (!upstream.ok()) return upstream.error();
  config.upstream.target = *upstream;

  auto max_bytes = ParseByteSize(flags.Get("max-message-bytes"));
  if (!max_bytes.ok()) return FlagError("max-message-bytes", max_bytes.error());
  if (*max_bytes < 1024 || *max_bytes > static_cast<std::uint64_t>(INT_MAX)) {
    return InvalidArgument("--max-message-bytes: must be between 1KiB and 2GiB-1 (gRPC's limit), got " +
                           flags.Get("max-message-bytes"));
  }
  config.max_message_bytes = *max_bytes;

  config.upstream.tls = flags.GetBool("upstream-tls") || flags.IsSet("upstream-ca");
  if (flags.IsSet("upstream-ca")) {
    auto ca = ReadFile("upstream-ca", flags.Get("upstream-ca"));
    if (!ca.ok()) return ca.error();
    config.upstream.ca_pem = std::move(*ca);
  }

  const bool has_cert = flags.IsSet("tls-cert");
  const bool has_key = flags.IsSet("tls-key");
  if (has_cert != has_key) {
    return InvalidArgument(has_cert ? "--tls-key is required with --tls-cert"
                                    : "--tls-cert is required with --tls-key");
  }
  if (has_cert) {
    auto cert = ReadFile("tls-cert", flags.Get("tls-cert"));
    if (!cert.ok()) return cert.error();
    auto key = ReadFile("tls-key", flags.Get("tls-key"));
    if (!key.ok()) return key.error();
    config.tls = ListenerTls{std::move(*cert), std::move(*key)};
  }

  // Relay workers share nothing (own loop, socket, connections), so one per core is what uses
  // the machine, as nginx's `worker_processes auto`.
  config.worker_threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  if (flags.IsSet("threads")) {
    auto threads = IntegerFlag(flags, "threads", 1, 256);
    if (!threads.ok()) return threads.error();
    config.worker_threads = static_cast<int>(*threads);
  }

  auto drain = DurationFlag(flags, "drain-timeout");
  if (!drain.ok()) return drain.error();
  config.drain_timeout = *drain;
  auto bounds = RelayBoundsFromFlags(flags);
  if (!bounds.ok()) return bounds.error();
  config.bounds = *bounds;

  auto level = ParseLogLevel(flags.Get("log-level"));
  if (!level.ok()) return FlagError("log-level", level.error());
  config.log_level = *level;
  auto format = ParseLogFormat(flags.Get("log-format"));
  if (!format.ok()) return FlagError("log-format", format.error());
  config.log_format = *format;
  return config;
}

}  // namespace sparktrace::proxy
