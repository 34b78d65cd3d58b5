#pragma once
// A single-file log: `<base>[.<codec>].inprogress` while the application runs, renamed to
// `<base>[.<codec>]` when it stops. The rename keeps the file (same inode), so reading goes on at the
// same offset; a different file under either name, or a file that shrank, means the log was rewritten
// and is read again from the start.

#include <memory>
#include <string>

#include "listener/eventlog/codec.h"
#include "listener/eventlog/file_tail.h"
#include "listener/eventlog/follow_options.h"
#include "listener/eventlog/log_follower.h"
#include "listener/eventlog/log_progress.h"

namespace sparktrace::listener::eventlog {

class SingleFileFollower final : public LogFollower {
 public:
  // `final_path` is the name without ".inprogress" (which is also `identity.id`).
  SingleFileFollower(LogIdentity identity, std::string final_path, Codec codec, const FollowOptions& options);

  bool Poll(EventLogSink& sink) override;
  const LogStatus& status() const override { return progress_.status(); }

 private:
  void StartOver();

  std::string final_path_;
  std::string in_progress_path_;
  std::string final_name_;  // the file names, for messages (the log id already names the directory)
  std::string in_progress_name_;
  Codec codec_;
  FollowOptions options_;
  LogProgress progress_;
  std::unique_ptr<FileTail> tail_;  // null when the codec is unsupported
};

}  // namespace sparktrace::listener::eventlog
