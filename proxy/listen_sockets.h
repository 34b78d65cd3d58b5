#pragma once
// The relay's listening sockets: one per worker, all bound to the same address with
// SO_REUSEPORT so that the kernel spreads connections over the workers.

#include <string>
#include <vector>

#include "common/result.h"

namespace sparktrace::proxy {

struct ListenSockets {
  std::vector<int> fds;  // the caller owns them
  std::string address;   // "127.0.0.1:43121": the port actually bound
};

// `listen` is "host:port" or "[v6]:port"; port 0 picks a free one. Fails when another socket
// already has the address, even one that also uses SO_REUSEPORT: a second proxy on the same
// port must fail to start, not silently share the traffic.
Result<ListenSockets> OpenListenSockets(const std::string& listen, int count);

// Splits "host:port" / "[v6]:port" into its parts ("[v6]" loses its brackets).
bool SplitHostPort(const std::string& address, std::string* host, int* port);

}  // namespace sparktrace::proxy
