#include "tracing/store/spool/span_spool.h"

#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <exception>
#include <limits>
#include <new>
#include <system_error>
#include <utility>

#include "common/unique_fd.h"
#include "tracing/store/spool/span_codec.h"
#include "tracing/store/spool/spool_files.h"
#include "tracing/store/spool/spool_format.h"

namespace sparktrace::tracing::store {
namespace {

namespace fs = std::filesystem;

Error OutOfMemory(std::string_view what) {
  return Error{ErrorCode::kInternal, fmt::format("span spool: out of memory {}", what)};
}

}  // namespace

class SpanSpool::Files {
 public:
  UniqueFd lock;
  UniqueFd writer;  // the last segment's, while it takes appends
  std::uint64_t writer_segment = 0;
  UniqueFd reader;  // the head segment's
  std::uint64_t reader_segment = 0;
};

SpanSpool::SpanSpool(Passkey /*passkey*/, SpanSpoolOptions options)
    : options_(std::move(options)), files_(std::make_unique<Files>()) {}

SpanSpool::~SpanSpool() {
  try {
    if (acknowledgements_since_cursor_write_ > 0) PersistCursor();
    // A clean shutdown is cheap to make durable too.
    if (files_->writer.valid() && ::fdatasync(files_->writer.get()) != 0) {
      const int error = errno;
      spdlog::warn("span spool {}: fdatasync at close: {}", options_.directory.string(), ErrnoText(error));
    }
  } catch (...) {
    // Only the logging could throw, and a destructor must not; the cursor is an optimisation anyway.
  }
}

Result<std::unique_ptr<SpanSpool>> SpanSpool::Open(const SpanSpoolOptions& options) {
  if (options.directory.empty()) return InvalidArgument("span spool: no directory given");
  if (options.max_bytes == 0 || options.segment_bytes == 0) {
    return InvalidArgument(fmt::format("span spool {}: max_bytes and segment_bytes must be positive",
                                       options.directory.string()));
  }
  try {
    auto spool = std::make_unique<SpanSpool>(Passkey{}, options);
    if (Result<void> created = CreateSpoolDirectory(options.directory); !created.ok()) return created.error();
    if (Result<void> locked = spool->Lock(); !locked.ok()) return locked.error();
    if (Result<void> recovered = spool->Recover(); !recovered.ok()) return recovered.error();
    return spool;
  } catch (const std::bad_alloc&) {
    return OutOfMemory(fmt::format("opening {}", options.directory.string()));
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInternal,
                 fmt::format("span spool {}: {}", options.directory.string(), e.what())};
  }
}

Result<void> SpanSpool::Lock() {
  const fs::path path = options_.directory / kLockFileName;
  files_->lock = OpenFile(path, O_RDWR | O_CREAT, 0600);
  if (!files_->lock.valid()) {
    const int error = errno;
    return Error{ErrorCode::kIo, fmt::format("span spool directory {}: cannot create its lock file: {}",
                                             options_.directory.string(), ErrnoText(error))};
  }
  // flock locks belong to the open file description, so a second Open() in this process is refused
  // just as another process is.
  if (::flock(files_->lock.get(), LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      return Error{ErrorCode::kUnavailable,
                   fmt::format("span spool directory {} is in use by another spool (another process, or "
                               "another spool object in this one)",
                               options_.directory.string())};
    }
    return Error{ErrorCode::kIo, fmt::format("span spool directory {}: cannot lock {}: {}",
                                             options_.directory.string(), path.string(), ErrnoText(error))};
  }
  return {};
}

fs::path SpanSpool::SegmentPath(std::uint64_t sequence) const {
  return options_.directory /
         fmt::format("{}{:0{}}{}", kSegmentPrefix, sequence, kSequenceDigits, kSegmentSuffix);
}

Result<void> SpanSpool::Recover() {
  std::error_code error;
  fs::remove(options_.directory / kCursorTempFileName, error);  // a write the last process did not finish

  std::vector<std::uint64_t> sequences;
  for (fs::directory_iterator it(options_.directory, error), end; !error && it != end; it.increment(error)) {
    const auto sequence = SegmentSequence(it->path().filename().string());
    if (!sequence) continue;
    if (const auto why = NotOwnRegularFile(it->path())) {
      // Not ours to read or cut short: the spool only touches the files it made.
      ++counters_.refused_files;
      next_sequence_ = std::max(next_sequence_, *sequence + 1);  // its name stays taken
      spdlog::warn(
          "span spool: {} is {}; leaving it alone (counted in "
          "sparktrace_span_spool_files_refused_total)",
          it->path().string(), *why);
      continue;
    }
    sequences.push_back(*sequence);
  }
  if (error) {
    return Error{ErrorCode::kIo, fmt::format("span spool directory {}: cannot list it: {}",
                                             options_.directory.string(), error.message())};
  }
  std::sort(sequences.begin(), sequences.end());

  const std::optional<Cursor> cursor = ReadCursor(options_.directory / kCursorFileName);
  if (cursor) next_sequence_ = std::max(next_sequence_, cursor->sequence + 1);
  for (const std::uint64_t sequence : sequences) {
    // Never reuse a sequence: the cursor may still name one whose file is gone.
    next_sequence_ = std::max(next_sequence_, sequence + 1);
    if (cursor && sequence < cursor->sequence) {
      RemoveSegmentFile(sequence);  // acknowledged; the last process did not get to delete it
      continue;
    }
    std::optional<std::uint64_t> cursor_offset;
    if (cursor && sequence == cursor->sequence) cursor_offset = cursor->offset;
    Result<RecoveredSegment> recovered = RecoverSegment(sequence, cursor_offset);
    if (!recovered.ok()) return recovered.error();
    const Segment& segment = recovered->segment;
    if (segment.pending_records == 0) {
      RemoveSegmentFile(sequence);
      continue;
    }
    // Only the cursor's segment can be partly acknowledged, and every older one was dropped above, so
    // it is the first one kept.
    if (segments_.empty()) head_offset_ = recovered->acknowledged_bytes;
    unacknowledged_batches_ += segment.pending_records;
    unacknowledged_bytes_ += segment.bytes - recovered->acknowledged_bytes;
    segments_.push_back(segment);
  }
  counters_.recovered_batches = unacknowledged_batches_;
  if (!segments_.empty()) {
    spdlog::info("span spool {}: {} batch(es) to drain", options_.directory.string(),
                 unacknowledged_batches_);
  }
  return {};
}

// Checks every record of one segment, truncating the file at the first bad one: at the tail that is
// a crash mid-write; in the middle, the rest of the segment cannot be trusted to be framed right.
// Records that end at or before `cursor_offset` were acknowledged, provided the cursor falls on a
// record boundary; one that does not is not trusted and the whole segment is delivered again.
Result<SpanSpool::RecoveredSegment> SpanSpool::RecoverSegment(std::uint64_t sequence,
                                                              std::optional<std::uint64_t> cursor_offset) {
  const fs::path path = SegmentPath(sequence);
  const UniqueFd fd = OpenFile(path, O_RDWR);
  if (!fd.valid()) return IoError("cannot open", path, errno);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) return IoError("cannot stat", path, errno);
  const auto size = static_cast<std::uint64_t>(status.st_size);

  std::uint64_t offset = 0;
  std::uint64_t records = 0;
  std::uint64_t acknowledged_records = 0;
  std::uint64_t acknowledged_offset = 0;
  while (offset < size) {
    Result<RecordRead> record = ReadRecord(fd.get(), path, offset, size, payload_);
    if (!record.ok()) return record.error();
    if (!record->good) {
      ++counters_.corrupt_records;
      counters_.corrupt_bytes += size - offset;
      spdlog::warn("span spool: {}: {} at byte {}; cutting off the {} byte(s) from there", path.string(),
                   record->problem, offset, size - offset);
      if (::ftruncate(fd.get(), static_cast<off_t>(offset)) != 0) {
        return IoError("cannot truncate", path, errno);
      }
      break;
    }
    offset = record->end;
    ++records;
    if (cursor_offset && offset <= *cursor_offset) {
      acknowledged_records = records;
      acknowledged_offset = offset;
    }
  }
  if (cursor_offset && *cursor_offset < offset && acknowledged_offset != *cursor_offset) {
    spdlog::warn(
        "span spool: {}: the cursor (byte {}) is not at a record boundary; delivering the segment again",
        path.string(), *cursor_offset);
    acknowledged_records = 0;
    acknowledged_offset = 0;
  }
  return RecoveredSegment{
      .segment = {.sequence = sequence, .bytes = offset, .pending_records = records - acknowledged_records},
      .acknowledged_bytes = acknowledged_offset};
}

Result<void> SpanSpool::Append(std::span<const Span> spans) {
  if (spans.empty()) return {};
  try {
    const std::string payload = EncodeSpans(spans);
    if (payload.size() > std::numeric_limits<std::uint32_t>::max()) {
      return InvalidArgument(
          fmt::format("span spool: a batch of {} span(s) encodes to {} bytes, more than a "
                      "record holds (4 GiB)",
                      spans.size(), payload.size()));
    }
    const std::uint64_t record_bytes = kRecordHeaderBytes + payload.size();
    if (unacknowledged_bytes_ >= options_.max_bytes ||
        record_bytes > options_.max_bytes - unacknowledged_bytes_) {
      ++counters_.rejected_full_batches;
      counters_.rejected_full_spans += spans.size();
      return Error{ErrorCode::kUnavailable,
                   fmt::format("spool full: {} holds {} of its {} bytes; a batch of {} span(s) needs {} more",
                               options_.directory.string(), unacknowledged_bytes_, options_.max_bytes,
                               spans.size(), record_bytes)};
    }
    const bool segment_full = files_->writer.valid() && segments_.back().bytes > 0 &&
                              segments_.back().bytes + record_bytes > options_.segment_bytes;
    if (!files_->writer.valid() || segment_full) {
      if (Result<void> rolled = Roll(); !rolled.ok()) return rolled;
    }
    if (Result<void> written = WriteRecord(payload); !written.ok()) return written;
    ++counters_.appended_batches;
    counters_.appended_spans += spans.size();
    return {};
  } catch (const std::bad_alloc&) {
    return OutOfMemory(fmt::format("spooling a batch of {} span(s)", spans.size()));
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInternal, fmt::format("span spool: {}", e.what())};
  }
}

// Closes the writer's segment, if any, and starts the next one.
Result<void> SpanSpool::Roll() {
  if (files_->writer.valid()) {
    // The one sync a segment gets: once closed it is never written again, so this makes it durable
    // against power loss at the cost of one flush per segment_bytes, not one per batch.
    if (::fdatasync(files_->writer.get()) != 0) {
      const int error = errno;
      spdlog::warn("span spool: fdatasync {}: {}", SegmentPath(files_->writer_segment).string(),
                   ErrnoText(error));
    }
    files_->writer.Reset();
  }
  const std::uint64_t sequence = next_sequence_;
  const fs::path path = SegmentPath(sequence);
  UniqueFd fd = OpenFile(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0600);
  if (!fd.valid()) return IoError("cannot create", path, errno);
  ++next_sequence_;
  segments_.push_back(Segment{.sequence = sequence});
  files_->writer = std::move(fd);
  files_->writer_segment = sequence;
  return {};
}

Result<void> SpanSpool::WriteRecord(std::string_view payload) {
  Segment& tail = segments_.back();
  const std::array<char, kRecordHeaderBytes> header = RecordHeader(payload);
  int error = WriteAll(files_->writer.get(), std::string_view(header.data(), header.size()));
  if (error == 0) error = WriteAll(files_->writer.get(), payload);
  if (error != 0) {
    // Cut the partial record off so that the next append starts on a record boundary. If that fails
    // too, stop writing to this segment: readers never look past `tail.bytes`, and the next Open()
    // truncates what is left.
    if (::ftruncate(files_->writer.get(), static_cast<off_t>(tail.bytes)) != 0) files_->writer.Reset();
    return IoError("writing", SegmentPath(tail.sequence), error);
  }
  const std::uint64_t record_bytes = kRecordHeaderBytes + payload.size();
  tail.bytes += record_bytes;
  ++tail.pending_records;
  unacknowledged_bytes_ += record_bytes;
  ++unacknowledged_batches_;
  return {};
}

Result<std::optional<SpooledBatch>> SpanSpool::Peek() {
  try {
    while (!segments_.empty()) {
      const Segment& head = segments_.front();
      if (head.pending_records == 0) {
        // A new segment whose first write failed: the writer's is simply empty, any other is dropped.
        if (files_->writer.valid() && files_->writer_segment == head.sequence) break;
        DeleteHead();
        continue;
      }
      Result<int> fd = HeadReader();
      if (!fd.ok()) return fd.error();
      Result<RecordRead> record =
          ReadRecord(*fd, SegmentPath(head.sequence), head_offset_, head.bytes, payload_);
      if (!record.ok()) return record.error();
      if (!record->good) {
        // It was checked when written or recovered, so the disk changed under us; framing after it is
        // as doubtful as at Open().
        DropRestOfHead(record->problem);
        continue;
      }
      Result<std::vector<Span>> spans = DecodeSpans(payload_);
      if (!spans.ok()) {
        // Framed and checksummed, so only this record is bad (e.g. written by a newer build): skip it.
        ++counters_.corrupt_records;
        counters_.corrupt_bytes += record->end - head_offset_;
        spdlog::warn("span spool: {}: dropping the record at byte {}: {}",
                     SegmentPath(head.sequence).string(), head_offset_, spans.error().message);
        AdvanceHead(record->end);
        continue;
      }
      SpooledBatch batch;
      batch.spans = std::move(spans).value();
      batch.position.segment_ = head.sequence;
      batch.position.offset_ = head_offset_;
      batch.position.next_offset_ = record->end;
      batch.position.spans_ = batch.spans.size();
      return std::optional<SpooledBatch>(std::move(batch));
    }
    return std::optional<SpooledBatch>();
  } catch (const std::bad_alloc&) {
    return OutOfMemory("reading a spooled batch");
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInternal, fmt::format("span spool: {}", e.what())};
  }
}

// A descriptor for reading the head segment, opened once per segment.
Result<int> SpanSpool::HeadReader() {
  const std::uint64_t sequence = segments_.front().sequence;
  if (!files_->reader.valid() || files_->reader_segment != sequence) {
    const fs::path path = SegmentPath(sequence);
    files_->reader = OpenFile(path, O_RDONLY);
    if (!files_->reader.valid()) return IoError("cannot open", path, errno);
    files_->reader_segment = sequence;
  }
  return files_->reader.get();
}

Result<void> SpanSpool::Acknowledge(const SpooledBatch& batch) {
  const SpoolPosition& position = batch.position;
  if (segments_.empty() || position.segment_ != segments_.front().sequence ||
      position.offset_ != head_offset_ || position.next_offset_ <= position.offset_ ||
      position.next_offset_ > segments_.front().bytes) {
    return InvalidArgument(
        "span spool: Acknowledge() of a batch that is not the oldest pending one (acknowledged already?)");
  }
  ++counters_.drained_batches;
  counters_.drained_spans += position.spans_;
  AdvanceHead(position.next_offset_);
  if (++acknowledgements_since_cursor_write_ >= kAcknowledgementsPerCursorWrite) PersistCursor();
  return {};
}

// Moves the cursor past the head record that ends at `next_offset`, deleting the segment once every
// record in it is behind the cursor.
void SpanSpool::AdvanceHead(std::uint64_t next_offset) {
  Segment& head = segments_.front();
  unacknowledged_bytes_ -= next_offset - head_offset_;
  --unacknowledged_batches_;
  --head.pending_records;
  head_offset_ = next_offset;
  if (head.pending_records == 0) DeleteHead();
}

void SpanSpool::DropRestOfHead(std::string_view problem) {
  const Segment& head = segments_.front();
  ++counters_.corrupt_records;
  counters_.corrupt_bytes += head.bytes - head_offset_;
  spdlog::warn("span spool: {}: {} at byte {}; dropping the rest of the segment ({} batch(es), {} bytes)",
               SegmentPath(head.sequence).string(), problem, head_offset_, head.pending_records,
               head.bytes - head_offset_);
  DeleteHead();
}

// Deletes the head segment, whatever in it is still pending. Its deletion is what persists the
// progress through it: a cursor file naming it is then outdated but harmless.
void SpanSpool::DeleteHead() {
  const Segment head = segments_.front();
  if (files_->reader_segment == head.sequence) files_->reader.Reset();
  if (files_->writer_segment == head.sequence) files_->writer.Reset();
  unacknowledged_bytes_ -= head.bytes - head_offset_;
  unacknowledged_batches_ -= head.pending_records;
  segments_.pop_front();
  head_offset_ = 0;
  RemoveSegmentFile(head.sequence);
}

// A failure is only logged: the segment's batches are acknowledged, and if the file stays, the next
// Open() delivers them again (at-least-once) and retries the deletion.
void SpanSpool::RemoveSegmentFile(std::uint64_t sequence) const {
  const fs::path path = SegmentPath(sequence);
  if (::unlink(path.c_str()) != 0) {
    const int error = errno;
    if (error != ENOENT) spdlog::warn("span spool: cannot delete {}: {}", path.string(), ErrnoText(error));
  }
}

// Writes the cursor to a temporary file and renames it over the old one, so a reader never sees half
// a cursor. No fsync: a cursor lost to a power loss only means batches delivered again.
void SpanSpool::PersistCursor() {
  acknowledgements_since_cursor_write_ = 0;
  const Cursor cursor = segments_.empty()
                            ? Cursor{.sequence = next_sequence_, .offset = 0}
                            : Cursor{.sequence = segments_.front().sequence, .offset = head_offset_};
  std::array<char, kCursorBytes> bytes{};
  PutU32(bytes.data(), kCursorMagic);
  PutU64(bytes.data() + 4, cursor.sequence);
  PutU64(bytes.data() + 12, cursor.offset);
  PutU32(bytes.data() + 20, Crc32c(std::string_view(bytes.data(), 20)));

  const fs::path temp = options_.directory / kCursorTempFileName;
  const fs::path path = options_.directory / kCursorFileName;
  int error = 0;
  {
    const UniqueFd fd = OpenFile(temp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    error = fd.valid() ? WriteAll(fd.get(), std::string_view(bytes.data(), bytes.size())) : errno;
  }
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    spdlog::warn("span spool: cannot write {}: {} (batches may be delivered again after a restart)",
                 path.string(), ErrnoText(error));
  }
}

}  // namespace sparktrace::tracing::store
