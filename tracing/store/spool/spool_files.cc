#include "tracing/store/spool/spool_files.h"

#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>

namespace sparktrace::tracing::store {

namespace fs = std::filesystem;

std::string ErrnoText(int error) { return std::system_category().message(error); }

Error IoError(std::string_view what, const fs::path& path, int error) {
  return Error{ErrorCode::kIo, fmt::format("span spool: {} {}: {}", what, path.string(), ErrnoText(error))};
}

UniqueFd OpenFile(const fs::path& path, int flags, mode_t mode) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode);
  } while (fd < 0 && errno == EINTR);
  return UniqueFd(fd);
}

std::optional<std::string> NotOwnRegularFile(const fs::path& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) return "cannot stat it: " + ErrnoText(errno);
  if (S_ISLNK(status.st_mode)) return std::string("a symbolic link");
  if (!S_ISREG(status.st_mode)) return std::string("not a regular file");
  if (status.st_uid != ::geteuid())
    return fmt::format("owned by uid {}, not this process's {}", status.st_uid, ::geteuid());
  return std::nullopt;
}

int WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return 0;
}

ssize_t ReadAt(int fd, std::span<char> out, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

Result<RecordRead> ReadRecord(int fd, const fs::path& path, std::uint64_t offset, std::uint64_t limit,
                              std::string& payload) {
  std::array<char, kRecordHeaderBytes> header{};
  const std::uint64_t left = limit - offset;
  if (left < kRecordHeaderBytes) return RecordRead{.problem = "record header cut short"};
  const ssize_t got = ReadAt(fd, header, offset);
  if (got < 0) return IoError("reading", path, static_cast<int>(-got));
  if (static_cast<std::size_t>(got) < header.size()) return RecordRead{.problem = "record header cut short"};
  if (GetU32(header.data()) != kRecordMagic) return RecordRead{.problem = "no record magic"};
  if (GetU32(header.data() + 12) != Crc32c(std::string_view(header.data(), 12))) {
    return RecordRead{.problem = "record header checksum mismatch"};
  }
  const std::uint64_t length = GetU32(header.data() + 4);
  // Checked before allocating: the payload must lie within the file.
  if (length > left - kRecordHeaderBytes) return RecordRead{.problem = "record cut short"};
  payload.resize(length);
  const ssize_t read = ReadAt(fd, payload, offset + kRecordHeaderBytes);
  if (read < 0) return IoError("reading", path, static_cast<int>(-read));
  if (static_cast<std::uint64_t>(read) < length) return RecordRead{.problem = "record cut short"};
  if (GetU32(header.data() + 8) != Crc32c(payload)) return RecordRead{.problem = "record checksum mismatch"};
  return RecordRead{.good = true, .end = offset + kRecordHeaderBytes + length, .problem = {}};
}

std::optional<Cursor> ReadCursor(const fs::path& path) {
  const UniqueFd fd = OpenFile(path, O_RDONLY);
  if (!fd.valid()) {
    const int error = errno;
    if (error != ENOENT) {
      spdlog::warn("span spool: cannot open {} ({}); re-delivering every batch", path.string(),
                   ErrnoText(error));
    }
    return std::nullopt;
  }
  std::array<char, kCursorBytes + 1> bytes{};  // one more, to notice a longer file
  const ssize_t got = ReadAt(fd.get(), bytes, 0);
  if (got != static_cast<ssize_t>(kCursorBytes) || GetU32(bytes.data()) != kCursorMagic ||
      GetU32(bytes.data() + 20) != Crc32c(std::string_view(bytes.data(), 20))) {
    spdlog::warn("span spool: {} is unreadable or corrupt; re-delivering every batch", path.string());
    return std::nullopt;
  }
  return Cursor{.sequence = GetU64(bytes.data() + 4), .offset = GetU64(bytes.data() + 12)};
}

Result<void> CreateSpoolDirectory(const fs::path& directory) {
  std::error_code error;
  if (fs::is_directory(directory, error)) return {};
  const fs::path parent = directory.parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, error);
    if (error) {
      return Error{ErrorCode::kIo, fmt::format("span spool directory {}: cannot create {}: {}",
                                               directory.string(), parent.string(), error.message())};
    }
  }
  if (::mkdir(directory.c_str(), 0700) != 0) {
    const int mkdir_error = errno;
    if (mkdir_error != EEXIST) {
      return Error{ErrorCode::kIo, fmt::format("span spool directory {}: cannot create it: {}",
                                               directory.string(), ErrnoText(mkdir_error))};
    }
  }
  return {};
}

}  // namespace sparktrace::tracing::store
