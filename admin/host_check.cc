#include "admin/host_check.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>

#include "admin/http_parser.h"

namespace sparktrace::admin {
namespace {

struct Authority {
  std::string host;  // lower case, without brackets or a trailing dot
  std::optional<unsigned> port;
  bool ip_literal = false;
};

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return lower;
}

std::optional<unsigned> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  unsigned port = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  if (port > 65535) return std::nullopt;
  return port;
}

// "name", "name:port", "1.2.3.4:port", "[v6]:port" (RFC 9110 7.2); nullopt when malformed.
std::optional<Authority> ParseAuthority(std::string_view text) {
  Authority authority;
  std::string_view port_text;
  bool has_port = false;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string address(text.substr(1, close - 1));
    in6_addr parsed{};
    if (inet_pton(AF_INET6, address.c_str(), &parsed) != 1) return std::nullopt;
    authority.host = Lower(address);
    authority.ip_literal = true;
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port_text = rest.substr(1);
      has_port = true;
    }
  } else {
    const std::size_t colon = text.find(':');
    std::string_view name = text.substr(0, colon);
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
      has_port = true;
    }
    if (name.ends_with('.')) name.remove_suffix(1);  // "localhost." is localhost
    const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
             c == '_';
    });
    if (!valid) return std::nullopt;
    authority.host = Lower(name);
    in_addr parsed{};
    authority.ip_literal = inet_pton(AF_INET, authority.host.c_str(), &parsed) == 1;
  }
  if (has_port) {
    authority.port = ParsePort(port_text);
    if (!authority.port) return std::nullopt;
  }
  return authority;
}

}  // namespace

HostPolicy HostPolicy::Create(std::string_view bound_host, const std::vector<std::string>& allowed_names) {
  HostPolicy policy;
  policy.names_.emplace_back("localhost");
  if (auto bound = ParseAuthority(bound_host); bound && !bound->ip_literal) policy.names_.push_back(bound->host);
  for (const std::string& name : allowed_names) {
    if (name == "*") {
      policy.any_ = true;
    } else if (name.starts_with('.') && name.size() > 1) {
      policy.suffixes_.push_back(Lower(name));
    } else if (auto parsed = ParseAuthority(name)) {
      policy.names_.push_back(parsed->host);
    }
  }
  return policy;
}

bool HostPolicy::Allows(std::string_view host_header) const {
  if (any_) return true;
  const auto authority = ParseAuthority(host_header);
  if (!authority) return false;
  if (authority->ip_literal) return true;
  if (std::find(names_.begin(), names_.end(), authority->host) != names_.end()) return true;
  return std::any_of(suffixes_.begin(), suffixes_.end(), [&host = authority->host](const std::string& suffix) {
    return host.ends_with(suffix) || host == std::string_view(suffix).substr(1);
  });
}

bool IsSameOrigin(std::string_view origin, std::string_view host_header) {
  unsigned default_port = 0;
  if (origin.size() > 7 && EqualsIgnoreCase(origin.substr(0, 7), "http://")) {
    default_port = 80;
    origin.remove_prefix(7);
  } else if (origin.size() > 8 && EqualsIgnoreCase(origin.substr(0, 8), "https://")) {
    default_port = 443;
    origin.remove_prefix(8);
  } else {
    return false;  // "null" (a sandboxed or file page), another scheme, or garbage
  }
  const auto from = ParseAuthority(origin);
  const auto to = ParseAuthority(host_header);
  return from && to && from->host == to->host && from->port.value_or(default_port) == to->port.value_or(default_port);
}

}  // namespace sparktrace::admin
