#pragma once
// How event-log files are read. An aggregate with defaults; EventLogScanner::Create validates it.

#include <cstddef>
#include <cstdint>

namespace sparktrace::listener::eventlog {

struct FollowOptions {
  // Longer lines are dropped and counted as oversized. Spark's largest real lines (EnvironmentUpdate,
  // SQL plans) are a few MiB; the bound only exists so that a corrupt file cannot exhaust memory.
  std::size_t max_line_bytes = std::size_t{64} << 20;
  // File bytes per read() call.
  std::size_t read_chunk_bytes = std::size_t{64} << 10;
  // File bytes one log may read in one poll, so that catching up on a large log does not hold up the
  // others; Poll() reports when something is left for the next poll.
  std::uint64_t max_bytes_per_poll = std::uint64_t{16} << 20;
};

}  // namespace sparktrace::listener::eventlog
