#include "listener/eventlog/event_log_scanner.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <set>

#include "listener/eventlog/directory_listing.h"
#include "listener/eventlog/log_file_name.h"
#include "listener/eventlog/rolling_log_follower.h"
#include "listener/eventlog/single_file_follower.h"

namespace sparktrace::listener::eventlog {
namespace {

std::string NormalizeDirectory(const std::string& directory) {
  std::string normal = std::filesystem::path(directory).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

std::string JoinPath(const std::string& directory, std::string_view name) {
  std::string path = directory;
  if (path.empty() || path.back() != '/') path += '/';
  path += name;
  return path;
}

// One log as seen in a listing, before it is known whether it is new.
struct ListedLog {
  LogIdentity identity;
  std::string path;  // single file: its final path; rolling: the directory
  Codec codec = Codec::kNone;
  std::uint64_t listed_inode = 0;
  bool listed_in_progress = false;
};

// The logs in one --event-log-dir, by id.
Result<std::map<std::string, ListedLog>> ListLogs(const std::string& directory_path) {
  Result<OpenDirectory> directory = OpenDirectory::Open(directory_path);
  if (!directory.ok()) return directory.error();
  std::map<std::string, ListedLog> listed;

  // Pointed at one rolling log rather than at the directory holding it: follow that log.
  const std::string own_name = std::filesystem::path(directory_path).filename().string();
  if (std::optional<std::string> base = ParseRollingDirectoryName(own_name)) {
    ListedLog log;
    log.path = directory_path;
    log.identity = LogIdentity{directory_path, std::move(*base), directory_path, LogLayout::kRolling};
    log.listed_inode = directory->identity().inode;
    listed.emplace(directory_path, std::move(log));
    return listed;
  }

  Result<std::vector<DirectoryEntry>> entries = directory->List();
  if (!entries.ok()) return entries.error();
  for (const DirectoryEntry& entry : *entries) {
    ListedLog log;
    if (entry.kind == EntryKind::kDirectory) {
      std::optional<std::string> base = ParseRollingDirectoryName(entry.name);
      if (!base) continue;  // other directories are not event logs
      log.path = JoinPath(directory_path, entry.name);
      log.identity = LogIdentity{log.path, std::move(*base), directory_path, LogLayout::kRolling};
    } else if (entry.kind == EntryKind::kFile) {
      std::optional<SingleFileLogName> name = ParseSingleFileLogName(entry.name);
      if (!name) continue;
      log.path = JoinPath(directory_path, name->final_name);
      log.codec = name->codec;
      log.listed_in_progress = name->in_progress;
      log.identity = LogIdentity{log.path, std::move(name->base), directory_path, LogLayout::kSingleFile};
    } else {
      continue;
    }
    log.listed_inode = entry.listed_inode;
    const std::string id = log.identity.id;
    auto [slot, inserted] = listed.try_emplace(id, std::move(log));  // moves only when inserted
    // Both `x.inprogress` and `x`: the in-progress one is what the driver writes now.
    if (!inserted && log.listed_in_progress) slot->second = std::move(log);
  }
  return listed;
}

}  // namespace

Result<std::unique_ptr<EventLogScanner>> EventLogScanner::Create(ScannerOptions options) {
  if (options.directories.empty()) return InvalidArgument("--event-log-dir: no directory given");
  std::vector<std::string> unique_directories;
  std::set<std::string> seen;
  for (const std::string& directory : options.directories) {
    if (directory.empty()) return InvalidArgument("--event-log-dir: empty path");
    std::string normal = NormalizeDirectory(directory);
    if (seen.insert(normal).second) unique_directories.push_back(std::move(normal));
  }
  options.directories = std::move(unique_directories);
  if (options.follow.max_line_bytes == 0)
    return InvalidArgument("event log: max_line_bytes must be positive");
  if (options.follow.read_chunk_bytes == 0)
    return InvalidArgument("event log: read_chunk_bytes must be positive");
  if (options.follow.max_bytes_per_poll == 0)
    return InvalidArgument("event log: max_bytes_per_poll must be positive");
  if (options.forget_after_missing_listings < 1) {
    return InvalidArgument("event log: forget_after_missing_listings must be at least 1");
  }
  return std::unique_ptr<EventLogScanner>(new EventLogScanner(std::move(options)));
}

EventLogScanner::EventLogScanner(ScannerOptions options) : options_(std::move(options)) {
  for (const std::string& directory : options_.directories)
    directories_.push_back(WatchedDirectory{directory});
}

bool EventLogScanner::Poll(EventLogSink& sink) {
  for (WatchedDirectory& directory : directories_) ScanDirectory(directory);

  bool more_waiting = false;
  for (auto& [id, log] : logs_) {
    const LogState state = log.follower->status().state;
    if (state == LogState::kUnsupported) continue;
    if (state == LogState::kComplete && !log.listing_changed) continue;
    log.listing_changed = false;
    more_waiting |= log.follower->Poll(sink);
  }
  return more_waiting;
}

void EventLogScanner::ScanDirectory(WatchedDirectory& directory) {
  Result<std::map<std::string, ListedLog>> listing = ListLogs(directory.path);
  if (!listing.ok()) {
    ++directory_errors_;
    if (!directory.failing) {
      spdlog::warn("event log directory {}: {} (will look again on every poll)", directory.path,
                   listing.error().message);
    }
    directory.failing = true;
    return;
  }
  if (directory.failing) spdlog::info("event log directory {}: readable now", directory.path);
  directory.failing = false;
  const std::map<std::string, ListedLog>& listed = *listing;

  for (const auto& [id, log] : listed) {
    auto tracked = logs_.find(id);
    if (tracked == logs_.end()) {
      std::unique_ptr<LogFollower> follower;
      if (log.identity.layout == LogLayout::kRolling) {
        follower = std::make_unique<RollingLogFollower>(log.identity, log.path, options_.follow);
      } else {
        follower = std::make_unique<SingleFileFollower>(log.identity, log.path, log.codec, options_.follow);
      }
      spdlog::debug("event log {}: found", id);
      ++logs_discovered_;
      tracked = logs_.emplace(id, TrackedLog{std::move(follower), log.listed_inode, true, 0}).first;
    }
    TrackedLog& state = tracked->second;
    if (state.listed_inode != log.listed_inode) state.listing_changed = true;
    state.listed_inode = log.listed_inode;
    state.missing_listings = 0;
  }

  for (auto log = logs_.begin(); log != logs_.end();) {
    const auto current = log++;
    if (current->second.follower->status().identity.directory != directory.path) continue;
    if (listed.contains(current->first)) continue;
    if (++current->second.missing_listings >= options_.forget_after_missing_listings) Forget(current);
  }
}

void EventLogScanner::Forget(std::map<std::string, TrackedLog>::iterator log) {
  const LogStatus& status = log->second.follower->status();
  if (status.state == LogState::kInProgress) {
    spdlog::warn("event log {}: gone from its directory before the application finished", status.identity.id);
  } else {
    spdlog::debug("event log {}: gone from its directory", status.identity.id);
  }
  forgotten_totals_ += status.counters;
  ++logs_forgotten_;
  logs_.erase(log);
}

FeedCounters EventLogScanner::counters() const {
  FeedCounters counters;
  counters.totals = forgotten_totals_;
  counters.logs_discovered = logs_discovered_;
  counters.logs_forgotten = logs_forgotten_;
  counters.directory_errors = directory_errors_;
  for (const auto& [id, log] : logs_) {
    const LogStatus& status = log.follower->status();
    counters.totals += status.counters;
    switch (status.state) {
      case LogState::kInProgress:
        ++counters.logs_in_progress;
        break;
      case LogState::kComplete:
        ++counters.logs_complete;
        break;
      case LogState::kFailed:
        ++counters.logs_failed;
        break;
      case LogState::kUnsupported:
        ++counters.logs_unsupported;
        break;
    }
  }
  return counters;
}

std::vector<LogStatus> EventLogScanner::statuses() const {
  std::vector<LogStatus> statuses;
  statuses.reserve(logs_.size());
  for (const auto& [id, log] : logs_) statuses.push_back(log.follower->status());
  return statuses;
}

}  // namespace sparktrace::listener::eventlog
