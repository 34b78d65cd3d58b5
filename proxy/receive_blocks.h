#pragma once
// Where the relay keeps DATA bytes between the side that received them and the side that sends
// them on.
//
// A DATA payload is copied once, into a ReceiveBlock, as nghttp2 hands it over (its pointers are
// into the socket read buffer, which is reused). From then on the bytes are shared, not copied:
// the RelayQueue of the stream direction holds references until they are written out, where the
// output buffer takes a reference of its own (evbuffer_add_reference) and releases it once the
// kernel has the bytes; a tap that needs a whole message (MessagePieces) holds references to the
// pieces of the current message until its last byte has arrived.
//
// Threads: a block pool and everything holding its blocks belong to one relay worker; reference
// counts are plain integers.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include <event2/buffer.h>

namespace sparktrace::proxy {

class ReceiveBlockPool;

class ReceiveBlock {  // NOLINT(cppcoreguidelines-pro-type-member-init): data_, see below
 public:
  static constexpr std::size_t kCapacity = std::size_t{32} * 1024;

  std::uint8_t* data() { return data_; }
  std::size_t used() const { return used_; }
  std::size_t room() const { return kCapacity - used_; }
  // Appends what fits; returns the bytes taken.
  std::size_t Append(std::span<const std::uint8_t> bytes);

  void Ref() { ++refs_; }
  void Unref();

 private:
  friend class ReceiveBlockPool;
  ReceiveBlockPool* pool_ = nullptr;
  std::uint32_t refs_ = 0;
  std::size_t used_ = 0;
  // Left uninitialised on purpose: every byte is written before it is read, and zero-filling 32 KiB
  // per fresh block would cost more than the copy it holds.
  std::uint8_t data_[kCapacity];
};

// Recycles blocks: a streaming call would otherwise allocate and free 32 KiB per 32 KiB relayed.
// Keeps at most kMaxIdle blocks for reuse; the rest go back to the allocator.
class ReceiveBlockPool {
 public:
  static constexpr std::size_t kMaxIdle = 64;

  ReceiveBlockPool() = default;
  ~ReceiveBlockPool();
  ReceiveBlockPool(const ReceiveBlockPool&) = delete;
  ReceiveBlockPool& operator=(const ReceiveBlockPool&) = delete;

  // An empty block holding one reference, the caller's.
  ReceiveBlock* Take();
  std::size_t blocks_in_use() const { return in_use_; }

 private:
  friend class ReceiveBlock;
  void Recycle(ReceiveBlock* block);

  std::vector<std::unique_ptr<ReceiveBlock>> idle_;
  std::size_t in_use_ = 0;
};

// A range of bytes inside a block, holding one reference to it.
class BlockPiece {
 public:
  BlockPiece(ReceiveBlock* block, std::size_t offset, std::size_t size);
  BlockPiece(BlockPiece&& other) noexcept;
  BlockPiece& operator=(BlockPiece&& other) noexcept;
  BlockPiece(const BlockPiece&) = delete;
  BlockPiece& operator=(const BlockPiece&) = delete;
  ~BlockPiece();

  std::span<const std::uint8_t> bytes() const { return {block_->data() + offset_, size_}; }
  ReceiveBlock* block() const { return block_; }
  std::size_t offset() const { return offset_; }
  std::size_t size() const { return size_; }
  void DropFront(std::size_t n) {
    offset_ += n;
    size_ -= n;
  }
  void Grow(std::size_t n) { size_ += n; }
  void Shrink(std::size_t n) { size_ -= n; }

 private:
  ReceiveBlock* block_;
  std::size_t offset_;
  std::size_t size_;
};

// Receives one stream direction's DATA payloads into blocks and keeps them until sent.
class RelayQueue {
 public:
  explicit RelayQueue(ReceiveBlockPool& pool) : pool_(pool) {}
  ~RelayQueue();
  RelayQueue(const RelayQueue&) = delete;
  RelayQueue& operator=(const RelayQueue&) = delete;

  // Copies `bytes` in; calls `on_stored(block, offset, size)` for every stored range, in order,
  // so that the caller may reference the stored bytes (a tap collecting a message).
  template <typename OnStored>
  void Append(std::span<const std::uint8_t> bytes, OnStored&& on_stored) {
    while (!bytes.empty()) {
      if (!tail_ || tail_->room() == 0) NewTail();
      const std::size_t offset = tail_->used();
      const std::size_t taken = tail_->Append(bytes);
      StorePiece(offset, taken);
      on_stored(tail_, offset, taken);
      bytes = bytes.subspan(taken);
    }
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The first `n` bytes are promised to a DATA frame nghttp2 has framed but not written yet
  // (it calls for them later, maybe after the call has failed): Clear keeps them.
  void Promise(std::size_t n) { promised_ = n; }
  // Moves the first `n` bytes (n <= size()) into `out` without copying them: `out` references
  // the blocks until it has written them. Ends the promise.
  void MoveTo(evbuffer* out, std::size_t n);
  // Forgets what is queued but promised bytes (the other side is gone, or the call failed);
  // returns the bytes dropped.
  std::size_t Clear();

 private:
  void NewTail();
  void ReleaseTail();
  void StorePiece(std::size_t offset, std::size_t size);

  ReceiveBlockPool& pool_;
  ReceiveBlock* tail_ = nullptr;  // the block being filled; one reference held by the queue
  std::deque<BlockPiece> pieces_;
  std::size_t size_ = 0;
  std::size_t promised_ = 0;
};

}  // namespace sparktrace::proxy
