#pragma once
// Whom the trace view and the POST routes answer: the Host a request names (DNS rebinding: a page of
// another site whose name now resolves to this address sends that name) and, for writes, the Origin a
// browser adds (a page of another site posting to this port). Probes and /metrics do not ask: the
// kubelet and Prometheus name the pod's IP. Pure; immutable after Create; thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::admin {

class HostPolicy {
 public:
  // Allowed: IP literals (a browser that typed an address is not being rebound), "localhost", the
  // host the server is bound to, and `allowed_names` (exact, case-insensitive; ".example.com" matches
  // example.com and its subdomains; "*" matches every Host).
  static HostPolicy Create(std::string_view bound_host, const std::vector<std::string>& allowed_names);

  // `host_header` is the Host value ("name", "name:port", "1.2.3.4:9464", "[::1]:9464"); a malformed
  // one is not allowed. (A request without Host, HTTP/1.0 and never a browser, is not asked about.)
  bool Allows(std::string_view host_header) const;

 private:
  bool any_ = false;
  std::vector<std::string> names_;     // lower case, no trailing dot
  std::vector<std::string> suffixes_;  // ".example.com"
};

// Whether a browser's Origin ("http://127.0.0.1:9464") names the same host and port as the request's
// Host; a missing port is the scheme's default on both sides (a TLS ingress in front sends
// "https://traces.example.com" with Host "traces.example.com"). "null" and other schemes are never
// the same origin.
bool IsSameOrigin(std::string_view origin, std::string_view host_header);

}  // namespace sparktrace::admin
