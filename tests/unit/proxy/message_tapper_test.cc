// MessageTapper: uncompressed messages across blocks, framing errors, and the limits on what a tap keeps.
#include "proxy/message_tapper.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxy/receive_blocks.h"
#include "tests/unit/proxy/message_tapper_test_support.h"
#include "tests/unit/proxy/receive_blocks_test_support.h"

namespace sparktrace::proxy {
namespace {

std::vector<Message> MixedUncompressed() {
  return {{false, {}, {}},
          {false, {0x42}, {0x42}},
          {false, Pattern(70 * kKiB, 1), Pattern(70 * kKiB, 1)},  // spans three blocks
          {false, Pattern(300, 2), Pattern(300, 2)},
          {false, Pattern(40'000, 3), Pattern(40'000, 3)}};
}

// --- uncompressed --------------------------------------------------------------------------------

TEST(MessageTapperTest, KeepBytesDeliversMessagesSplitAcrossBlocks) {
  const auto messages = MixedUncompressed();
  const Bytes stream = Frame(messages);
  for (const std::size_t chunk :
       {stream.size(), std::size_t{16384}, std::size_t{1000}, std::size_t{7}, std::size_t{1}}) {
    SCOPED_TRACE(testing::Message() << "payloads of " << chunk << " bytes");
    Harness harness(kMax, /*keep_bytes=*/true);
    ASSERT_EQ(harness.PushInChunks(stream, chunk), GrpcFramingError::kNone);
    ExpectDelivered(harness, messages, /*keep_bytes=*/true);
    for (const Delivered& delivered : harness.delivered()) {
      EXPECT_TRUE(delivered.pieces_inside_blocks) << "uncompressed bytes are shown in place, not copied";
    }
    // The 70 KiB message came as pieces of several blocks.
    EXPECT_GE(harness.delivered()[2].pieces, 3U);
    EXPECT_EQ(harness.tapper().count().messages, messages.size());
    EXPECT_EQ(harness.tapper().count().bytes, WireBytes(messages));
    EXPECT_EQ(harness.tapper().count().undecodable, 0U);
    EXPECT_EQ(harness.tapper().framer().AtEndOfStream(), GrpcStreamEnd::kClean);
  }
}

TEST(MessageTapperTest, WithoutKeepBytesCountsOnly) {
  const auto messages = MixedUncompressed();
  const Bytes stream = Frame(messages);
  for (const std::size_t chunk : {stream.size(), std::size_t{16384}, std::size_t{7}}) {
    SCOPED_TRACE(testing::Message() << "payloads of " << chunk << " bytes");
    Harness harness(kMax, /*keep_bytes=*/false);
    ASSERT_EQ(harness.PushInChunks(stream, chunk), GrpcFramingError::kNone);
    ExpectDelivered(harness, messages, /*keep_bytes=*/false);
    EXPECT_EQ(harness.tapper().count().messages, messages.size());
    EXPECT_EQ(harness.tapper().count().bytes, WireBytes(messages));
    EXPECT_EQ(harness.tapper().count().undecodable, 0U);
  }
}

TEST(MessageTapperTest, IncompleteMessageHoldsBlocksOnlyWhenKeepingBytes) {
  Bytes stream;
  AppendMessage(stream, false, Pattern(3 * kBlock, 4));
  const std::size_t half = 2 * kBlock;  // the message's first two blocks' worth, and its prefix
  for (const bool keep_bytes : {true, false}) {
    SCOPED_TRACE(testing::Message() << "keep_bytes " << keep_bytes);
    Harness harness(kMax, keep_bytes);
    ASSERT_EQ(harness.Push({stream.data(), half}), GrpcFramingError::kNone);
    // The relay sent everything on (here: dropped it): only the tapper may still hold blocks.
    harness.queue().Clear();
    if (keep_bytes) {
      EXPECT_GE(harness.pool().blocks_in_use(), 2U) << "the message's pieces so far are kept";
    } else {
      EXPECT_LE(harness.pool().blocks_in_use(), 1U) << "nothing kept but the queue's block being filled";
    }
    ASSERT_EQ(harness.Push({stream.data() + half, stream.size() - half}), GrpcFramingError::kNone);
    ASSERT_EQ(harness.delivered().size(), 1U);
    EXPECT_EQ(harness.delivered()[0].bytes_available, keep_bytes);
    if (keep_bytes) {
      EXPECT_EQ(harness.delivered()[0].bytes, Pattern(3 * kBlock, 4));
    }
    harness.queue().Clear();
    EXPECT_LE(harness.pool().blocks_in_use(), 1U) << "a delivered message's blocks are let go";
  }
}

// --- framing errors ------------------------------------------------------------------------------

TEST(MessageTapperTest, MessageOverTheLimitIsAFramingError) {
  constexpr std::uint32_t kSmallMax = 1000;
  Bytes stream;
  AppendMessage(stream, false, Pattern(kSmallMax, 8));      // exactly the limit: fine
  AppendMessage(stream, false, Pattern(kSmallMax + 1, 9));  // refused on its prefix
  Harness harness(kSmallMax, /*keep_bytes=*/true);
  EXPECT_EQ(harness.Push(stream), GrpcFramingError::kMessageTooLarge);
  EXPECT_EQ(harness.tapper().framer().refused_length(), kSmallMax + 1);
  ASSERT_EQ(harness.delivered().size(), 1U);
  EXPECT_EQ(harness.delivered()[0].bytes, Pattern(kSmallMax, 8));
  EXPECT_EQ(harness.tapper().count().messages, 1U);
  EXPECT_EQ(harness.tapper().count().bytes, kSmallMax);
  // The error sticks: later bytes are not parsed.
  Bytes more;
  AppendMessage(more, false, Pattern(10, 10));
  EXPECT_EQ(harness.Push(more), GrpcFramingError::kMessageTooLarge);
  EXPECT_EQ(harness.delivered().size(), 1U);
  EXPECT_EQ(harness.tapper().framer().AtEndOfStream(), GrpcStreamEnd::kFailed);
}

TEST(MessageTapperTest, BadCompressedFlagIsAFramingError) {
  Bytes stream;
  AppendMessage(stream, false, Pattern(10, 11));
  stream[0] = 2;
  Harness harness(kMax, /*keep_bytes=*/true);
  EXPECT_EQ(harness.Push(stream), GrpcFramingError::kBadCompressedFlag);
  EXPECT_TRUE(harness.delivered().empty());
  EXPECT_EQ(harness.tapper().count().messages, 0U);
}

// --- limits: what a tap may make the proxy keep -------------------------------------------------

TEST(MessageTapperLimitsTest, KeptBytesComeFromTheBudgetAndGoBackAfterDelivery) {
  RelayBudget budget(1 << 20);
  RelayStats stats;
  const std::vector<Message> messages = {{false, Pattern(70 * kKiB, 1), Pattern(70 * kKiB, 1)},
                                         {false, Pattern(300, 2), Pattern(300, 2)}};
  {
    Harness harness(kMax, /*keep_bytes=*/true, TapLimits{1 << 20, &budget, &stats});
    ASSERT_EQ(harness.PushInChunks(Frame(messages), 1000), GrpcFramingError::kNone);
    ExpectDelivered(harness, messages, /*keep_bytes=*/true);
    EXPECT_EQ(harness.taken_at_delivery(), (std::vector<std::size_t>{70 * kKiB, 300}));
    EXPECT_EQ(budget.taken(), 0U) << "delivered messages hold nothing";
  }
  EXPECT_EQ(stats.hits(RelayLimit::kTracedMessageBytes), 0U);
  EXPECT_EQ(stats.hits(RelayLimit::kBufferBudget), 0U);
}

TEST(MessageTapperLimitsTest, AMessageOverTheTracedLimitIsCountedNotKept) {
  RelayBudget budget(1 << 20);
  RelayStats stats;
  const Bytes big = Pattern(40'000, 3);
  const Bytes small = Pattern(100, 4);
  Harness harness(kMax, /*keep_bytes=*/true, TapLimits{32 * kKiB, &budget, &stats});
  ASSERT_EQ(harness.PushInChunks(Frame({{false, big, big}, {false, small, small}}), 4096),
            GrpcFramingError::kNone);
  ASSERT_EQ(harness.delivered().size(), 2U);
  EXPECT_FALSE(harness.delivered()[0].bytes_available);
  EXPECT_EQ(harness.delivered()[0].wire_bytes, big.size()) << "its size is still shown";
  EXPECT_TRUE(harness.delivered()[1].bytes_available);
  EXPECT_EQ(harness.delivered()[1].bytes, small);
  EXPECT_EQ(stats.hits(RelayLimit::kTracedMessageBytes), 1U);
  EXPECT_EQ(harness.tapper().count().undecodable, 0U);
  EXPECT_EQ(budget.taken(), 0U);
}

TEST(MessageTapperLimitsTest, ASpentBudgetStopsKeepingMidMessageAndGivesItsBytesBack) {
  RelayBudget budget(50 * kKiB);
  RelayStats stats;
  const Bytes big = Pattern(70 * kKiB, 5);
  const Bytes small = Pattern(1000, 6);
  Harness harness(kMax, /*keep_bytes=*/true, TapLimits{1 << 20, &budget, &stats});
  ASSERT_EQ(harness.PushInChunks(Frame({{false, big, big}, {false, small, small}}), 8192),
            GrpcFramingError::kNone);
  ASSERT_EQ(harness.delivered().size(), 2U);
  EXPECT_FALSE(harness.delivered()[0].bytes_available);
  EXPECT_TRUE(harness.delivered()[1].bytes_available) << "the next message is kept again";
  EXPECT_EQ(stats.hits(RelayLimit::kBufferBudget), 1U);
  EXPECT_EQ(budget.taken(), 0U);
  EXPECT_LE(budget.high_water(), 50U * 1024);
}

TEST(MessageTapperLimitsTest, ACompressedMessageInflatingPastTheTracedLimitIsNotUndecodable) {
  RelayStats stats;
  const Bytes text = Text(200 * kKiB);  // compresses to a few KiB
  const Bytes wire = Gzip(text);
  ASSERT_LT(wire.size(), 64U * 1024);
  Harness harness(kMax, /*keep_bytes=*/true, TapLimits{64 * kKiB, nullptr, &stats});
  harness.tapper().SetEncoding("gzip");
  ASSERT_EQ(harness.PushInChunks(Frame({{true, wire, text}}), 4096), GrpcFramingError::kNone);
  ASSERT_EQ(harness.delivered().size(), 1U);
  EXPECT_FALSE(harness.delivered()[0].bytes_available);
  EXPECT_EQ(stats.hits(RelayLimit::kTracedMessageBytes), 1U);
  EXPECT_EQ(harness.tapper().count().undecodable, 0U);
}

}  // namespace
}  // namespace sparktrace::proxy
