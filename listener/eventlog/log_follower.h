#pragma once
// One application's event log, single file or rolling directory, followed as it grows.

#include <cstdint>
#include <string>
#include <string_view>

#include "listener/eventlog/event_log_sink.h"
#include "listener/eventlog/feed_counters.h"

namespace sparktrace::listener::eventlog {

enum class LogState {
  kInProgress,   // being followed; more may come
  kComplete,     // the application finished writing and everything was delivered
  kFailed,       // single file whose stream is corrupt: waits for the file to be replaced
  kUnsupported,  // its codec cannot be decoded (lzf, unknown suffix): never read
};

std::string_view LogStateName(LogState state);

struct LogStatus {
  LogIdentity identity;
  LogState state = LogState::kInProgress;
  std::uint64_t generation = 0;
  std::string problem;  // the latest problem (decode error, restart reason, unsupported codec); may be empty
  LogCounters counters;
};

// Not thread-safe: one thread polls, and reads the status between polls.
class LogFollower {
 public:
  virtual ~LogFollower() = default;

  // Reads what is new since the last call and hands complete lines to `sink`. Opens at most two
  // descriptors (a directory and a file) and closes them before returning. Returns true when it
  // stopped at FollowOptions::max_bytes_per_poll with more to read.
  virtual bool Poll(EventLogSink& sink) = 0;

  virtual const LogStatus& status() const = 0;
};

}  // namespace sparktrace::listener::eventlog
