#include "admin/admin_flags.h"

#include <algorithm>
#include <array>

#include "common/flag_values.h"

namespace sparktrace::admin {
namespace {

// Zero would close every connection at once; a day is past any reason to wait.
Result<std::chrono::milliseconds> TimeoutFlag(const ParsedFlags& flags, std::string_view name) {
  return DurationFlag(flags, name, std::chrono::milliseconds(1), std::chrono::hours(24));
}

Result<std::vector<std::string>> HostsFlag(const ParsedFlags& flags, std::string_view name) {
  std::vector<std::string> hosts;
  std::string_view list = flags.Get(name);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const bool valid = !item.empty() && std::all_of(item.begin(), item.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
             c == '.' || c == '_' || c == '*';
    });
    if (!valid || (item.find('*') != std::string_view::npos && item != "*")) {
      return InvalidArgument("--" + std::string(name) + ": '" + std::string(item) +
                             "' is not a host name (names, '.example.com' for a domain, or '*')");
    }
    hosts.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return hosts;
}

}  // namespace

std::span<const FlagSpec> AdminFlagSpecs() {
  static const std::array<FlagSpec, 14> kSpecs = {{
      {"admin-max-connections", "N", "256",
       "open admin connections; at the cap the one that loses least is closed (idle, then sending a head or "
       "body), "
       "else the new one may only probe"},
      {"admin-max-connections-per-peer", "N", "64",
       "open admin connections from one address; at its share that peer's own idlest one is closed, else the "
       "new "
       "one may only probe"},
      {"admin-probe-connections", "N", "8",
       "connections past the caps for GET /healthz and /readyz only (answered, then closed); 0: none"},
      {"admin-max-request-line", "BYTES", "8KiB",
       "longest request line (method, path, query): longer is 414"},
      {"admin-max-header-bytes", "BYTES", "32KiB", "largest request header block: larger is 431"},
      {"admin-max-headers", "N", "100", "most request header lines: more is 431"},
      {"admin-header-timeout", "DURATION", "10s", "a request head must arrive within this: later is 408"},
      {"admin-body-timeout", "DURATION", "60s",
       "a request body must arrive within this after its head: later is 408"},
      {"admin-body-idle-timeout", "DURATION", "5s", "no byte of a request body for this long is 408"},
      {"admin-idle-timeout", "DURATION", "60s", "a keep-alive admin connection idle this long is closed"},
      {"admin-write-timeout", "DURATION", "30s",
       "an answer the client stops reading for this long is dropped"},
      {"admin-max-body-buffer", "BYTES", "64MiB",
       "request bodies being received at once, all connections: a POST over it gets 503"},
      {"admin-ui-queue", "N", "16", "trace-view requests waiting for its thread: more get 503"},
      {"admin-allowed-hosts", "NAMES", "",
       "Host names the trace view and POST routes answer besides IP addresses and localhost "
       "(comma-separated; "
       ".example.com for a domain; * for any): others get 421"},
  }};
  return kSpecs;
}

Result<AdminLimits> AdminLimitsFromFlags(const ParsedFlags& flags) {
  AdminLimits limits;
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

  auto connections = IntegerFlag(flags, "admin-max-connections", 1, 65536);
  if (!connections.ok()) return connections.error();
  limits.max_connections = static_cast<std::size_t>(*connections);
  auto per_peer = IntegerFlag(flags, "admin-max-connections-per-peer", 1, 65536);
  if (!per_peer.ok()) return per_peer.error();
  limits.max_connections_per_peer = static_cast<std::size_t>(*per_peer);
  auto probe_connections = IntegerFlag(flags, "admin-probe-connections", 0, 1024);
  if (!probe_connections.ok()) return probe_connections.error();
  limits.probe_connections = static_cast<std::size_t>(*probe_connections);
  // At least what an ordinary request line or header block needs; at most what keeps a connection small.
  auto request_line = ByteSizeFlag(flags, "admin-max-request-line", 256, kMiB);
  if (!request_line.ok()) return request_line.error();
  limits.max_request_line_bytes = static_cast<std::size_t>(*request_line);
  auto header_bytes = ByteSizeFlag(flags, "admin-max-header-bytes", 1024, 16 * kMiB);
  if (!header_bytes.ok()) return header_bytes.error();
  limits.max_header_bytes = static_cast<std::size_t>(*header_bytes);
  auto headers = IntegerFlag(flags, "admin-max-headers", 1, 10000);
  if (!headers.ok()) return headers.error();
  limits.max_headers = static_cast<std::size_t>(*headers);

  auto header_timeout = TimeoutFlag(flags, "admin-header-timeout");
  if (!header_timeout.ok()) return header_timeout.error();
  limits.header_timeout = *header_timeout;
  auto body_timeout = TimeoutFlag(flags, "admin-body-timeout");
  if (!body_timeout.ok()) return body_timeout.error();
  limits.body_timeout = *body_timeout;
  auto body_idle_timeout = TimeoutFlag(flags, "admin-body-idle-timeout");
  if (!body_idle_timeout.ok()) return body_idle_timeout.error();
  limits.body_idle_timeout = *body_idle_timeout;
  auto idle_timeout = TimeoutFlag(flags, "admin-idle-timeout");
  if (!idle_timeout.ok()) return idle_timeout.error();
  limits.idle_timeout = *idle_timeout;
  auto write_timeout = TimeoutFlag(flags, "admin-write-timeout");
  if (!write_timeout.ok()) return write_timeout.error();
  limits.write_timeout = *write_timeout;

  auto body_buffer = ByteSizeFlag(flags, "admin-max-body-buffer", kMiB, 16 * kGiB);
  if (!body_buffer.ok()) return body_buffer.error();
  limits.max_body_buffer_bytes = static_cast<std::size_t>(*body_buffer);
  auto ui_queue = IntegerFlag(flags, "admin-ui-queue", 1, 4096);
  if (!ui_queue.ok()) return ui_queue.error();
  limits.max_ui_queue = static_cast<std::size_t>(*ui_queue);
  auto hosts = HostsFlag(flags, "admin-allowed-hosts");
  if (!hosts.ok()) return hosts.error();
  limits.allowed_hosts = std::move(*hosts);
  return limits;
}

}  // namespace sparktrace::admin
