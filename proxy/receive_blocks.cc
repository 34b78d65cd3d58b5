#include "proxy/receive_blocks.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace sparktrace::proxy {

std::size_t ReceiveBlock::Append(std::span<const std::uint8_t> bytes) {
  const std::size_t n = std::min(bytes.size(), room());
  std::memcpy(data_ + used_, bytes.data(), n);
  used_ += n;
  return n;
}

void ReceiveBlock::Unref() {
  if (--refs_ == 0) pool_->Recycle(this);
}

ReceiveBlockPool::~ReceiveBlockPool() = default;

ReceiveBlock* ReceiveBlockPool::Take() {
  std::unique_ptr<ReceiveBlock> block;
  if (idle_.empty()) {
    block = std::make_unique<ReceiveBlock>();
    block->pool_ = this;
  } else {
    block = std::move(idle_.back());
    idle_.pop_back();
  }
  block->used_ = 0;
  block->refs_ = 1;
  ++in_use_;
  // Owned by its references from here on; Recycle takes ownership back when the last one goes.
  return block.release();
}

void ReceiveBlockPool::Recycle(ReceiveBlock* block) {
  std::unique_ptr<ReceiveBlock> owned(block);
  --in_use_;
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(owned));
}

BlockPiece::BlockPiece(ReceiveBlock* block, std::size_t offset, std::size_t size)
    : block_(block), offset_(offset), size_(size) {
  block_->Ref();
}

BlockPiece::BlockPiece(BlockPiece&& other) noexcept
    : block_(std::exchange(other.block_, nullptr)), offset_(other.offset_), size_(other.size_) {}

BlockPiece& BlockPiece::operator=(BlockPiece&& other) noexcept {
  if (this != &other) {
    if (block_) block_->Unref();
    block_ = std::exchange(other.block_, nullptr);
    offset_ = other.offset_;
    size_ = other.size_;
  }
  return *this;
}

BlockPiece::~BlockPiece() {
  if (block_) block_->Unref();
}

RelayQueue::~RelayQueue() {
  pieces_.clear();
  ReleaseTail();
}

void RelayQueue::NewTail() {
  ReleaseTail();
  tail_ = pool_.Take();
}

void RelayQueue::StorePiece(std::size_t offset, std::size_t size) {
  size_ += size;
  // Consecutive payloads usually land next to each other in the same block: extend the last
  // piece instead of adding one, so a 4 MiB message is ~128 pieces, not one per DATA frame.
  if (!pieces_.empty()) {
    BlockPiece& last = pieces_.back();
    if (last.block() == tail_ && last.offset() + last.size() == offset) {
      last.Grow(size);
      return;
    }
  }
  pieces_.emplace_back(tail_, offset, size);
}

namespace {

// evbuffer's cleanup for referenced bytes: runs once the output buffer no longer needs them.
void ReleaseBlock(const void* /*data*/, size_t /*size*/, void* block) {
  static_cast<ReceiveBlock*>(block)->Unref();
}

}  // namespace

void RelayQueue::MoveTo(evbuffer* out, std::size_t n) {
  promised_ = 0;
  if (n > size_) {
    // Never expected: the frame header already went out for n bytes, and the connection's framing
    // must hold, so the missing bytes are zeros. The peer sees a corrupt message, not a hang.
    const std::vector<std::uint8_t> zeros(n - size_, 0);
    MoveTo(out, size_);
    evbuffer_add(out, zeros.data(), zeros.size());
    return;
  }
  size_ -= n;
  while (n > 0) {
    BlockPiece& front = pieces_.front();
    const std::size_t take = std::min(n, front.size());
    front.block()->Ref();  // the output buffer's reference, released by ReleaseBlock
    if (evbuffer_add_reference(out, front.bytes().data(), take, ReleaseBlock, front.block()) != 0) {
      front.block()->Unref();  // not added (out of memory): the connection fails on its own
    }
    n -= take;
    if (take == front.size()) {
      pieces_.pop_front();
    } else {
      front.DropFront(take);
    }
  }
  // An idle stream must not pin a block: 1,000 idle streams would otherwise hold 32 MiB for their
  // last few bytes. The output buffer keeps its own reference until the bytes are written.
  if (size_ == 0) ReleaseTail();
}

void RelayQueue::ReleaseTail() {
  if (tail_ == nullptr) return;
  tail_->Unref();
  tail_ = nullptr;
}

std::size_t RelayQueue::Clear() {
  const std::size_t kept = std::min(promised_, size_);
  const std::size_t dropped = size_ - kept;
  std::size_t left = kept;
  std::size_t keep_pieces = 0;
  for (BlockPiece& piece : pieces_) {
    if (left == 0) break;
    if (piece.size() > left) piece.Shrink(piece.size() - left);
    left -= piece.size();
    ++keep_pieces;
  }
  pieces_.erase(pieces_.begin() + static_cast<std::ptrdiff_t>(keep_pieces), pieces_.end());
  size_ = kept;
  ReleaseTail();  // nothing more is appended behind promised bytes of a failed call
  return dropped;
}

}  // namespace sparktrace::proxy
