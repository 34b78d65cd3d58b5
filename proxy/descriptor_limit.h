#pragma once
// File descriptors: the soft RLIMIT_NOFILE is raised to the hard one at start (a container's soft
// limit is often 1024 while the hard one is 1048576), and the client connection cap is fitted
// under what remains, so that a flood of connections is refused by the cap, counted, instead of
// running the process out of descriptors (where nothing, probes included, can be accepted).

#include <cstdint>

namespace sparktrace::proxy {

struct DescriptorLimit {
  std::uint64_t before = 0;  // the soft limit as found
  std::uint64_t now = 0;     // after raising it (unchanged when it could not be raised)
};

// Raises the soft limit to the hard one. Never fails: on error, reports the limit unchanged.
DescriptorLimit RaiseDescriptorLimit();

// The client connections that fit in `descriptors`, leaving `reserved` for everything else (upstream
// connections, listeners, the admin port, the span store, event logs).
std::int64_t ConnectionsThatFit(std::uint64_t descriptors, std::uint64_t reserved, std::int64_t wanted);

}  // namespace sparktrace::proxy
