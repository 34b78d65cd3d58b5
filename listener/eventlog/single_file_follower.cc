#include "listener/eventlog/single_file_follower.h"

#include <filesystem>

#include "listener/eventlog/log_file_name.h"

namespace sparktrace::listener::eventlog {

SingleFileFollower::SingleFileFollower(LogIdentity identity, std::string final_path, Codec codec,
                                       const FollowOptions& options)
    : final_path_(std::move(final_path)),
      in_progress_path_(final_path_ + std::string(kInProgressSuffix)),
      final_name_(std::filesystem::path(final_path_).filename().string()),
      in_progress_name_(final_name_ + std::string(kInProgressSuffix)),
      codec_(codec),
      options_(options),
      progress_(std::move(identity)) {
  StartOver();
}

void SingleFileFollower::StartOver() {
  Result<std::unique_ptr<ChunkDecoder>> decoder = MakeChunkDecoder(codec_);
  if (!decoder.ok()) {
    tail_.reset();
    progress_.MarkUnsupported(decoder.error().message);
    return;
  }
  tail_ = std::make_unique<FileTail>(std::move(decoder).value(), options_);
}

bool SingleFileFollower::Poll(EventLogSink& sink) {
  if (!tail_) return false;  // unsupported codec

  // The in-progress name first: if both exist, a new run is writing while the old final file is still
  // there (spark.eventLog.overwrite), and the new run is what the driver does now. If it was renamed
  // between the two opens, the second finds it.
  const std::string* path = &in_progress_path_;
  const std::string* name = &in_progress_name_;
  Result<UniqueFd> fd = OpenForReading(in_progress_path_);
  if (!fd.ok() && fd.error().code == ErrorCode::kNotFound) {
    path = &final_path_;
    name = &final_name_;
    fd = OpenForReading(final_path_);
  }
  if (!fd.ok()) {
    // Not there at all: the scanner decides whether the log is gone.
    if (fd.error().code != ErrorCode::kNotFound) {
      ++progress_.counters().read_errors;
      progress_.ReportProblem(fd.error().message);
    }
    return false;
  }
  // Spark renames only after closing the stream: a file opened under its final name is complete.
  const bool finished_writing = path == &final_path_;

  const auto consume = [&](std::string_view line, std::uint64_t offset) {
    progress_.Deliver(sink, line, offset, *path, 0);
  };
  bool restarted = false;
  for (;;) {
    const FileTail::Outcome outcome = tail_->ReadNew(fd->get(), progress_.counters(), consume);
    switch (outcome) {
      case FileTail::Outcome::kReplaced:
      case FileTail::Outcome::kShrunk: {
        if (restarted) return false;  // changing under our feet: look again next poll
        restarted = true;
        StartOver();
        progress_.Restart(
            sink, *name + (outcome == FileTail::Outcome::kReplaced ? " was replaced by another file"
                                                                   : " shrank (truncated or rewritten)"));
        continue;
      }
      case FileTail::Outcome::kBudgetExhausted:
        return true;
      case FileTail::Outcome::kReadFailed:
        progress_.ReportProblem(*name + ": " + tail_->error());
        return false;
      case FileTail::Outcome::kDecodeFailed:
        if (progress_.state() != LogState::kFailed) {
          progress_.MarkFailed(*name + ": " + tail_->error() + " (rest of the file skipped)");
        }
        return false;
      case FileTail::Outcome::kCaughtUp:
        if (finished_writing && progress_.state() != LogState::kComplete) {
          if (std::string dropped = tail_->Finish(progress_.counters(), consume); !dropped.empty()) {
            progress_.ReportProblem(*name + ": " + dropped);
          }
          progress_.Complete(sink);
        }
        return false;
    }
  }
}

}  // namespace sparktrace::listener::eventlog
