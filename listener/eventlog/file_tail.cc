#include "listener/eventlog/file_tail.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace sparktrace::listener::eventlog {

FileTail::FileTail(std::unique_ptr<ChunkDecoder> decoder, const FollowOptions& options)
    : decoder_(std::move(decoder)), lines_(options.max_line_bytes), options_(options) {}

FileTail::Outcome FileTail::ReadNew(int fd, LogCounters& counters, const LineConsumer& consume) {
  struct stat status {};
  if (fstat(fd, &status) != 0) {
    error_ = std::string("fstat: ") + std::strerror(errno);
    ++counters.read_errors;
    return Outcome::kReadFailed;
  }
  const FileIdentity identity = IdentityOf(status);
  if (identity_ && *identity_ != identity) return Outcome::kReplaced;
  identity_ = identity;
  if (static_cast<std::uint64_t>(status.st_size) < consumed_bytes_) return Outcome::kShrunk;
  if (failed_) return Outcome::kDecodeFailed;

  if (static_cast<std::uint64_t>(status.st_size) == consumed_bytes_) {
    // Idle: a good moment to give back buffers; the next growth recreates them.
    decoder_->ReleaseIdleMemory();
    lines_.ReleaseIdleMemory();
    return Outcome::kCaughtUp;
  }

  std::vector<char> buffer(options_.read_chunk_bytes);
  std::uint64_t read_this_call = 0;
  const auto on_decoded = [&](std::string_view decoded) {
    counters.decoded_bytes += decoded.size();
    counters.oversized_lines += lines_.Append(decoded, consume);
  };
  while (read_this_call < options_.max_bytes_per_poll) {
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>(buffer.size(), options_.max_bytes_per_poll - read_this_call));
    // The size from fstat is only a hint: a live file may grow while it is read, so read to EOF.
    const ssize_t got = pread(fd, buffer.data(), want, static_cast<off_t>(consumed_bytes_));
    if (got < 0) {
      if (errno == EINTR) continue;
      error_ = std::string("read: ") + std::strerror(errno);
      ++counters.read_errors;
      return Outcome::kReadFailed;
    }
    if (got == 0) return Outcome::kCaughtUp;
    const auto got_bytes = static_cast<std::size_t>(got);
    consumed_bytes_ += got_bytes;
    read_this_call += got_bytes;
    counters.bytes_read += got_bytes;
    Result<void> decoded = decoder_->Decode(std::string_view(buffer.data(), got_bytes), on_decoded);
    if (!decoded.ok()) {
      // Nothing after a corrupt spot can be trusted, and re-reading would not help: stop here.
      failed_ = true;
      error_ = decoded.error().message;
      ++counters.decode_errors;
      return Outcome::kDecodeFailed;
    }
  }
  return Outcome::kBudgetExhausted;
}

std::string FileTail::Finish(LogCounters& counters, const LineConsumer& consume) {
  std::string dropped;
  if (failed_) {
    // The unfinished line is part of what the decode error already counts.
    lines_.Finish([](std::string_view, std::uint64_t) {});
  } else if (decoder_->HoldsIncompleteUnit()) {
    ++counters.decode_errors;
    dropped = "the file ends inside a compressed frame/block";
    lines_.Finish([&](std::string_view line, std::uint64_t) {
      ++counters.truncated_lines;
      dropped += " and its last line is cut (" + std::to_string(line.size()) + " bytes dropped)";
    });
  } else {
    lines_.Finish(consume);
  }
  decoder_->ReleaseIdleMemory();
  lines_.ReleaseIdleMemory();
  return dropped;
}

}  // namespace sparktrace::listener::eventlog
