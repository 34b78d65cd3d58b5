#pragma once
// The admin HTTP server's bounds (docs/admin-limits.md): every buffer, timeout, count and queue that
// a client of the admin port can make the process spend, with the defaults `sparktrace proxy` and
// `sparktrace ui` use. An aggregate with defaults; admin/admin_flags.h fills and validates it from
// the --admin-* flags. Immutable once the server starts.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace sparktrace::admin {

struct AdminLimits {
  // The request line ("GET /path?query HTTP/1.1" and its CRLF), counted while it arrives: a longer
  // one (or that many bytes without a newline) is answered 414 and the connection closed.
  std::size_t max_request_line_bytes = std::size_t{8} * 1024;
  // The header lines after the request line, CRLFs and the blank line included: more is 431.
  std::size_t max_header_bytes = std::size_t{32} * 1024;
  // How many header lines: more is 431.
  std::size_t max_headers = 100;

  // From a connection's first byte of a request (or its accept, for the first request) until the
  // blank line that ends the head: later is 408 and close (slowloris).
  std::chrono::milliseconds header_timeout{10'000};
  // From the end of the head until the last byte of the body: later is 408 and close.
  std::chrono::milliseconds body_timeout{60'000};
  // A body must keep arriving: no byte of it for this long (from the end of the head, or from its
  // last byte) is 408 and close. A client that sends a head and then nothing holds its connection
  // this long, not the whole body_timeout.
  std::chrono::milliseconds body_idle_timeout{5'000};
  // A keep-alive connection that starts no new request for this long is closed.
  std::chrono::milliseconds idle_timeout{60'000};
  // An answer that the client does not read: closed when no byte of it could be sent for this long.
  std::chrono::milliseconds write_timeout{30'000};

  // Open admin connections. At the cap a new connection closes the one that loses least by it (the
  // oldest idle one, else the oldest still sending its head, else the oldest still sending its body);
  // when every one is being answered, the new one may still ask for a probe (probe_connections).
  std::size_t max_connections = 256;
  // Open connections from one peer address: at its share, a new connection from that peer closes
  // that peer's own connection that loses least, else it may only ask for a probe. So one client
  // (one pod) cannot hold the whole table.
  std::size_t max_connections_per_peer = 64;
  // Connections past max_connections (or past the peer's share) for GET /healthz and /readyz alone,
  // answered and closed: the kubelet's probes never wait for a slot that another request holds.
  // Anything else asked on one is answered 503. When these are full too, the oldest that has not
  // finished its head is closed for the new one.
  std::size_t probe_connections = 8;
  // Request bodies being received, all connections together (their declared lengths): a POST that
  // would pass it gets 503 with Retry-After before its body is read. Never below the largest route's
  // own body limit, so that one body of that size can always come in.
  std::size_t max_body_buffer_bytes = std::size_t{64} << 20;
  // Trace-view requests waiting for the UI worker thread (one runs at a time): more get 503 with
  // Retry-After, so that a burst of large attempts neither queues without bound nor delays probes.
  std::size_t max_ui_queue = 16;

  // Host names (besides IP literals, "localhost" and the bound host) that the trace view and the POST
  // routes answer to; others get 421 (DNS rebinding). "*" allows every name; ".example.com" allows
  // example.com and its subdomains. Probes and /metrics answer any Host.
  std::vector<std::string> allowed_hosts;
};

}  // namespace sparktrace::admin
