#pragma once
// Whether a listen address is already taken, asked before the demo's proxy tries it, so that the
// demo's default port (15002, where Spark Connect clients look) can give way to a free one instead
// of failing when a real Spark Connect server, or another demo, already listens there.
//
// The answer can be stale by the time the proxy binds (another process may take the port in
// between); the proxy then fails to start and the demo reports it. Threads: any.

#include <string>

#include "common/result.h"

namespace sparktrace::cli::demo {

// True when something listens on HOST:PORT ("127.0.0.1:15002", "[::1]:15002", "localhost:15002").
// The probe binds a socket with SO_REUSEADDR and without SO_REUSEPORT: the first ignores
// connections of an earlier listener still in TIME_WAIT, the second makes a listener that shares
// ports (as gRPC servers do by default) count as taken. Errors: an address that does not parse or
// resolve, or a bind that fails for another reason than the port being in use.
Result<bool> ListenAddressInUse(const std::string& host_port);

}  // namespace sparktrace::cli::demo
