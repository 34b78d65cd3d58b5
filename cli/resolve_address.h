#pragma once
// HOST:PORT to the first socket address it resolves to, for the demo's own sockets: the probe of a
// listen address (cli/demo/port_probe.h) and the Airflow task's reports (cli/demo/task_report.h).
// Threads: any (getaddrinfo may block on name resolution).

#include <netdb.h>

#include <memory>
#include <string>

#include "common/result.h"

namespace sparktrace::cli {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};
using ResolvedAddress = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// "127.0.0.1:15002", "[::1]:15002" (brackets stripped), "localhost:15002"; a stream socket's
// addresses, `ai_flags` added to AI_NUMERICSERV (AI_PASSIVE to bind). Never null when ok. Errors
// (kInvalidArgument) name the address: one without a port, or one that does not resolve.
Result<ResolvedAddress> ResolveHostPort(const std::string& host_port, int ai_flags);

}  // namespace sparktrace::cli
