#pragma once
// The state of one direction of a proxied call: messages read from one side, waiting for or being
// written to the other. It holds at most `window` messages (queued plus the one being written), so
// a slow reader stalls the sender through gRPC flow control instead of growing our memory.
// Not thread-safe: ProxyCall guards it with its mutex.

#include <cstddef>
#include <deque>

#include <grpcpp/support/byte_buffer.h>

namespace sparktrace::proxy {

class MessagePump {
 public:
  explicit MessagePump(std::size_t window) : window_(window) {}

  // The target of the read in flight, and the source of the write in flight: gRPC keeps pointers
  // to them until the operation completes.
  grpc::ByteBuffer* read_target() { return &reading_; }
  const grpc::ByteBuffer* write_source() const { return &writing_; }

  bool CanStartRead() const { return !read_pending_ && !source_done_ && Buffered() < window_; }
  void ReadStarted() { read_pending_ = true; }
  // A successful read: the message moves into the queue.
  void ReadSucceeded() {
    read_pending_ = false;
    // ByteBuffer has no move in gRPC 1.51 and copying duplicates the slice list; Swap is free.
    queued_.emplace_back();
    queued_.back().Swap(&reading_);
  }
  // The source has no more messages (half-close, end of stream, or failure).
  void ReadFailed() {
    read_pending_ = false;
    source_done_ = true;
  }

  bool CanStartWrite() const { return !write_pending_ && !queued_.empty(); }
  void WriteStarted() {
    writing_.Swap(&queued_.front());
    queued_.pop_front();
    write_pending_ = true;
  }
  void WriteFinished() {
    write_pending_ = false;
    writing_.Clear();
  }

  bool read_pending() const { return read_pending_; }
  bool write_pending() const { return write_pending_; }
  bool source_done() const { return source_done_; }
  // Nothing queued and nothing being written (or, `ignoring_write`, nothing queued behind the
  // message being written).
  bool Drained(bool ignoring_write = false) const { return queued_.empty() && (ignoring_write || !write_pending_); }
  std::size_t Buffered() const { return queued_.size() + (write_pending_ ? 1 : 0); }

 private:
  std::size_t window_;
  std::deque<grpc::ByteBuffer> queued_;
  grpc::ByteBuffer reading_;
  grpc::ByteBuffer writing_;
  bool read_pending_ = false;
  bool write_pending_ = false;
  bool source_done_ = false;
};

}  // namespace sparktrace::proxy
