// ReceiveBlockPool and BlockPiece: taking, recycling and releasing receive blocks, and their references.
#include <event2/buffer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "proxy/receive_blocks.h"
#include "tests/unit/proxy/receive_blocks_test_support.h"

namespace sparktrace::proxy {
namespace {

// --- ReceiveBlockPool ----------------------------------------------------------------------------

TEST(ReceiveBlocksTest, PoolTakeGivesAnEmptyBlockWithOneReference) {
  ReceiveBlockPool pool;
  ReceiveBlock* block = pool.Take();
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->used(), 0U);
  EXPECT_EQ(block->room(), kBlock);
  EXPECT_EQ(pool.blocks_in_use(), 1U);
  block->Ref();
  block->Unref();
  EXPECT_EQ(pool.blocks_in_use(), 1U);
  block->Unref();  // the caller's reference: the last
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, BlockAppendTakesWhatFits) {
  ReceiveBlockPool pool;
  ReceiveBlock* block = pool.Take();
  const Bytes big = Pattern(kBlock + 1, 13);
  EXPECT_EQ(block->Append({big.data(), 10}), 10U);
  EXPECT_EQ(block->used(), 10U);
  EXPECT_EQ(block->Append(big), kBlock - 10);
  EXPECT_EQ(block->room(), 0U);
  EXPECT_EQ(block->Append(big), 0U);
  EXPECT_TRUE(std::equal(block->data(), block->data() + 10, big.begin()));
  EXPECT_TRUE(std::equal(block->data() + 10, block->data() + kBlock, big.begin()));
  block->Unref();
}

TEST(ReceiveBlocksTest, PoolRecyclesReleasedBlocks) {
  ReceiveBlockPool pool;
  ReceiveBlock* first = pool.Take();
  const Bytes some = Pattern(500, 14);
  first->Append(some);
  first->Unref();
  ReceiveBlock* again = pool.Take();
  EXPECT_EQ(again, first) << "the released block is reused";
  EXPECT_EQ(again->used(), 0U) << "and comes back empty";
  EXPECT_EQ(again->room(), kBlock);
  EXPECT_EQ(pool.blocks_in_use(), 1U);
  again->Unref();
}

TEST(ReceiveBlocksTest, PoolKeepsAtMostMaxIdleBlocks) {
  ReceiveBlockPool pool;
  constexpr std::size_t kExtra = 6;
  constexpr std::size_t kTotal = ReceiveBlockPool::kMaxIdle + kExtra;
  std::vector<ReceiveBlock*> taken;
  for (std::size_t i = 0; i < kTotal; ++i) taken.push_back(pool.Take());
  EXPECT_EQ(std::set<ReceiveBlock*>(taken.begin(), taken.end()).size(), kTotal);
  EXPECT_EQ(pool.blocks_in_use(), kTotal);
  for (ReceiveBlock* block : taken) block->Unref();  // the first kMaxIdle are kept, the rest freed
  EXPECT_EQ(pool.blocks_in_use(), 0U);

  // The next kMaxIdle come from the idle blocks, without allocating: exactly the blocks released
  // first. The last kExtra were given back to the allocator, so none of them is among these
  // (were they kept too, the pool would hand them out first).
  std::vector<ReceiveBlock*> reused;
  for (std::size_t i = 0; i < ReceiveBlockPool::kMaxIdle; ++i) reused.push_back(pool.Take());
  EXPECT_EQ(std::set<ReceiveBlock*>(reused.begin(), reused.end()),
            std::set<ReceiveBlock*>(taken.begin(), taken.begin() + ReceiveBlockPool::kMaxIdle));
  // More still works (fresh blocks), all empty.
  for (std::size_t i = 0; i < kExtra; ++i) reused.push_back(pool.Take());
  for (ReceiveBlock* block : reused) EXPECT_EQ(block->used(), 0U);
  EXPECT_EQ(pool.blocks_in_use(), kTotal);
  for (ReceiveBlock* block : reused) block->Unref();
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

// --- BlockPiece ----------------------------------------------------------------------------------

TEST(ReceiveBlocksTest, BlockPieceHoldsAReference) {
  ReceiveBlockPool pool;
  ReceiveBlock* block = pool.Take();
  const Bytes bytes = Pattern(100, 15);
  block->Append(bytes);
  {
    BlockPiece piece(block, 10, 20);
    block->Unref();  // the piece's reference is the only one left
    EXPECT_EQ(pool.blocks_in_use(), 1U);
    EXPECT_EQ(piece.block(), block);
    EXPECT_EQ(piece.offset(), 10U);
    EXPECT_EQ(piece.size(), 20U);
    EXPECT_EQ(piece.bytes().data(), block->data() + 10);
    EXPECT_TRUE(std::equal(piece.bytes().begin(), piece.bytes().end(), bytes.begin() + 10));
    piece.DropFront(5);
    EXPECT_EQ(piece.bytes().data(), block->data() + 15);
    EXPECT_EQ(piece.size(), 15U);
    piece.Grow(30);
    EXPECT_EQ(piece.size(), 45U);
    EXPECT_EQ(piece.bytes().size(), 45U);
  }
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, BlockPieceMoveConstructionTransfersTheReference) {
  ReceiveBlockPool pool;
  ReceiveBlock* block = pool.Take();
  block->Append(Pattern(50, 16));
  auto original = std::make_unique<BlockPiece>(block, 5, 10);
  block->Unref();
  BlockPiece moved(std::move(*original));
  EXPECT_EQ(moved.block(), block);
  EXPECT_EQ(moved.offset(), 5U);
  EXPECT_EQ(moved.size(), 10U);
  EXPECT_EQ(original->block(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  original.reset();                       // destroying the moved-from piece releases nothing
  EXPECT_EQ(pool.blocks_in_use(), 1U);
  EXPECT_EQ(moved.bytes().data(), block->data() + 5);
}

TEST(ReceiveBlocksTest, BlockPieceMoveAssignmentReleasesTheOldBlock) {
  ReceiveBlockPool pool;
  ReceiveBlock* a = pool.Take();
  ReceiveBlock* b = pool.Take();
  {
    BlockPiece on_a(a, 0, 1);
    BlockPiece on_b(b, 0, 2);
    a->Unref();
    b->Unref();
    ASSERT_EQ(pool.blocks_in_use(), 2U);
    on_a = std::move(on_b);  // a's last reference goes
    EXPECT_EQ(pool.blocks_in_use(), 1U);
    EXPECT_EQ(on_a.block(), b);
    EXPECT_EQ(on_a.size(), 2U);
    EXPECT_EQ(on_b.block(), nullptr);  // NOLINT(bugprone-use-after-move)
    // Self-assignment (through a reference, as a container might) keeps the reference.
    BlockPiece& alias = on_a;
    on_a = std::move(alias);
    EXPECT_EQ(on_a.block(), b);
    EXPECT_EQ(pool.blocks_in_use(), 1U);
    // Assigning a moved-from piece empties the target and releases its block.
    on_a = std::move(on_b);
    EXPECT_EQ(on_a.block(), nullptr);
    EXPECT_EQ(pool.blocks_in_use(), 0U);
  }
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

TEST(ReceiveBlocksTest, BlockPiecesInAGrowingVectorKeepCountsRight) {
  ReceiveBlockPool pool;
  ReceiveBlock* block = pool.Take();
  block->Append(Pattern(1000, 17));
  {
    std::vector<BlockPiece> pieces;  // no reserve: reallocations move every piece
    for (std::size_t i = 0; i < 1000; ++i) pieces.emplace_back(block, i, 1);
    block->Unref();
    EXPECT_EQ(pool.blocks_in_use(), 1U);
    pieces.erase(pieces.begin(), pieces.begin() + 500);  // move-assigns the rest down
    EXPECT_EQ(pool.blocks_in_use(), 1U);
    for (std::size_t i = 0; i < pieces.size(); ++i) EXPECT_EQ(pieces[i].offset(), 500 + i);
  }
  EXPECT_EQ(pool.blocks_in_use(), 0U);
}

}  // namespace
}  // namespace sparktrace::proxy
