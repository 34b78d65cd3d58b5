#pragma once
// What the event-log file feed did, per log and in total. Plain values, all monotonic except the
// gauges marked below; snapshot copies, so they can be handed to another thread.

#include <cstdint>

namespace sparktrace::listener::eventlog {

struct LogCounters {
  std::uint64_t bytes_read = 0;       // file bytes read (compressed, for compressed logs)
  std::uint64_t decoded_bytes = 0;    // bytes after decompression
  std::uint64_t lines = 0;            // complete lines handed to the sink
  std::uint64_t corrupt_lines = 0;    // blank lines (skipped) and lines the sink reported as corrupt
  std::uint64_t oversized_lines = 0;  // longer than FollowOptions::max_line_bytes: dropped
  std::uint64_t truncated_lines = 0;  // last line of a finished file cut inside a compressed frame: dropped
  std::uint64_t decode_errors = 0;    // files whose compressed stream was corrupt or cut inside a frame
  std::uint64_t read_errors = 0;      // open/stat/read failures other than "not there"
  std::uint64_t missing_files = 0;    // rolling: events files that vanished before they were read to the end
  std::uint64_t restarts = 0;         // the log was replaced or shrank and is read again from its start

  LogCounters& operator+=(const LogCounters& other);
};

struct FeedCounters {
  LogCounters totals;                  // over every log, including forgotten ones
  std::uint64_t logs_discovered = 0;   // distinct logs ever found
  std::uint64_t logs_forgotten = 0;    // logs whose files disappeared from their directory
  std::uint64_t directory_errors = 0;  // failed listings of an --event-log-dir (e.g. not there yet)
  std::uint64_t logs_in_progress = 0;  // gauge: being followed
  std::uint64_t logs_complete = 0;     // gauge: read to the end of a finished application
  std::uint64_t logs_failed = 0;       // gauge: corrupt stream; waits for the file to be replaced
  std::uint64_t logs_unsupported = 0;  // gauge: codec that cannot be decoded (lzf, unknown suffix)
};

}  // namespace sparktrace::listener::eventlog
