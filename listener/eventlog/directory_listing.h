#pragma once
// Thin RAII wrappers over the POSIX calls the feed needs: list a directory with inode numbers, open
// files read-only, and tell files apart by (device, inode) so a replaced file is noticed.

#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace sparktrace::listener::eventlog {

struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

FileIdentity IdentityOf(const struct stat& status);

enum class EntryKind { kFile, kDirectory, kOther };

struct DirectoryEntry {
  std::string name;
  EntryKind kind = EntryKind::kOther;
  // From readdir (d_ino): compared only with earlier listings, never with fstat's st_ino, which
  // differs from d_ino on some file systems (overlayfs).
  std::uint64_t listed_inode = 0;
};

// Opens a file read-only. Error code kNotFound when it is not there.
Result<UniqueFd> OpenForReading(const std::string& path);

// An open directory: list it, and open files relative to it.
class OpenDirectory {
 public:
  // Error code kNotFound when it is not there (yet).
  static Result<OpenDirectory> Open(const std::string& path);

  FileIdentity identity() const { return identity_; }

  // Every entry but "." and ".." and hidden names (starting with '.': Hadoop's .crc side files, editors'
  // temporary files). Symbolic links are classified by their target.
  Result<std::vector<DirectoryEntry>> List();

  // Opens `name` in this directory read-only. Error code kNotFound when it is not there.
  Result<UniqueFd> OpenFile(std::string_view name) const;

 private:
  struct DirCloser {
    void operator()(DIR* directory) const { closedir(directory); }
  };
  OpenDirectory(std::unique_ptr<DIR, DirCloser> directory, FileIdentity identity, std::string path)
      : directory_(std::move(directory)), identity_(identity), path_(std::move(path)) {}

  std::unique_ptr<DIR, DirCloser> directory_;
  FileIdentity identity_;
  std::string path_;  // for messages
};

}  // namespace sparktrace::listener::eventlog
