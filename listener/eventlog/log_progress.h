#pragma once
// The part of following a log that single-file and rolling logs share: its status and counters, the
// line numbering within a generation, and telling the sink (and the log) about lines, restarts and
// completion. Owned by a follower, used on its thread.

#include <cstdint>
#include <string>
#include <string_view>

#include "listener/eventlog/event_log_sink.h"
#include "listener/eventlog/log_follower.h"

namespace sparktrace::listener::eventlog {

class LogProgress {
 public:
  explicit LogProgress(LogIdentity identity);

  const LogStatus& status() const { return status_; }
  LogState state() const { return status_.state; }
  LogCounters& counters() { return status_.counters; }

  // A complete line read from `file_path`: blank lines are counted as corrupt and skipped, the rest go
  // to the sink with their position.
  void Deliver(EventLogSink& sink, std::string_view line, std::uint64_t decoded_offset,
               std::string_view file_path, std::uint64_t file_index);

  // The log starts over from its beginning (driver restarted or rewrote it).
  void Restart(EventLogSink& sink, const std::string& reason);

  // Everything of a finished application was delivered.
  void Complete(EventLogSink& sink);

  // Logs a warning (unless it is the problem already reported last) and remembers it as the status'
  // problem.
  void ReportProblem(std::string problem);
  void MarkFailed(std::string problem);
  void MarkUnsupported(std::string problem);

 private:
  LogStatus status_;
  std::uint64_t line_number_ = 0;
};

}  // namespace sparktrace::listener::eventlog
