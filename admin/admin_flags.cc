#include "admin/admin_flags.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "common/units.h"

namespace sparktrace::admin {
namespace {

Result<std::size_t> CountFlag(const ParsedFlags& flags, std::string_view name, std::size_t low, std::size_t high) {
  const std::string& text = flags.Get(name);
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    return InvalidArgument("--" + std::string(name) + ": '" + text + "' is not a number from " +
                           std::to_string(low) + " to " + std::to_string(high));
  }
  return value;
}

Result<std::size_t> BytesFlag(const ParsedFlags& flags, std::string_view name, std::uint64_t low,
                              std::uint64_t high) {
  auto bytes = ParseByteSize(flags.Get(name));
  if (!bytes.ok()) return FlagError(name, bytes.error());
  if (*bytes < low || *bytes > high) {
    return InvalidArgument("--" + std::string(name) + ": must be between " + FormatByteSize(low) + " and " +
                           FormatByteSize(high) + ", got " + flags.Get(name));
  }
  return static_cast<std::size_t>(*bytes);
}

Result<std::chrono::milliseconds> DurationFlag(const ParsedFlags& flags, std::string_view name) {
  auto duration = ParseDuration(flags.Get(name));
  if (!duration.ok()) return FlagError(name, duration.error());
  // Zero would close every connection at once; a day is past any reason to wait.
  if (duration->count() < 1 || *duration > std::chrono::hours(24)) {
    return InvalidArgument("--" + std::string(name) + ": must be between 1ms and 24h, got " + flags.Get(name));
  }
  return *duration;
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
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
             c == '_' || c == '*';
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
  static const std::array<FlagSpec, 11> kSpecs = {{
      {"admin-max-connections", "N", "256",
       "open admin connections; at the cap the oldest idle one is closed, else the new one gets 503"},
      {"admin-max-request-line", "BYTES", "8KiB", "longest request line (method, path, query): longer is 414"},
      {"admin-max-header-bytes", "BYTES", "32KiB", "largest request header block: larger is 431"},
      {"admin-max-headers", "N", "100", "most request header lines: more is 431"},
      {"admin-header-timeout", "DURATION", "10s", "a request head must arrive within this: later is 408"},
      {"admin-body-timeout", "DURATION", "60s", "a request body must arrive within this after its head: later is 408"},
      {"admin-idle-timeout", "DURATION", "60s", "a keep-alive admin connection idle this long is closed"},
      {"admin-write-timeout", "DURATION", "30s", "an answer the client stops reading for this long is dropped"},
      {"admin-max-body-buffer", "BYTES", "64MiB",
       "request bodies being received at once, all connections: a POST over it gets 503"},
      {"admin-ui-queue", "N", "16", "trace-view requests waiting for its thread: more get 503"},
      {"admin-allowed-hosts", "NAMES", "",
       "Host names the trace view and POST routes answer besides IP addresses and localhost (comma-separated; "
       ".example.com for a domain; * for any): others get 421"},
  }};
  return kSpecs;
}

Result<AdminLimits> AdminLimitsFromFlags(const ParsedFlags& flags) {
  AdminLimits limits;
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

  auto connections = CountFlag(flags, "admin-max-connections", 1, 65536);
  if (!connections.ok()) return connections.error();
  limits.max_connections = *connections;
  // At least what an ordinary request line or header block needs; at most what keeps a connection small.
  auto request_line = BytesFlag(flags, "admin-max-request-line", 256, kMiB);
  if (!request_line.ok()) return request_line.error();
  limits.max_request_line_bytes = *request_line;
  auto header_bytes = BytesFlag(flags, "admin-max-header-bytes", 1024, 16 * kMiB);
  if (!header_bytes.ok()) return header_bytes.error();
  limits.max_header_bytes = *header_bytes;
  auto headers = CountFlag(flags, "admin-max-headers", 1, 10000);
  if (!headers.ok()) return headers.error();
  limits.max_headers = *headers;

  auto header_timeout = DurationFlag(flags, "admin-header-timeout");
  if (!header_timeout.ok()) return header_timeout.error();
  limits.header_timeout = *header_timeout;
  auto body_timeout = DurationFlag(flags, "admin-body-timeout");
  if (!body_timeout.ok()) return body_timeout.error();
  limits.body_timeout = *body_timeout;
  auto idle_timeout = DurationFlag(flags, "admin-idle-timeout");
  if (!idle_timeout.ok()) return idle_timeout.error();
  limits.idle_timeout = *idle_timeout;
  auto write_timeout = DurationFlag(flags, "admin-write-timeout");
  if (!write_timeout.ok()) return write_timeout.error();
  limits.write_timeout = *write_timeout;

  auto body_buffer = BytesFlag(flags, "admin-max-body-buffer", kMiB, 16 * kGiB);
  if (!body_buffer.ok()) return body_buffer.error();
  limits.max_body_buffer_bytes = *body_buffer;
  auto ui_queue = CountFlag(flags, "admin-ui-queue", 1, 4096);
  if (!ui_queue.ok()) return ui_queue.error();
  limits.max_ui_queue = *ui_queue;
  auto hosts = HostsFlag(flags, "admin-allowed-hosts");
  if (!hosts.ok()) return hosts.error();
  limits.allowed_hosts = std::move(*hosts);
  return limits;
}

}  // namespace sparktrace::admin
