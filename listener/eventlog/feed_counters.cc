#include "listener/eventlog/feed_counters.h"

namespace sparktrace::listener::eventlog {

LogCounters& LogCounters::operator+=(const LogCounters& other) {
  bytes_read += other.bytes_read;
  decoded_bytes += other.decoded_bytes;
  lines += other.lines;
  corrupt_lines += other.corrupt_lines;
  oversized_lines += other.oversized_lines;
  truncated_lines += other.truncated_lines;
  decode_errors += other.decode_errors;
  read_errors += other.read_errors;
  missing_files += other.missing_files;
  restarts += other.restarts;
  return *this;
}

}  // namespace sparktrace::listener::eventlog
