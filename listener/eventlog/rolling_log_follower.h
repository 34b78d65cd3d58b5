#pragma once
// A rolling log (Spark 4.0's default): directory `eventlog_v2_<base>` holding `events_<n>_<base>[.<codec>]`
// (n = 1, 2, ...; the live one has no ".inprogress") and the marker `appstatus_<base>[.inprogress]`.
// Files are read in index order, each to its end: Spark closes a file before it creates the next, so a
// file is finished once a higher index is listed, and the log once the marker lost ".inprogress".

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "listener/eventlog/file_tail.h"
#include "listener/eventlog/follow_options.h"
#include "listener/eventlog/log_follower.h"
#include "listener/eventlog/log_progress.h"

namespace sparktrace::listener::eventlog {

class RollingLogFollower final : public LogFollower {
 public:
  // `directory_path` is the eventlog_v2_ directory (also `identity.id`); `identity.name` its base.
  RollingLogFollower(LogIdentity identity, std::string directory_path, const FollowOptions& options);

  bool Poll(EventLogSink& sink) override;
  const LogStatus& status() const override { return progress_.status(); }

 private:
  struct CurrentFile {
    std::uint64_t index = 0;
    std::string name;
    std::string path;
    std::unique_ptr<FileTail> tail;
    bool failure_reported = false;  // its decode error was reported (it stays failed)
  };
  struct Listing;

  void StartOver(EventLogSink& sink, const std::string& reason);
  // The file the log goes on with after `after_index`; false when there is none (yet).
  bool OpenNext(const Listing& listing, std::uint64_t after_index);
  void FinishCurrent(EventLogSink& sink);

  std::string directory_path_;
  FollowOptions options_;
  LogProgress progress_;
  std::optional<FileIdentity> directory_identity_;
  std::optional<CurrentFile> current_;
  std::uint64_t last_finished_index_ = 0;  // files up to this index were read to their end
};

}  // namespace sparktrace::listener::eventlog
