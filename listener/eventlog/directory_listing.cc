#include "listener/eventlog/directory_listing.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace sparktrace::listener::eventlog {
namespace {

Error ErrnoError(int error_number, std::string_view what, std::string_view path) {
  const ErrorCode code =
      error_number == ENOENT || error_number == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kIo;
  return Error{code, std::string(what) + " " + std::string(path) + ": " + std::strerror(error_number)};
}

EntryKind KindOfMode(mode_t mode) {
  if (S_ISREG(mode)) return EntryKind::kFile;
  if (S_ISDIR(mode)) return EntryKind::kDirectory;
  return EntryKind::kOther;
}

}  // namespace

FileIdentity IdentityOf(const struct stat& status) {
  return FileIdentity{static_cast<std::uint64_t>(status.st_dev), static_cast<std::uint64_t>(status.st_ino)};
}

Result<UniqueFd> OpenForReading(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, "cannot open", path);
  return fd;
}

Result<OpenDirectory> OpenDirectory::Open(const std::string& path) {
  std::unique_ptr<DIR, DirCloser> directory(opendir(path.c_str()));
  if (!directory) return ErrnoError(errno, "cannot open directory", path);
  struct stat status {};
  if (fstat(dirfd(directory.get()), &status) != 0) return ErrnoError(errno, "cannot stat", path);
  return OpenDirectory(std::move(directory), IdentityOf(status), path);
}

Result<std::vector<DirectoryEntry>> OpenDirectory::List() {
  std::vector<DirectoryEntry> entries;
  rewinddir(directory_.get());
  for (;;) {
    errno = 0;
    const dirent* entry = readdir(directory_.get());
    if (entry == nullptr) {
      if (errno != 0) return ErrnoError(errno, "cannot list", path_);
      break;
    }
    const std::string_view name = entry->d_name;
    if (name.empty() || name.front() == '.') continue;
    DirectoryEntry listed{std::string(name), EntryKind::kOther, static_cast<std::uint64_t>(entry->d_ino)};
    if (entry->d_type == DT_REG) {
      listed.kind = EntryKind::kFile;
    } else if (entry->d_type == DT_DIR) {
      listed.kind = EntryKind::kDirectory;
    } else if (entry->d_type == DT_LNK || entry->d_type == DT_UNKNOWN) {
      // Some file systems do not fill d_type; links count as what they point to.
      struct stat status {};
      if (fstatat(dirfd(directory_.get()), entry->d_name, &status, 0) == 0)
        listed.kind = KindOfMode(status.st_mode);
    }
    entries.push_back(std::move(listed));
  }
  return entries;
}

Result<UniqueFd> OpenDirectory::OpenFile(std::string_view name) const {
  const std::string file_name(name);
  UniqueFd fd(::openat(dirfd(directory_.get()), file_name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, "cannot open", path_ + "/" + file_name);
  return fd;
}

}  // namespace sparktrace::listener::eventlog
