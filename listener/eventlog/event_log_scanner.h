#pragma once
// The event-log file feed (`--event-log-dir`, repeatable): polls one or more local directories — e.g. a
// volume shared with the Spark driver — discovers every application's log, including ones that appear
// late and directories that do not exist yet, and follows each log as it grows (single files,
// `.inprogress` files, rolling `eventlog_v2_` directories; zstd, lz4, snappy or plain), handing complete
// lines to an EventLogSink.
//
// Poll-based on purpose: it works the same on local disks, NFS and container volumes, where file change
// notifications are missing or unreliable, and reopening every followed file on every poll gives NFS's
// close-to-open consistency. Nothing stays open between polls, and a poll holds at most
// two descriptors at once (a listed directory is closed before the logs are read; a rolling log holds
// its directory and one file), however many logs there are.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "listener/eventlog/event_log_sink.h"
#include "listener/eventlog/feed_counters.h"
#include "listener/eventlog/follow_options.h"
#include "listener/eventlog/log_follower.h"

namespace sparktrace::listener::eventlog {

struct ScannerOptions {
  // Directories holding event logs (spark.eventLog.dir). One named eventlog_v2_<base> is taken to be a
  // single rolling log itself.
  std::vector<std::string> directories;
  FollowOptions follow;
  // A log missing from this many successful listings of its directory in a row is forgotten (its
  // counters stay in the totals). More than one, because a directory listed during a rename may show
  // neither name.
  int forget_after_missing_listings = 3;
};

// Not thread-safe: Poll(), counters() and statuses() are called from one thread (the sink is called on
// it too). Holds no thread and no timer: the owner decides how often to poll.
class EventLogScanner {
 public:
  // Validates the options; the directories need not exist yet.
  static Result<std::unique_ptr<EventLogScanner>> Create(ScannerOptions options);

  // Lists every directory, starts following new logs, and reads what each log gained since the last
  // poll. Returns true when some log stopped at its per-poll byte budget: poll again without waiting.
  bool Poll(EventLogSink& sink);

  FeedCounters counters() const;
  // Every log currently known, ordered by id.
  std::vector<LogStatus> statuses() const;

 private:
  struct WatchedDirectory {
    std::string path;
    bool failing = false;  // the last listing failed (reported once per failure spell)
  };
  struct TrackedLog {
    std::unique_ptr<LogFollower> follower;
    std::uint64_t listed_inode = 0;  // of the entry standing for the log in the latest listing
    bool listing_changed = true;     // a finished log is read again only when its entry changed
    int missing_listings = 0;
  };

  explicit EventLogScanner(ScannerOptions options);
  void ScanDirectory(WatchedDirectory& directory);
  void Forget(std::map<std::string, TrackedLog>::iterator log);

  ScannerOptions options_;
  std::vector<WatchedDirectory> directories_;
  std::map<std::string, TrackedLog> logs_;  // by LogIdentity::id
  LogCounters forgotten_totals_;
  std::uint64_t logs_discovered_ = 0;
  std::uint64_t logs_forgotten_ = 0;
  std::uint64_t directory_errors_ = 0;
};

}  // namespace sparktrace::listener::eventlog
