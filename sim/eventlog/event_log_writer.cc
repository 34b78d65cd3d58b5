#include "sim/eventlog/event_log_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sparktrace::sim::eventlog {
namespace {

Error IoError(const std::string& what, const std::string& path) {
  return Error{ErrorCode::kIo, "event log: " + what + " " + path + ": " + std::strerror(errno)};
}

}  // namespace

struct EventLogWriter::ZstdState {
  ZSTD_CCtx* context = nullptr;
  std::string out;
  ~ZstdState() { ZSTD_freeCCtx(context); }
};

Result<LogCodec> ParseLogCodec(std::string_view name) {
  if (name == "plain" || name == "none" || name.empty()) return LogCodec::kPlain;
  if (name == "zstd") return LogCodec::kZstd;
  return InvalidArgument("codec: expected plain or zstd, got '" + std::string(name) + "'");
}

std::string SanitizedLogBase(std::string_view app_id) {
  std::string base;
  for (const char c : app_id) {
    if (c == ' ' || c == ':' || c == '/') {
      base += '-';
    } else if (c == '.' || c == '$' || c == '{' || c == '}' || c == '\'' || c == '"') {
      base += '_';
    } else {
      base += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return base;
}

EventLogWriter::EventLogWriter(const WriterOptions& options, OpenTag) : options_(options) {}

EventLogWriter::~EventLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<EventLogWriter>> EventLogWriter::Open(const WriterOptions& options) {
  if (options.app_id.empty()) return InvalidArgument("event log: empty application id");
  auto writer = std::make_unique<EventLogWriter>(options, OpenTag{});
  writer->base_ = SanitizedLogBase(options.app_id);
  const std::string suffix = options.codec == LogCodec::kZstd ? ".zstd" : "";
  if (options.codec == LogCodec::kZstd) {
    writer->zstd_ = std::make_unique<ZstdState>();
    writer->zstd_->context = ZSTD_createCCtx();
    if (!writer->zstd_->context)
      return Error{ErrorCode::kInternal, "event log: cannot create a zstd context"};
    ZSTD_CCtx_setParameter(writer->zstd_->context, ZSTD_c_compressionLevel, options.zstd_level);
  }
  if (options.rolling_max_bytes == 0) {
    writer->final_path_ = options.directory + "/" + writer->base_ + suffix;
    if (auto ok = writer->OpenFile(writer->final_path_ + ".inprogress"); !ok) return ok.error();
    return writer;
  }
  writer->rolling_dir_ = options.directory + "/eventlog_v2_" + writer->base_;
  writer->final_path_ = writer->rolling_dir_;
  if (::mkdir(writer->rolling_dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    return IoError("cannot create", writer->rolling_dir_);
  }
  const std::string status = writer->rolling_dir_ + "/appstatus_" + writer->base_ + ".inprogress";
  const int status_fd = ::open(status.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (status_fd < 0) return IoError("cannot create", status);
  ::close(status_fd);
  writer->file_index_ = 1;
  if (auto ok = writer->OpenFile(writer->rolling_dir_ + "/events_1_" + writer->base_ + suffix); !ok) {
    return ok.error();
  }
  return writer;
}

Result<void> EventLogWriter::OpenFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return IoError("cannot create", path);
  current_file_ = path;
  file_uncompressed_bytes_ = 0;
  return {};
}

Result<void> EventLogWriter::WriteBytes(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", current_file_);
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return {};
}

Result<void> EventLogWriter::Drain(bool end_frame) {
  if (!zstd_) {
    auto ok = WriteBytes(buffer_);
    buffer_.clear();
    return ok;
  }
  // Nothing to send, and no frame to end: an empty frame would only waste bytes.
  if (buffer_.empty() && (!end_frame || !frame_open_)) return {};
  ZSTD_inBuffer in{buffer_.data(), buffer_.size(), 0};
  std::string& out = zstd_->out;
  out.resize(ZSTD_CStreamOutSize());
  const ZSTD_EndDirective directive = end_frame ? ZSTD_e_end : ZSTD_e_continue;
  while (true) {
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    const std::size_t remaining = ZSTD_compressStream2(zstd_->context, &output, &in, directive);
    if (ZSTD_isError(remaining)) {
      return Error{ErrorCode::kInternal, std::string("event log: zstd: ") + ZSTD_getErrorName(remaining)};
    }
    if (auto ok = WriteBytes(std::string_view(out.data(), output.pos)); !ok) return ok;
    const bool done = end_frame ? remaining == 0 : in.pos == in.size;
    if (done) break;
  }
  buffer_.clear();
  frame_open_ = !end_frame;
  return {};
}

Result<void> EventLogWriter::Write(std::string_view line, bool flush) {
  if (closed_) return Error{ErrorCode::kInternal, "event log: write after close"};
  const std::uint64_t bytes = line.size() + 1;
  if (options_.rolling_max_bytes > 0 && file_uncompressed_bytes_ > 0 &&
      file_uncompressed_bytes_ + bytes > options_.rolling_max_bytes) {
    // Roll: finish this file and start the next, as Spark does before the line that would overflow.
    if (auto ok = CloseFile(); !ok) return ok;
    const std::string suffix = options_.codec == LogCodec::kZstd ? ".zstd" : "";
    ++file_index_;
    if (auto ok = OpenFile(rolling_dir_ + "/events_" + std::to_string(file_index_) + "_" + base_ + suffix);
        !ok) {
      return ok;
    }
  }
  buffer_.append(line);
  buffer_ += '\n';
  file_uncompressed_bytes_ += bytes;
  if (flush) return Drain(true);
  if (buffer_.size() >= options_.buffer_bytes) return Drain(false);
  return {};
}

Result<void> EventLogWriter::Flush() {
  if (closed_ || fd_ < 0) return {};
  return Drain(true);
}

Result<void> EventLogWriter::CloseFile() {
  if (fd_ < 0) return {};
  auto drained = Drain(true);
  ::close(fd_);
  fd_ = -1;
  return drained;
}

Result<void> EventLogWriter::Close() {
  if (closed_) return {};
  closed_ = true;
  if (auto ok = CloseFile(); !ok) return ok;
  if (rolling_dir_.empty()) {
    if (std::rename(current_file_.c_str(), final_path_.c_str()) != 0)
      return IoError("cannot rename", current_file_);
    current_file_ = final_path_;
    return {};
  }
  const std::string status = rolling_dir_ + "/appstatus_" + base_;
  if (std::rename((status + ".inprogress").c_str(), status.c_str()) != 0)
    return IoError("cannot rename", status);
  return {};
}

}  // namespace sparktrace::sim::eventlog
