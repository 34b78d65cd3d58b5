#include "listener/eventlog/rolling_log_follower.h"

#include <algorithm>
#include <vector>

#include "listener/eventlog/directory_listing.h"
#include "listener/eventlog/log_file_name.h"

namespace sparktrace::listener::eventlog {

struct RollingLogFollower::Listing {
  struct EventsFile {
    std::uint64_t index;
    bool compacted;
    std::string name;
    Codec codec;
  };
  std::vector<EventsFile> files;  // by index; at the same index the original before a `.compact` one
  AppStatusMarker status = AppStatusMarker::kInProgress;  // a missing marker means not finished either

  // The first file after `index`, or null.
  const EventsFile* After(std::uint64_t index) const {
    const auto found =
        std::find_if(files.begin(), files.end(), [&](const EventsFile& f) { return f.index > index; });
    return found == files.end() ? nullptr : &*found;
  }
  bool Has(std::uint64_t index) const {
    return std::any_of(files.begin(), files.end(), [&](const EventsFile& f) { return f.index == index; });
  }
  std::uint64_t HighestIndex() const { return files.empty() ? 0 : files.back().index; }
};

RollingLogFollower::RollingLogFollower(LogIdentity identity, std::string directory_path,
                                       const FollowOptions& options)
    : directory_path_(std::move(directory_path)), options_(options), progress_(std::move(identity)) {}

void RollingLogFollower::StartOver(EventLogSink& sink, const std::string& reason) {
  current_.reset();
  last_finished_index_ = 0;
  progress_.Restart(sink, reason);
}

bool RollingLogFollower::OpenNext(const Listing& listing, std::uint64_t after_index) {
  const Listing::EventsFile* next = listing.After(after_index);
  if (next == nullptr) return false;
  Result<std::unique_ptr<ChunkDecoder>> decoder = MakeChunkDecoder(next->codec);
  if (!decoder.ok()) {
    // All files of one log share the codec, so this is the whole log; leave it alone.
    progress_.MarkUnsupported(next->name + ": " + decoder.error().message);
    return false;
  }
  current_.emplace(CurrentFile{next->index, next->name, directory_path_ + "/" + next->name,
                               std::make_unique<FileTail>(std::move(decoder).value(), options_), false});
  return true;
}

void RollingLogFollower::FinishCurrent(EventLogSink& sink) {
  const auto consume = [&](std::string_view line, std::uint64_t offset) {
    progress_.Deliver(sink, line, offset, current_->path, current_->index);
  };
  if (std::string dropped = current_->tail->Finish(progress_.counters(), consume); !dropped.empty()) {
    progress_.ReportProblem(current_->name + ": " + dropped);
  }
  last_finished_index_ = current_->index;
  current_.reset();
}

bool RollingLogFollower::Poll(EventLogSink& sink) {
  if (progress_.state() == LogState::kUnsupported) return false;

  Result<OpenDirectory> directory = OpenDirectory::Open(directory_path_);
  if (!directory.ok()) {
    if (directory.error().code != ErrorCode::kNotFound) {
      ++progress_.counters().read_errors;
      progress_.ReportProblem(directory.error().message);
    }
    return false;
  }
  if (directory_identity_ && *directory_identity_ != directory->identity()) {
    StartOver(sink, "the directory was replaced by another one");
  }
  directory_identity_ = directory->identity();

  // List before reading: a file listed as followed by a higher index, or a log listed as complete, was
  // closed by the driver before this listing, so reading it to its end afterwards reads all of it.
  Result<std::vector<DirectoryEntry>> entries = directory->List();
  if (!entries.ok()) {
    ++progress_.counters().read_errors;
    progress_.ReportProblem(entries.error().message);
    return false;
  }
  Listing listing;
  const std::string& base = progress_.status().identity.name;
  for (const DirectoryEntry& entry : *entries) {
    if (entry.kind != EntryKind::kFile) continue;
    if (std::optional<RollingEventFileName> events = ParseRollingEventFileName(entry.name, base)) {
      listing.files.push_back({events->index, events->compacted, entry.name, events->codec});
    } else if (std::optional<AppStatusMarker> marker = ParseAppStatusFileName(entry.name, base)) {
      // Both names can be listed during the rename; the final one wins.
      if (*marker == AppStatusMarker::kComplete) listing.status = AppStatusMarker::kComplete;
    }
  }
  std::sort(listing.files.begin(), listing.files.end(), [](const auto& a, const auto& b) {
    return a.index != b.index ? a.index < b.index : a.compacted < b.compacted;
  });

  // The followed file is gone and nothing as high is left: the log was rewritten with the directory
  // kept (or an inode number reused).
  if (current_ && !listing.Has(current_->index) && listing.HighestIndex() < current_->index) {
    StartOver(sink, "its events files were renumbered");
  }

  bool restarted = false;
  for (;;) {
    if (!current_ && !OpenNext(listing, last_finished_index_)) break;
    Result<UniqueFd> fd = directory->OpenFile(current_->name);
    if (!fd.ok()) {
      if (fd.error().code != ErrorCode::kNotFound) {
        ++progress_.counters().read_errors;
        progress_.ReportProblem(fd.error().message);
        return false;
      }
      const bool still_the_live_file =
          listing.After(current_->index) == nullptr && listing.status == AppStatusMarker::kInProgress;
      if (still_the_live_file) return false;  // it may be back (seen mid-rename); look again next poll
      // Deleted before it was read to the end (e.g. compacted away by the History Server): go on.
      ++progress_.counters().missing_files;
      progress_.ReportProblem(current_->name + " disappeared before it was read to the end");
      last_finished_index_ = current_->index;
      current_.reset();
      continue;
    }
    const auto consume = [&](std::string_view line, std::uint64_t offset) {
      progress_.Deliver(sink, line, offset, current_->path, current_->index);
    };
    const FileTail::Outcome outcome = current_->tail->ReadNew(fd->get(), progress_.counters(), consume);
    switch (outcome) {
      case FileTail::Outcome::kReplaced:
      case FileTail::Outcome::kShrunk:
        if (restarted) return false;
        restarted = true;
        StartOver(sink, current_->name + (outcome == FileTail::Outcome::kReplaced
                                              ? " was replaced by another file"
                                              : " shrank (truncated or rewritten)"));
        continue;
      case FileTail::Outcome::kBudgetExhausted:
        return true;
      case FileTail::Outcome::kReadFailed:
        progress_.ReportProblem(current_->name + ": " + current_->tail->error());
        return false;
      case FileTail::Outcome::kDecodeFailed:
        // Only this file is lost: the next one starts a fresh stream.
        if (!current_->failure_reported) {
          current_->failure_reported = true;
          progress_.ReportProblem(current_->name + ": " + current_->tail->error() +
                                  " (rest of the file skipped)");
        }
        break;  // ends like a file read to its end
      case FileTail::Outcome::kCaughtUp:
        break;
    }
    if (listing.After(current_->index) != nullptr) {
      FinishCurrent(sink);
      continue;
    }
    if (listing.status == AppStatusMarker::kComplete) {
      FinishCurrent(sink);
      progress_.Complete(sink);
    }
    return false;
  }
  // No file to read: an empty log is complete once its marker says so.
  if (!current_ && listing.status == AppStatusMarker::kComplete &&
      listing.After(last_finished_index_) == nullptr && progress_.state() == LogState::kInProgress) {
    progress_.Complete(sink);
  }
  return false;
}

}  // namespace sparktrace::listener::eventlog
