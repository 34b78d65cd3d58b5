#pragma once
// SpanSpool: an on-disk queue of span batches for the store exporter. While the trace store (SQLite
// or PostgreSQL) is slow or down, the exporter appends each batch it could not write; when the store
// is back it drains them, oldest first: Peek(), write to the store, Acknowledge(). Only a full spool
// refuses a batch, and the caller counts that drop.
//
// On disk, in `directory`: `lock` (held with flock while the spool is open), segment files
// `segment-<20-digit sequence>.spool` holding records back to back, and `cursor`, the position of the
// oldest unacknowledged record. A record is a 16-byte header (magic "STS1", payload length, CRC32C of
// the payload, CRC32C of those 12 bytes) followed by the payload, one batch in the encoding of
// tracing/store/spool/span_codec.h (the byte layout is tracing/store/spool/spool_format.h's, the file access
// tracing/store/spool/spool_files.h's). Segments roll at `segment_bytes`; a segment whose records are all
// acknowledged is deleted.
//
// Durability: delivery is at-least-once, never at-most-once, because the store's writes are
// idempotent upserts keyed by (trace id, span id).
// - Append() does not fsync: a killed or crashed process loses nothing Append() returned for (it is in
//   the page cache); only a power loss or kernel crash can lose recent appends. A segment is
//   fdatasync'ed when it is closed.
// - The cursor is persisted lazily (every kAcknowledgementsPerCursorWrite acknowledgements and on
//   destruction, by write-temp-then-rename), and a deleted segment records its own progress. After a
//   crash, up to that many batches already drained are delivered again; nothing unacknowledged is lost.
// - Open() recovers what it finds: a torn or corrupt record ends its segment there (the file is
//   truncated to the last good record; at a segment's tail that is the crash mid-write case), counted
//   in corrupt_records and corrupt_bytes. Open() reads every spooled byte once to check it, so opening a
//   full 1 GiB spool takes a few seconds.
//
// Bounds: bytes() (the unacknowledged records) never exceeds max_bytes through Append(). The disk also
// holds the acknowledged head of the oldest segment until that segment is deleted: at most one segment
// (or one oversized record) more.
//
// Threads: one thread uses a spool at a time (the exporter thread); no method is synchronised. One
// process per directory: the lock file refuses a second Open() of the same directory, in this process
// or another.
//
// Ownership: the caller owns the SpanSpool; it owns its files' descriptors and closes them on
// destruction. Batches returned by Peek() are copies the caller owns.
//
// Errors: no exception leaves this class. Open() fails with kInvalidArgument for bad options, kIo for
// a directory it cannot create, lock or read (the message names the directory), and kUnavailable when
// another spool holds the directory. Append() fails with kUnavailable and a message starting
// "spool full" when the batch would not fit, having written nothing; with kIo when a write fails (the
// partial record is cut off again). Peek() fails with kIo when a read fails (retry later); corrupt
// records it meets are skipped and counted, never returned as errors.

#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"

namespace sparktrace::tracing::store {

struct SpanSpoolOptions {
  // Created (mode 0700, parents as needed) if absent; an existing directory's mode is left alone.
  std::filesystem::path directory;
  // The most unacknowledged bytes (record headers included) the spool holds; Append() refuses more.
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  // A segment file is closed and a new one started when the next record would take it past this. A
  // record larger than this gets a segment of its own.
  std::uint64_t segment_bytes = std::uint64_t{16} << 20;
};

// Monotonic since Open() (recovered_batches: found at Open()), for the exporter's metrics.
struct SpanSpoolCounters {
  std::uint64_t appended_batches = 0;
  std::uint64_t appended_spans = 0;
  std::uint64_t drained_batches = 0;  // acknowledged
  std::uint64_t drained_spans = 0;
  std::uint64_t rejected_full_batches = 0;  // refused by Append() as "spool full"
  std::uint64_t rejected_full_spans = 0;
  // Records found torn or corrupt, at Open() or by Peek(). A bad frame or checksum also drops the
  // rest of its segment (its framing cannot be trusted past that point); a record that is intact but
  // does not decode drops only itself. corrupt_bytes counts every byte dropped either way.
  std::uint64_t corrupt_records = 0;
  std::uint64_t corrupt_bytes = 0;
  std::uint64_t recovered_batches = 0;  // unacknowledged batches Open() found
  // Files named like segments that Open() left alone: symbolic links, other kinds of file, or files
  // of another user. Never opened, truncated or removed; their sequence numbers are not reused.
  std::uint64_t refused_files = 0;
};

// Where a peeked batch lies in the spool. Opaque: only the spool that returned it reads it.
class SpoolPosition {
 public:
  SpoolPosition() = default;

 private:
  friend class SpanSpool;
  std::uint64_t segment_ = 0;      // the segment's sequence number
  std::uint64_t offset_ = 0;       // where the record starts in it
  std::uint64_t next_offset_ = 0;  // where it ends
  std::size_t spans_ = 0;
};

struct SpooledBatch {
  std::vector<Span> spans;
  SpoolPosition position;
};

class SpanSpool {
 public:
  // Acknowledgements between two writes of the cursor file: at most this many batches are delivered
  // again after a crash.
  static constexpr std::uint64_t kAcknowledgementsPerCursorWrite = 64;

  // Creates and locks the directory and recovers the segments in it (see the header comment).
  static Result<std::unique_ptr<SpanSpool>> Open(const SpanSpoolOptions& options);

  // Persists the cursor (best effort) and closes the files; the spooled batches stay on disk.
  ~SpanSpool();
  SpanSpool(const SpanSpool&) = delete;
  SpanSpool& operator=(const SpanSpool&) = delete;

  // Appends the batch as one record after every other. An empty batch writes nothing. Errors: see
  // the header comment ("spool full" is kUnavailable and writes nothing).
  Result<void> Append(std::span<const Span> spans);

  // The oldest unacknowledged batch, or nullopt when there is none. Calling it again without
  // Acknowledge() returns the same batch.
  Result<std::optional<SpooledBatch>> Peek();

  // Marks the batch from the latest Peek() delivered; the next Peek() returns the one after it. Fails
  // with kInvalidArgument for any other batch (e.g. one acknowledged already).
  Result<void> Acknowledge(const SpooledBatch& batch);

  std::uint64_t bytes() const { return unacknowledged_bytes_; }
  std::uint64_t batches() const { return unacknowledged_batches_; }
  bool empty() const { return unacknowledged_batches_ == 0; }
  SpanSpoolCounters counters() const { return counters_; }

 private:
  // Lets Open() build a spool with std::make_unique while nobody else can.
  struct Passkey {
    explicit Passkey() = default;
  };

 public:
  // For std::make_unique in Open() only; use Open().
  SpanSpool(Passkey passkey, SpanSpoolOptions options);

 private:
  struct Segment {
    std::uint64_t sequence = 0;         // names the file
    std::uint64_t bytes = 0;            // where its last good record ends
    std::uint64_t pending_records = 0;  // good records not yet acknowledged
  };
  struct RecoveredSegment {
    Segment segment;
    std::uint64_t acknowledged_bytes = 0;  // the cursor within it, when it is the cursor's segment
  };
  class Files;  // the descriptors; defined in the .cc so that this header needs no POSIX

  Result<void> Lock();
  Result<void> Recover();
  Result<RecoveredSegment> RecoverSegment(std::uint64_t sequence, std::optional<std::uint64_t> cursor_offset);
  Result<void> Roll();
  Result<void> WriteRecord(std::string_view payload);
  Result<int> HeadReader();
  void AdvanceHead(std::uint64_t next_offset);
  void DropRestOfHead(std::string_view problem);
  void DeleteHead();
  void RemoveSegmentFile(std::uint64_t sequence) const;
  void PersistCursor();
  std::filesystem::path SegmentPath(std::uint64_t sequence) const;

  SpanSpoolOptions options_;
  std::unique_ptr<Files> files_;
  std::deque<Segment> segments_;     // oldest first; the last one takes appends while the writer is open
  std::uint64_t next_sequence_ = 1;  // for the next segment file
  std::uint64_t head_offset_ = 0;    // the cursor: the first unacknowledged byte of segments_.front()
  std::uint64_t unacknowledged_bytes_ = 0;
  std::uint64_t unacknowledged_batches_ = 0;
  std::uint64_t acknowledgements_since_cursor_write_ = 0;
  std::string payload_;  // the last record read, kept to reuse its capacity
  SpanSpoolCounters counters_;
};

}  // namespace sparktrace::tracing::store
