// RelayQueue: appending into receive blocks, moving bytes to an evbuffer without copying, clearing.
#include "proxy/receive_blocks.h"

#include <event2/buffer.h>
#include <gtest/gtest.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "tests/unit/proxy/receive_blocks_test_support.h"

namespace sparktrace::proxy {
namespace {

struct EvbufferFree {
  void operator()(evbuffer* buffer) const { evbuffer_free(buffer); }
};
using EvbufferPtr = std::unique_ptr<evbuffer, EvbufferFree>;

EvbufferPtr NewEvbuffer() {
  EvbufferPtr buffer(evbuffer_new());
  EXPECT_NE(buffer, nullptr);
  return buffer;
}

// The evbuffer's chunks as it holds them (evbuffer_peek: nothing is copied, moved or released).
std::vector<iovec> Chunks(evbuffer* buffer) {
  const int count = evbuffer_peek(buffer, -1, nullptr, nullptr, 0);
  std::vector<iovec> chunks(static_cast<std::size_t>(std::max(count, 0)));
  if (!chunks.empty()) evbuffer_peek(buffer, -1, nullptr, chunks.data(), count);
  return chunks;
}

// The evbuffer's contents, read without draining it.
Bytes Contents(evbuffer* buffer) {
  Bytes out;
  for (const iovec& chunk : Chunks(buffer)) {
    const auto* begin = static_cast<const std::uint8_t*>(chunk.iov_base);
    out.insert(out.end(), begin, begin + chunk.iov_len);
  }
  return out;
}

// One on_stored call.
struct Stored {
  ReceiveBlock* block;
  std::size_t offset;
  std::size_t size;
};

// Appends `bytes` and returns the ranges on_stored reported.
std::vector<Stored> AppendRecording(RelayQueue& queue, std::span<const std::uint8_t> bytes) {
  std::vector<Stored> stored;
  queue.Append(bytes, [&](ReceiveBlock* block, std::size_t offset, std::size_t size) {
    stored.push_back({block, offset, size});
  });
  return stored;
}

// Checks that every chunk of `buffer` lies inside one of `blocks`: the bytes were referenced, not
// copied into evbuffer memory.
void ExpectChunksInsideBlocks(evbuffer* buffer, const std::set<ReceiveBlock*>& blocks) {
  for (const iovec& chunk : Chunks(buffer)) {
    const auto* begin = static_cast<const std::uint8_t*>(chunk.iov_base);
    const bool inside = std::any_of(blocks.begin(), blocks.end(), [&](ReceiveBlock* block) {
      return begin >= block->data() && begin + chunk.iov_len <= block->data() + kBlock;
    });
    EXPECT_TRUE(inside) << "a chunk of " << chunk.iov_len << " bytes is not inside a receive block";
  }
}

// --- RelayQueue::Append --------------------------------------------------------------------------

TEST(ReceiveBlocksTest, AppendLargePayloadSpansBlocks) {
  ReceiveBlockPool pool;
  const Bytes payload = Pattern(3 * kBlock + 100, 1);
  {
    RelayQueue queue(pool);
    const std::vector<Stored> stored = AppendRecording(queue, payload);
    ASSERT_EQ(stored.size(), 4U);
    std::size_t offset = 0;
    for (std::size_t i = 0; i < stored.size(); ++i) {
      SCOPED_TRACE(testing::Message() << "range " << i);
      EXPECT_EQ(stored[i].offset, 0U) << "each range starts a new block";
      EXPECT_EQ(stored[i].size, i < 3 ? kBlock : 100U);
      EXPECT_EQ(stored[i].block->used(), stored[i].size);
      // The bytes were copied into the block: same content, other memory.
      const std::uint8_t* in_block = stored[i].block->data() + stored[i].offset;
      EXPECT_NE(in_block, payload.data() + offset);
      EXPECT_TRUE(std::equal(in_block, in_block + stored[i].size,
                             payload.begin() + static_cast<std::ptrdiff_t>(offset)));
      offset += stored[i].size;
    }
    EXPECT_EQ(offset, payload.size());
    const std::set<ReceiveBlock*> distinct = {stored[0].block, stored[1].block, stored[2].block,
                                              stored[3].block};
    EXPECT_EQ(distinct.size(), 4U);
    EXPECT_EQ(queue.size(), payload.size());
    EXPECT_FALSE(queue.empty());
    EXPECT_EQ(pool.blocks_in_use(), 4U);
  }
  EXPECT_EQ(pool.blocks_in_use(), 0U) << "the queue released its blocks";
}

TEST(ReceiveBlocksTest, AppendExactlyOneBlockThenMore) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  const Bytes first = Pattern(kBlock, 2);
  const std::vector<Stored> a = AppendRecording(queue, first);
  ASSERT_EQ(a.size(), 1U);
  EXPECT_EQ(a[0].size, kBlock);
  EXPECT_EQ(a[0].block->room(), 0U);
  EXPECT_EQ(pool.blocks_in_use(), 1U) << "a full block does not take the next one before it is needed";
  const Bytes second = Pattern(10, 3);
  const std::vector<Stored> b = AppendRecording(queue, second);
  ASSERT_EQ(b.size(), 1U);
  EXPECT_NE(b[0].block, a[0].block);
  EXPECT_EQ(b[0].offset, 0U);
  EXPECT_EQ(pool.blocks_in_use(), 2U);
  EXPECT_EQ(queue.size(), kBlock + 10);
}

TEST(ReceiveBlocksTest, AppendEmptyPayloadStoresNothing) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EXPECT_TRUE(AppendRecording(queue, {}).empty());
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, AppendManySmallPayloadsFillBlocksInOrder) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  constexpr std::size_t kPayload = 7;  // does not divide kCapacity: payloads straddle blocks
  constexpr std::size_t kCount = 10'000;
  const Bytes all = Pattern(kPayload * kCount, 4);
  std::vector<Stored> stored;
  for (std::size_t i = 0; i < kCount; ++i) {
    const std::span<const std::uint8_t> payload(all.data() + i * kPayload, kPayload);
    std::size_t reported = 0;
    queue.Append(payload, [&](ReceiveBlock* block, std::size_t offset, std::size_t size) {
      EXPECT_GT(size, 0U);
      stored.push_back({block, offset, size});
      reported += size;
    });
    ASSERT_EQ(reported, kPayload) << "payload " << i;
  }
  EXPECT_EQ(queue.size(), all.size());
  // The ranges tile the blocks: each one continues the previous, or starts the next block at 0.
  Bytes gathered;
  std::set<ReceiveBlock*> blocks;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const Stored& range = stored[i];
    ASSERT_LE(range.offset + range.size, kBlock);
    if (i > 0 && stored[i - 1].block == range.block) {
      ASSERT_EQ(range.offset, stored[i - 1].offset + stored[i - 1].size);
    } else {
      ASSERT_EQ(range.offset, 0U);
      if (i > 0) {
        ASSERT_EQ(stored[i - 1].offset + stored[i - 1].size, kBlock) << "a block was left part empty";
      }
    }
    blocks.insert(range.block);
    gathered.insert(gathered.end(), range.block->data() + range.offset,
                    range.block->data() + range.offset + range.size);
  }
  EXPECT_EQ(gathered, all);
  const std::size_t expected_blocks = (all.size() + kBlock - 1) / kBlock;
  EXPECT_EQ(blocks.size(), expected_blocks);
  EXPECT_EQ(pool.blocks_in_use(), expected_blocks);
  // kCount - 1 payloads ended inside a block, a few straddled a boundary.
  EXPECT_EQ(stored.size(), kCount + expected_blocks - 1);
}

// --- RelayQueue::MoveTo --------------------------------------------------------------------------

TEST(ReceiveBlocksTest, MoveToMovesExactlyNBytesInOrderWithoutCopying) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EvbufferPtr out = NewEvbuffer();
  const Bytes all = Pattern(100'000, 5);
  std::set<ReceiveBlock*> blocks;
  for (std::size_t offset = 0; offset < all.size(); offset += 1000) {
    for (const Stored& range : AppendRecording(queue, {all.data() + offset, 1000}))
      blocks.insert(range.block);
  }
  ASSERT_EQ(queue.size(), all.size());

  queue.MoveTo(out.get(), 0);
  EXPECT_EQ(evbuffer_get_length(out.get()), 0U);
  EXPECT_EQ(queue.size(), all.size());

  queue.MoveTo(out.get(), 50'000);  // ends inside the second block
  EXPECT_EQ(evbuffer_get_length(out.get()), 50'000U);
  EXPECT_EQ(queue.size(), all.size() - 50'000);
  EXPECT_EQ(Contents(out.get()), Bytes(all.begin(), all.begin() + 50'000));
  ExpectChunksInsideBlocks(out.get(), blocks);

  queue.MoveTo(out.get(), 1);
  queue.MoveTo(out.get(), queue.size());
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(Contents(out.get()), all);
  ExpectChunksInsideBlocks(out.get(), blocks);
}

TEST(ReceiveBlocksTest, MoveToByteByByteAcrossABlockBoundary) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EvbufferPtr out = NewEvbuffer();
  const Bytes all = Pattern(kBlock + 64, 6);
  AppendRecording(queue, all);
  queue.MoveTo(out.get(), kBlock - 64);
  for (int i = 0; i < 128; ++i) queue.MoveTo(out.get(), 1);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(Contents(out.get()), all);
}

TEST(ReceiveBlocksTest, InterleavedAppendAndMoveToKeepTheByteStream) {
  ReceiveBlockPool pool;
  Bytes appended;
  {
    RelayQueue queue(pool);
    EvbufferPtr out = NewEvbuffer();
    std::mt19937 random(20240611);
    for (int round = 0; round < 300; ++round) {
      const std::size_t size = std::uniform_int_distribution<std::size_t>(0, 40'000)(random);
      const Bytes payload = Pattern(size, static_cast<std::uint8_t>(round));
      appended.insert(appended.end(), payload.begin(), payload.end());
      AppendRecording(queue, payload);
      const std::size_t n = std::uniform_int_distribution<std::size_t>(0, queue.size())(random);
      const std::size_t before = evbuffer_get_length(out.get());
      queue.MoveTo(out.get(), n);
      ASSERT_EQ(evbuffer_get_length(out.get()), before + n);
      // Now and then the "kernel" takes some bytes, as the socket write would.
      if (round % 7 == 0) {
        const std::size_t written = evbuffer_get_length(out.get()) / 2;
        Bytes taken(written);
        ASSERT_EQ(evbuffer_remove(out.get(), taken.data(), written), static_cast<int>(written));
        ASSERT_TRUE(std::equal(taken.begin(), taken.end(), appended.begin()));
        appended.erase(appended.begin(), appended.begin() + static_cast<std::ptrdiff_t>(written));
      }
    }
    queue.MoveTo(out.get(), queue.size());
    EXPECT_EQ(Contents(out.get()), appended);
    EXPECT_GT(pool.blocks_in_use(), 0U);
  }
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, EvbufferKeepsBlocksUntilItReleasesThem) {
  ReceiveBlockPool pool;
  EvbufferPtr out = NewEvbuffer();
  const Bytes all = Pattern(3 * kBlock, 7);
  {
    RelayQueue queue(pool);
    AppendRecording(queue, all);
    ASSERT_EQ(pool.blocks_in_use(), 3U);
    queue.MoveTo(out.get(), all.size());
    EXPECT_EQ(pool.blocks_in_use(), 3U);
  }
  // The queue is gone; the evbuffer still references the three blocks and their bytes are intact.
  EXPECT_EQ(pool.blocks_in_use(), 3U);
  EXPECT_EQ(Contents(out.get()), all);
  // Written out, block by block: each is released as the evbuffer lets go of its last byte.
  ASSERT_EQ(evbuffer_drain(out.get(), kBlock - 1), 0);
  EXPECT_EQ(pool.blocks_in_use(), 3U);
  ASSERT_EQ(evbuffer_drain(out.get(), 1), 0);
  EXPECT_EQ(pool.blocks_in_use(), 2U);
  ASSERT_EQ(evbuffer_drain(out.get(), kBlock), 0);
  EXPECT_EQ(pool.blocks_in_use(), 1U);
  out.reset();
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, BlocksFreeOnlyWhenBothQueueAndEvbufferLetGo) {
  ReceiveBlockPool pool;
  auto queue = std::make_unique<RelayQueue>(pool);
  EvbufferPtr out = NewEvbuffer();
  AppendRecording(*queue, Pattern(kBlock + 10, 8));
  queue->MoveTo(out.get(), 20);  // the evbuffer and the queue share the first block
  EXPECT_EQ(queue->Clear(), kBlock - 10);
  EXPECT_GE(pool.blocks_in_use(), 1U) << "the evbuffer still holds the first block";
  EXPECT_EQ(Contents(out.get()), Pattern(20, 8));
  out.reset();
  EXPECT_EQ(pool.blocks_in_use(), 0U) << "the cleared queue keeps no block";
  queue.reset();
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, MoveToAFrozenEvbufferDropsTheBytesWithoutLeaking) {
  // evbuffer_add_reference fails (here: the buffer's end is frozen) without calling the cleanup:
  // MoveTo must give back the reference it took for the evbuffer.
  ReceiveBlockPool pool;
  EvbufferPtr out = NewEvbuffer();
  {
    RelayQueue queue(pool);
    AppendRecording(queue, Pattern(2 * kBlock, 9));
    ASSERT_EQ(evbuffer_freeze(out.get(), /*at_front=*/0), 0);
    queue.MoveTo(out.get(), kBlock + 5);
    EXPECT_EQ(evbuffer_get_length(out.get()), 0U);
    EXPECT_EQ(queue.size(), kBlock - 5);
  }
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

// --- RelayQueue::Clear ---------------------------------------------------------------------------

TEST(ReceiveBlocksTest, ClearReturnsDroppedBytesAndReleasesBlocks) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EXPECT_EQ(queue.Clear(), 0U);
  AppendRecording(queue, Pattern(5 * kBlock + 10, 10));
  ASSERT_EQ(pool.blocks_in_use(), 6U);
  EXPECT_EQ(queue.Clear(), 5 * kBlock + 10);
  EXPECT_EQ(queue.size(), 0U);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(pool.blocks_in_use(), 0U) << "nothing promised: no block is kept, not even the one being filled";
  EXPECT_EQ(queue.Clear(), 0U);

  // The queue works on after a Clear.
  const Bytes more = Pattern(100, 11);
  AppendRecording(queue, more);
  EvbufferPtr out = NewEvbuffer();
  queue.MoveTo(out.get(), 100);
  EXPECT_EQ(Contents(out.get()), more);
}

TEST(ReceiveBlocksTest, ClearAfterPartialMoveReturnsTheRest) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EvbufferPtr out = NewEvbuffer();
  AppendRecording(queue, Pattern(1000, 12));
  queue.MoveTo(out.get(), 300);
  EXPECT_EQ(queue.Clear(), 700U);
  EXPECT_EQ(evbuffer_get_length(out.get()), 300U);
}

TEST(ReceiveBlocksTest, ClearKeepsPromisedBytes) {
  // nghttp2 framed a DATA frame for the first bytes and will ask for them later, maybe after the
  // call failed: Clear must keep exactly those, even when they end inside a block.
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  const Bytes all = Pattern(2 * kBlock + 100, 18);
  AppendRecording(queue, all);
  ASSERT_EQ(pool.blocks_in_use(), 3U);
  queue.Promise(kBlock + 50);
  EXPECT_EQ(queue.Clear(), all.size() - (kBlock + 50));
  EXPECT_EQ(queue.size(), kBlock + 50);
  EXPECT_EQ(pool.blocks_in_use(), 2U) << "the third block held nothing promised";
  EXPECT_EQ(queue.Clear(), 0U) << "still promised";
  EXPECT_EQ(queue.size(), kBlock + 50);

  EvbufferPtr out = NewEvbuffer();
  queue.MoveTo(out.get(), kBlock + 50);
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(Contents(out.get()), Bytes(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kBlock + 50)));
  out.reset();
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, PromiseBeyondTheQueueKeepsEverything) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  AppendRecording(queue, Pattern(100, 19));
  queue.Promise(1000);
  EXPECT_EQ(queue.Clear(), 0U);
  EXPECT_EQ(queue.size(), 100U);
}

TEST(ReceiveBlocksTest, MoveToEndsThePromise) {
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EvbufferPtr out = NewEvbuffer();
  AppendRecording(queue, Pattern(1000, 20));
  queue.Promise(500);
  queue.MoveTo(out.get(), 500);
  EXPECT_EQ(queue.Clear(), 500U) << "the promised bytes were sent; the rest is not promised";
  EXPECT_TRUE(queue.empty());
}

TEST(ReceiveBlocksTest, EmptiedQueueDoesNotPinABlock) {
  // An idle stream must not hold a block for bytes already handed to the output buffer.
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EvbufferPtr out = NewEvbuffer();
  AppendRecording(queue, Pattern(100, 21));
  queue.MoveTo(out.get(), 100);
  EXPECT_EQ(pool.blocks_in_use(), 1U) << "the evbuffer's reference";
  out.reset();
  EXPECT_EQ(pool.blocks_in_use(), 0U) << "the queue kept none, though it lives on";
  // It goes on with a new block.
  const Bytes more = Pattern(10, 22);
  const std::vector<Stored> stored = AppendRecording(queue, more);
  ASSERT_EQ(stored.size(), 1U);
  EXPECT_EQ(stored[0].offset, 0U);
  out = NewEvbuffer();
  queue.MoveTo(out.get(), 10);
  EXPECT_EQ(Contents(out.get()), more);
}

TEST(ReceiveBlocksTest, MoveToMoreThanQueuedPadsWithZeros) {
  // Never expected (n <= size() is the contract), but the frame header for n bytes may already
  // be out: the queued bytes go first, then zeros, so the connection's framing holds.
  ReceiveBlockPool pool;
  RelayQueue queue(pool);
  EvbufferPtr out = NewEvbuffer();
  const Bytes queued = Pattern(10, 23);
  AppendRecording(queue, queued);
  queue.MoveTo(out.get(), 15);
  EXPECT_TRUE(queue.empty());
  Bytes expected = queued;
  expected.resize(15, 0);
  EXPECT_EQ(Contents(out.get()), expected);
}

}  // namespace
}  // namespace sparktrace::proxy
