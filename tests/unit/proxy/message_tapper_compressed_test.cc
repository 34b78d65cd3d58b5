// MessageTapper: gzip and deflate messages inflated, and compressed messages it cannot or may not inflate.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "proxy/message_tapper.h"
#include "proxy/receive_blocks.h"
#include "tests/unit/proxy/message_tapper_test_support.h"
#include "tests/unit/proxy/receive_blocks_test_support.h"

namespace sparktrace::proxy {
namespace {

// Bytes that do not compress: a compressed message as long as its content.
Bytes Noise(std::size_t size, std::uint32_t seed) {
  std::mt19937 random(seed);
  Bytes out(size);
  for (auto& byte : out) byte = static_cast<std::uint8_t>(random());
  return out;
}

Bytes ZlibDeflate(const Bytes& input) { return Compress(input, MAX_WBITS); }

// --- compressed ----------------------------------------------------------------------------------

TEST(MessageTapperTest, GzipMessagesAreInflated) {
  const Bytes text = Text(200'000);       // inflates past the 64 KiB output steps
  const Bytes noise = Noise(100'000, 1);  // compressed, still spans several blocks
  const std::vector<Message> messages = {{true, Gzip(text), text},
                                         {false, Pattern(100, 5), Pattern(100, 5)},
                                         {true, Gzip(noise), noise},
                                         {true, Gzip({}), {}},
                                         {true, Gzip({0x01}), {0x01}}};
  ASSERT_GT(messages[2].wire.size(), 3 * kBlock);
  const Bytes stream = Frame(messages);
  for (const std::size_t chunk : {stream.size(), std::size_t{16384}, std::size_t{999}, std::size_t{1}}) {
    SCOPED_TRACE(testing::Message() << "payloads of " << chunk << " bytes");
    Harness harness(kMax, /*keep_bytes=*/true);
    harness.tapper().SetEncoding("gzip");
    ASSERT_EQ(harness.PushInChunks(stream, chunk), GrpcFramingError::kNone);
    ExpectDelivered(harness, messages, /*keep_bytes=*/true);
    EXPECT_EQ(harness.tapper().count().messages, messages.size());
    EXPECT_EQ(harness.tapper().count().bytes, WireBytes(messages)) << "counted as on the wire, compressed";
    EXPECT_EQ(harness.tapper().count().undecodable, 0U);
  }
}

TEST(MessageTapperTest, DeflateMessagesAreInflated) {
  const Bytes text = Text(150'000);
  const Bytes noise = Noise(70'000, 2);
  const std::vector<Message> messages = {{true, ZlibDeflate(text), text}, {true, ZlibDeflate(noise), noise}};
  const Bytes stream = Frame(messages);
  for (const std::size_t chunk : {stream.size(), std::size_t{16384}, std::size_t{13}}) {
    SCOPED_TRACE(testing::Message() << "payloads of " << chunk << " bytes");
    Harness harness(kMax, /*keep_bytes=*/true);
    harness.tapper().SetEncoding("deflate");
    ASSERT_EQ(harness.PushInChunks(stream, chunk), GrpcFramingError::kNone);
    ExpectDelivered(harness, messages, /*keep_bytes=*/true);
    EXPECT_EQ(harness.tapper().count().undecodable, 0U);
  }
}

TEST(MessageTapperTest, CompressedWithoutKeepBytesIsDeliveredWithoutBytes) {
  const Bytes text = Text(10'000);
  const Bytes gzipped = Gzip(text);
  Bytes stream;
  AppendMessage(stream, true, gzipped);
  for (const char* encoding : {"gzip", "snappy"}) {
    SCOPED_TRACE(encoding);
    Harness harness(kMax, /*keep_bytes=*/false);
    harness.tapper().SetEncoding(encoding);
    ASSERT_EQ(harness.Push(stream), GrpcFramingError::kNone);
    ASSERT_EQ(harness.delivered().size(), 1U);
    EXPECT_TRUE(harness.delivered()[0].compressed);
    EXPECT_FALSE(harness.delivered()[0].bytes_available);
    EXPECT_EQ(harness.delivered()[0].pieces, 0U);
    EXPECT_EQ(harness.delivered()[0].wire_bytes, gzipped.size());
    EXPECT_EQ(harness.tapper().count().messages, 1U);
    EXPECT_EQ(harness.tapper().count().bytes, gzipped.size());
  }
}

// A compressed message the tapper cannot give the taps: delivered and counted, without bytes.
void ExpectUndecodable(const char* encoding, const Bytes& payload, std::uint32_t max = kMax) {
  SCOPED_TRACE(testing::Message() << "encoding \"" << encoding << "\"");
  Bytes stream;
  AppendMessage(stream, true, payload);
  AppendMessage(stream, false, Pattern(10, 6));  // the stream goes on normally
  Harness harness(max, /*keep_bytes=*/true);
  harness.tapper().SetEncoding(encoding);
  ASSERT_EQ(harness.PushInChunks(stream, 4096), GrpcFramingError::kNone);
  ASSERT_EQ(harness.delivered().size(), 2U);
  const Delivered& bad = harness.delivered()[0];
  EXPECT_TRUE(bad.compressed);
  EXPECT_FALSE(bad.bytes_available);
  EXPECT_EQ(bad.pieces, 0U);
  EXPECT_EQ(bad.wire_bytes, payload.size());
  const Delivered& next = harness.delivered()[1];
  EXPECT_TRUE(next.bytes_available);
  EXPECT_EQ(next.bytes, Pattern(10, 6));
  EXPECT_EQ(harness.tapper().count().messages, 2U);
  EXPECT_EQ(harness.tapper().count().bytes, payload.size() + 10);
  EXPECT_EQ(harness.tapper().count().undecodable, 1U);
}

TEST(MessageTapperTest, UnknownEncodingIsUndecodable) {
  const Bytes gzipped = Gzip(Text(5000));
  ExpectUndecodable("snappy", gzipped);
  ExpectUndecodable("zstd", gzipped);
  // A compressed flag with no encoding (or identity) is the peer's error; the bytes cannot be read.
  ExpectUndecodable("", gzipped);
  ExpectUndecodable("identity", gzipped);
}

TEST(MessageTapperTest, CorruptCompressedBytesAreUndecodable) {
  const Bytes text = Text(50'000);
  const Bytes gzipped = Gzip(text);
  ASSERT_GT(gzipped.size(), 100U);

  Bytes bad_magic = gzipped;
  bad_magic[0] ^= 0xff;
  ExpectUndecodable("gzip", bad_magic);

  Bytes bad_body = gzipped;
  for (std::size_t i = 20; i < 40; ++i) bad_body[i] ^= 0x5a;
  ExpectUndecodable("gzip", bad_body);

  Bytes bad_crc = gzipped;
  bad_crc[bad_crc.size() - 6] ^= 0x01;  // the CRC-32 in the 8-byte trailer
  ExpectUndecodable("gzip", bad_crc);

  const Bytes truncated(gzipped.begin(), gzipped.end() - 8);  // no trailer
  ExpectUndecodable("gzip", truncated);
  const Bytes cut_in_half(gzipped.begin(), gzipped.begin() + static_cast<std::ptrdiff_t>(gzipped.size() / 2));
  ExpectUndecodable("gzip", cut_in_half);

  ExpectUndecodable("gzip", Pattern(1000, 7));   // not compressed at all
  ExpectUndecodable("deflate", gzipped);         // gzip framing where zlib's is expected
  ExpectUndecodable("gzip", ZlibDeflate(text));  // and the other way round
}

TEST(MessageTapperTest, InflatingBeyondTheMessageLimitIsUndecodable) {
  // A small "zip bomb": 8 MiB of zeros in a few KiB. The limit applies to the inflated size too.
  constexpr std::uint32_t kSmallMax = 64 * 1024;
  const Bytes bomb = Gzip(Bytes(8 * kKiB * kKiB, 0));
  ASSERT_LT(bomb.size(), kSmallMax);
  ExpectUndecodable("gzip", bomb, kSmallMax);
  ExpectUndecodable("deflate", ZlibDeflate(Bytes(8 * kKiB * kKiB, 0)), kSmallMax);
  ExpectUndecodable("gzip", Gzip(Bytes(kSmallMax + 1, 'a')), kSmallMax);  // one byte over
}

// Feeds a gzip message whose payload starts `in_first_block` bytes before the end of a receive
// block (a filler message comes first), to a tapper with limit `max`; returns what it delivered.
Delivered DeliverGzipAcrossABlockBoundary(const Bytes& gzipped, std::size_t in_first_block,
                                          std::uint32_t max) {
  Bytes stream;
  AppendMessage(stream, false, Bytes(kBlock - std::size_t{2} * 5 - in_first_block, 0));
  AppendMessage(stream, true, gzipped);
  Harness harness(max, /*keep_bytes=*/true);
  harness.tapper().SetEncoding("gzip");
  EXPECT_EQ(harness.Push(stream), GrpcFramingError::kNone);
  EXPECT_EQ(harness.delivered().size(), 2U);
  if (harness.delivered().size() != 2U) return {};
  EXPECT_EQ(harness.tapper().count().undecodable, harness.delivered()[1].bytes_available ? 0U : 1U);
  return harness.delivered()[1];
}

TEST(MessageTapperTest, InflatingToExactlyTheLimitIsDelivered) {
  // The framer accepts a message of exactly max_message_bytes; inflated, the same size is fine.
  // The compressed bytes are cut by a block boundary at every position, so the last output byte
  // and the end of the deflate stream (end-of-block code, gzip trailer) may come in later pieces.
  constexpr std::uint32_t kSmallMax = 40'000;
  const Bytes content = Text(kSmallMax);
  const Bytes gzipped = Gzip(content);
  ASSERT_LT(gzipped.size(), kBlock / 2);  // room for the filler
  std::vector<std::size_t> failed_splits;
  for (std::size_t in_first_block = 0; in_first_block <= gzipped.size(); ++in_first_block) {
    const Delivered delivered = DeliverGzipAcrossABlockBoundary(gzipped, in_first_block, kSmallMax);
    if (!delivered.bytes_available || delivered.bytes != content) failed_splits.push_back(in_first_block);
  }
  if (!failed_splits.empty()) {
    ADD_FAILURE() << failed_splits.size() << " of " << gzipped.size() + 1
                  << " split positions refused a message of exactly the limit, e.g. with "
                  << gzipped.size() - failed_splits.front() << " of its " << gzipped.size()
                  << " compressed bytes after the block boundary";
  }
}

TEST(MessageTapperTest, InflatingToOneByteOverTheLimitIsUndecodableWhereverSplit) {
  constexpr std::uint32_t kSmallMax = 40'000;
  const Bytes gzipped = Gzip(Text(kSmallMax + 1));
  ASSERT_LT(gzipped.size(), kBlock / 2);
  for (std::size_t in_first_block = 0; in_first_block <= gzipped.size(); ++in_first_block) {
    const Delivered delivered = DeliverGzipAcrossABlockBoundary(gzipped, in_first_block, kSmallMax);
    ASSERT_FALSE(delivered.bytes_available) << "split with " << in_first_block << " bytes in the first block";
    ASSERT_EQ(delivered.bytes.size(), 0U);
  }
}

}  // namespace
}  // namespace sparktrace::proxy
