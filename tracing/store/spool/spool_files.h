#pragma once
// The span spool's file access: the POSIX calls it makes, retried on EINTR, the kIo errors that name
// the file, and reading back and checking a record or the cursor (spool_format.h). Kept apart from
// the spool's queue logic (span_spool.cc), which decides what to read and write and when.
//
// Threads: the caller's (the spool's one thread); no state of its own.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/unique_fd.h"
#include "tracing/store/spool/spool_format.h"

namespace sparktrace::tracing::store {

// strerror's text for an errno value.
std::string ErrnoText(int error);
// kIo: "span spool: <what> <path>: <reason>".
Error IoError(std::string_view what, const std::filesystem::path& path, int error);

// open(2) with O_CLOEXEC and O_NOFOLLOW, retried on EINTR; an invalid fd on failure (errno says why:
// ELOOP for a symbolic link). The spool only ever opens files it made, never through a link: a link
// planted in its directory would have its target read, truncated or overwritten.
UniqueFd OpenFile(const std::filesystem::path& path, int flags, mode_t mode = 0);
// Why `path` is not one of the spool's own files (a regular file, not a link, owned by this process's
// user), or nullopt when it is one. Looked at with lstat(2): a link is judged, not its target.
std::optional<std::string> NotOwnRegularFile(const std::filesystem::path& path);
// 0, or the errno that stopped it. Loops over short writes (a full disk shows as one, then ENOSPC).
int WriteAll(int fd, std::string_view bytes);
// Reads up to out.size() bytes at `offset`; fewer only at the end of the file. Returns the count read,
// or -errno.
ssize_t ReadAt(int fd, std::span<char> out, std::uint64_t offset);

// What reading one record found.
struct RecordRead {
  bool good = false;
  std::uint64_t end = 0;     // where a good record ends
  std::string_view problem;  // why a bad one is bad
};

// Reads and checks the record at `offset` of a segment whose good bytes end at `limit`, leaving its
// payload in `payload`. A bad record is not an Error; a failed read is.
Result<RecordRead> ReadRecord(int fd, const std::filesystem::path& path, std::uint64_t offset,
                              std::uint64_t limit, std::string& payload);

// The persisted cursor, or nullopt when there is none or it cannot be trusted (then every segment is
// delivered again, which at-least-once allows).
std::optional<Cursor> ReadCursor(const std::filesystem::path& path);

// Creates the directory with mode 0700 (its parents as the umask says); an existing one is kept.
Result<void> CreateSpoolDirectory(const std::filesystem::path& directory);

}  // namespace sparktrace::tracing::store
