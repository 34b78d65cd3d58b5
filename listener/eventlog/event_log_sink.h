#pragma once
// The output of the event-log file feed: complete JSON lines of each application's log, in file order,
// each exactly once per generation of the log.

#include <cstdint>
#include <string>
#include <string_view>

namespace sparktrace::listener::eventlog {

enum class LogLayout { kSingleFile, kRolling };

struct LogIdentity {
  // Stable key: the log's path without ".inprogress" — the file (`<dir>/<base>[.<codec>]`) or the rolling
  // directory (`<dir>/eventlog_v2_<base>`). It does not change when the file is renamed on completion.
  std::string id;
  // Spark's name base: the sanitised application id (plus `_<attempt>`), e.g. "local-1642039451826".
  // Only a hint: the true application id is in the log's SparkListenerApplicationStart.
  std::string name;
  std::string directory;  // the --event-log-dir it was found in
  LogLayout layout = LogLayout::kSingleFile;
};

struct LinePosition {
  std::string_view file_path;    // the file the line was read from (its name at the time)
  std::uint64_t file_index;      // rolling: <n> of events_<n>_<base>; 0 for single-file logs
  std::uint64_t decoded_offset;  // where the line starts in that file's decompressed bytes
  std::uint64_t line_number;     // 1, 2, ... over the lines delivered for this generation of the log
  std::uint64_t generation;      // 0, then +1 for every restart
};

enum class LineVerdict {
  kAccepted,
  kCorrupt,  // not an event (e.g. unparseable JSON): counted in LogCounters::corrupt_lines
};

// Called on the thread that calls EventLogScanner::Poll(), never concurrently. Implementations must not
// call back into the scanner.
class EventLogSink {
 public:
  virtual ~EventLogSink() = default;

  // One complete line, without its '\n'. `line` and `position.file_path` are valid only during the call.
  virtual LineVerdict OnLine(const LogIdentity& log, std::string_view line, const LinePosition& position) = 0;

  // The log was replaced or truncated (the driver restarted or rewrote it): the lines that follow start
  // again at the log's beginning, under `generation`; what came before belongs to an older run.
  virtual void OnLogRestarted(const LogIdentity& log, std::uint64_t generation, std::string_view reason) = 0;

  // The application finished writing (final rename, or the appstatus marker lost ".inprogress") and
  // every line has been delivered.
  virtual void OnLogCompleted(const LogIdentity& log) = 0;
};

}  // namespace sparktrace::listener::eventlog
