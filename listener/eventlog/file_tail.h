#pragma once
// Follows one physical event-log file: remembers which file it is (device, inode) and how many of its
// bytes were consumed, and on each call reads only what was appended since — never a byte twice —
// through the file's decoder and a line assembler. Knows nothing about names, renames or rolling;
// the followers open the file and decide what a replaced or shrunk file means. Owned and used by one
// follower, on the polling thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "listener/eventlog/chunk_decoder.h"
#include "listener/eventlog/directory_listing.h"
#include "listener/eventlog/feed_counters.h"
#include "listener/eventlog/follow_options.h"
#include "listener/eventlog/line_assembler.h"

namespace sparktrace::listener::eventlog {

class FileTail {
 public:
  using LineConsumer = LineAssembler::LineHandler;

  enum class Outcome {
    kCaughtUp,         // read to the current end of the file
    kBudgetExhausted,  // stopped at FollowOptions::max_bytes_per_poll; more is waiting
    kReplaced,         // `fd` is a different file than before: nothing read
    kShrunk,           // the file is now shorter than what was consumed: nothing read
    kDecodeFailed,     // the stream is corrupt (now or earlier): nothing more will be read from it
    kReadFailed,       // fstat/read failed; error() says why; a later call retries
  };

  FileTail(std::unique_ptr<ChunkDecoder> decoder, const FollowOptions& options);

  // Reads what is new in `fd`, an open descriptor of this file; complete lines go to `consume`.
  // The first call adopts the file's identity.
  Outcome ReadNew(int fd, LogCounters& counters, const LineConsumer& consume);

  // The file will not grow any more and was read to its end. An unfinished last line is a line all the
  // same (it goes to `consume`), unless the stream ends inside a compressed frame/block: then it is a
  // fragment, dropped and counted in truncated_lines, and the cut frame counts in decode_errors.
  // Returns a description of what was dropped, empty if nothing.
  std::string Finish(LogCounters& counters, const LineConsumer& consume);

  const std::string& error() const { return error_; }
  bool failed() const { return failed_; }
  std::uint64_t consumed_bytes() const { return consumed_bytes_; }

 private:
  std::unique_ptr<ChunkDecoder> decoder_;
  LineAssembler lines_;
  FollowOptions options_;
  std::optional<FileIdentity> identity_;
  std::uint64_t consumed_bytes_ = 0;  // file offset of the next byte to read
  bool failed_ = false;
  std::string error_;
};

}  // namespace sparktrace::listener::eventlog
