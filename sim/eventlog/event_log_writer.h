#pragma once
// EventLogWriter: writes event-log lines to disk the way Spark's EventLogFileWriters do, so that
// sparktrace's reader (and Spark's History Server) can follow the log while it grows:
//
//   single file  DIR/<base>[.zstd].inprogress, renamed to DIR/<base>[.zstd] by Close();
//   rolling      DIR/eventlog_v2_<base>/events_<n>_<base>[.zstd] (n from 1; a new file before a line
//                that would take the current one past rolling_max_bytes of uncompressed JSON) and
//                an empty appstatus_<base>.inprogress, renamed to appstatus_<base> by Close().
//
// <base> is the application id sanitised as Spark does. Lines are buffered (Spark's 100 KiB
// writer buffer) and reach the file when a flushing event is written or the buffer fills; with
// zstd every flush closes a frame, as zstd-jni does for Spark, so a reader sees whole frames.
// A writer destroyed without Close() leaves the log in progress, like a driver that died.
//
// Threads: not synchronised; one thread (or a caller holding a lock) uses a writer.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::sim::eventlog {

enum class LogCodec : std::uint8_t { kPlain, kZstd };

// "plain"/"none" or "zstd".
Result<LogCodec> ParseLogCodec(std::string_view name);

struct WriterOptions {
  std::string directory;  // must exist
  std::string app_id;
  LogCodec codec = LogCodec::kPlain;
  std::uint64_t rolling_max_bytes = 0;  // 0: single file
  std::size_t buffer_bytes = std::size_t{100} << 10;
  int zstd_level = 1;  // spark.io.compression.zstd.level
};

// Spark's name base for an application id: ' ', ':', '/' → '-'; '.', '$', '{', '}', '\'', '"' →
// '_'; lower-cased.
std::string SanitizedLogBase(std::string_view app_id);

class EventLogWriter {
 public:
  // Creates the in-progress file (and for rolling, the directory and status marker).
  static Result<std::unique_ptr<EventLogWriter>> Open(const WriterOptions& options);

  EventLogWriter(const EventLogWriter&) = delete;
  EventLogWriter& operator=(const EventLogWriter&) = delete;
  ~EventLogWriter();

  // Appends `line` and '\n'; with `flush`, everything buffered reaches the file.
  Result<void> Write(std::string_view line, bool flush);
  Result<void> Flush();
  // Flushes, ends the stream and gives the log its final name. Idempotent.
  Result<void> Close();

  // The log's path as a reader would name it once complete: the file, or the rolling directory.
  const std::string& final_path() const { return final_path_; }
  // The file being written now.
  const std::string& current_file() const { return current_file_; }

 private:
  // Only Open builds a writer (make_unique needs a public constructor, hence the tag).
  struct OpenTag {
    explicit OpenTag() = default;
  };

 public:
  EventLogWriter(const WriterOptions& options, OpenTag);

 private:
  struct ZstdState;
  Result<void> OpenFile(const std::string& path);
  Result<void> CloseFile();
  Result<void> WriteBytes(std::string_view bytes);
  // Sends the buffer to the file; `end_frame` closes the zstd frame.
  Result<void> Drain(bool end_frame);

  const WriterOptions options_;
  std::string base_;
  std::string final_path_;
  std::string current_file_;
  std::string rolling_dir_;
  int fd_ = -1;
  std::uint64_t file_index_ = 0;
  std::uint64_t file_uncompressed_bytes_ = 0;
  std::string buffer_;
  std::unique_ptr<ZstdState> zstd_;
  bool frame_open_ = false;  // the zstd stream holds data of a frame not yet ended
  bool closed_ = false;
};

}  // namespace sparktrace::sim::eventlog
