#include "proxy/message_tapper.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>

#include "proxy/receive_blocks.h"

namespace sparktrace::proxy {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kBlock = ReceiveBlock::kCapacity;
constexpr std::uint32_t kMax = 4U * 1024U * 1024U;

Bytes Pattern(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed + i * 31U + (i >> 8U));
  return out;
}

// Bytes that do not compress: a compressed message as long as its content.
Bytes Noise(std::size_t size, std::uint32_t seed) {
  std::mt19937 random(seed);
  Bytes out(size);
  for (auto& byte : out) byte = static_cast<std::uint8_t>(random());
  return out;
}

// Text that compresses well.
Bytes Text(std::size_t size) {
  static constexpr std::string_view kLine = "SELECT id, name FROM events WHERE id = ";
  Bytes out;
  out.reserve(size);
  for (std::size_t line = 0; out.size() < size; ++line) {
    const std::string text = std::string(kLine) + std::to_string(line) + ";\n";
    out.insert(out.end(), text.begin(), text.end());
  }
  out.resize(size);
  return out;
}

// zlib's deflate: gzip framing with window_bits 16 + MAX_WBITS, zlib framing with MAX_WBITS.
Bytes Compress(const Bytes& input, int window_bits) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&stream, static_cast<uLong>(input.size())) + 64);
  stream.next_in = const_cast<Bytef*>(input.data());
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}
Bytes Gzip(const Bytes& input) { return Compress(input, 16 + MAX_WBITS); }
Bytes ZlibDeflate(const Bytes& input) { return Compress(input, MAX_WBITS); }

void AppendMessage(Bytes& stream, bool compressed, const Bytes& payload) {
  const auto length = static_cast<std::uint32_t>(payload.size());
  stream.push_back(compressed ? 1 : 0);
  stream.push_back(static_cast<std::uint8_t>(length >> 24U));
  stream.push_back(static_cast<std::uint8_t>(length >> 16U));
  stream.push_back(static_cast<std::uint8_t>(length >> 8U));
  stream.push_back(static_cast<std::uint8_t>(length));
  stream.insert(stream.end(), payload.begin(), payload.end());
}

// What a tap saw of one message: the bytes are gathered from the pieces during the call, as the
// pieces are only valid then.
struct Delivered {
  std::uint64_t wire_bytes = 0;
  bool compressed = false;
  bool bytes_available = false;
  Bytes bytes;
  std::size_t pieces = 0;
  bool pieces_inside_blocks = true;  // every piece lies inside a receive block the queue stored into
};

// The relay's side of one stream direction: DATA payloads are appended to a RelayQueue and the
// tapper is fed from its on_stored callback, the way proxy/relayed_call.cc does.
class Harness {
 public:
  Harness(std::uint32_t max_message_bytes, bool keep_bytes, TapLimits limits = {})
      : limits_(limits),
        tapper_(max_message_bytes, keep_bytes, [this](const TappedMessage& message) { OnMessage(message); }, limits) {}

  // One DATA payload; returns the framing error, as the relay sees it.
  GrpcFramingError Push(std::span<const std::uint8_t> payload) {
    GrpcFramingError error = GrpcFramingError::kNone;
    queue_.Append(payload, [&](ReceiveBlock* block, std::size_t offset, std::size_t size) {
      blocks_.insert(block);
      if (error == GrpcFramingError::kNone) error = tapper_.Feed(block, offset, size);
    });
    return error;
  }

  // The whole stream, cut into payloads of `chunk` bytes (the last one shorter).
  GrpcFramingError PushInChunks(const Bytes& stream, std::size_t chunk) {
    GrpcFramingError error = GrpcFramingError::kNone;
    for (std::size_t offset = 0; offset < stream.size(); offset += chunk) {
      const std::size_t size = std::min(chunk, stream.size() - offset);
      error = Push({stream.data() + offset, size});
      if (error != GrpcFramingError::kNone) break;
    }
    return error;
  }

  ReceiveBlockPool& pool() { return pool_; }
  RelayQueue& queue() { return queue_; }
  MessageTapper& tapper() { return tapper_; }
  const std::vector<Delivered>& delivered() const { return delivered_; }
  // The budget's balance as each message was delivered (with a budget).
  const std::vector<std::size_t>& taken_at_delivery() const { return taken_at_delivery_; }

 private:
  void OnMessage(const TappedMessage& message) {
    if (limits_.budget != nullptr) taken_at_delivery_.push_back(limits_.budget->taken());
    Delivered& seen = delivered_.emplace_back();
    seen.wire_bytes = message.wire_bytes;
    seen.compressed = message.compressed;
    seen.bytes_available = message.bytes_available;
    seen.pieces = message.bytes.size();
    for (const std::span<const std::uint8_t> piece : message.bytes) {
      seen.bytes.insert(seen.bytes.end(), piece.begin(), piece.end());
      const bool inside = std::any_of(blocks_.begin(), blocks_.end(), [&](ReceiveBlock* block) {
        return piece.data() >= block->data() && piece.data() + piece.size() <= block->data() + kBlock;
      });
      seen.pieces_inside_blocks = seen.pieces_inside_blocks && inside;
    }
  }

  // Declared first: destroyed last, after everything holding its blocks.
  ReceiveBlockPool pool_;
  RelayQueue queue_{pool_};
  std::set<ReceiveBlock*> blocks_;
  std::vector<Delivered> delivered_;
  std::vector<std::size_t> taken_at_delivery_;
  TapLimits limits_;
  MessageTapper tapper_;
};

struct Message {
  bool compressed;
  Bytes wire;     // the payload as sent
  Bytes content;  // what the tap should see
};

std::vector<Message> MixedUncompressed() {
  return {{false, {}, {}},
          {false, {0x42}, {0x42}},
          {false, Pattern(70 * 1024, 1), Pattern(70 * 1024, 1)},  // spans three blocks
          {false, Pattern(300, 2), Pattern(300, 2)},
          {false, Pattern(40'000, 3), Pattern(40'000, 3)}};
}

Bytes Frame(const std::vector<Message>& messages) {
  Bytes stream;
  for (const Message& message : messages) AppendMessage(stream, message.compressed, message.wire);
  return stream;
}

void ExpectDelivered(const Harness& harness, const std::vector<Message>& expected, bool keep_bytes) {
  const auto& delivered = harness.delivered();
  ASSERT_EQ(delivered.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "message " << i);
    EXPECT_EQ(delivered[i].wire_bytes, expected[i].wire.size());
    EXPECT_EQ(delivered[i].compressed, expected[i].compressed);
    EXPECT_EQ(delivered[i].bytes_available, keep_bytes);
    if (keep_bytes) {
      EXPECT_EQ(delivered[i].bytes, expected[i].content);
    } else {
      EXPECT_EQ(delivered[i].pieces, 0U);
    }
  }
}

std::uint64_t WireBytes(const std::vector<Message>& messages) {
  std::uint64_t total = 0;
  for (const Message& message : messages) total += message.wire.size();
  return total;
}

// --- uncompressed --------------------------------------------------------------------------------

TEST(MessageTapperTest, KeepBytesDeliversMessagesSplitAcrossBlocks) {
  const auto messages = MixedUncompressed();
  const Bytes stream = Frame(messages);
  for (const std::size_t chunk : {stream.size(), std::size_t{16384}, std::size_t{1000}, std::size_t{7}, std::size_t{1}}) {
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

// --- compressed ----------------------------------------------------------------------------------

TEST(MessageTapperTest, GzipMessagesAreInflated) {
  const Bytes text = Text(200'000);   // inflates past the 64 KiB output steps
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

  ExpectUndecodable("gzip", Pattern(1000, 7));       // not compressed at all
  ExpectUndecodable("deflate", gzipped);             // gzip framing where zlib's is expected
  ExpectUndecodable("gzip", ZlibDeflate(text));      // and the other way round
}

TEST(MessageTapperTest, InflatingBeyondTheMessageLimitIsUndecodable) {
  // A small "zip bomb": 8 MiB of zeros in a few KiB. The limit applies to the inflated size too.
  constexpr std::uint32_t kSmallMax = 64 * 1024;
  const Bytes bomb = Gzip(Bytes(8 * 1024 * 1024, 0));
  ASSERT_LT(bomb.size(), kSmallMax);
  ExpectUndecodable("gzip", bomb, kSmallMax);
  ExpectUndecodable("deflate", ZlibDeflate(Bytes(8 * 1024 * 1024, 0)), kSmallMax);
  ExpectUndecodable("gzip", Gzip(Bytes(kSmallMax + 1, 'a')), kSmallMax);  // one byte over
}

// Feeds a gzip message whose payload starts `in_first_block` bytes before the end of a receive
// block (a filler message comes first), to a tapper with limit `max`; returns what it delivered.
Delivered DeliverGzipAcrossABlockBoundary(const Bytes& gzipped, std::size_t in_first_block, std::uint32_t max) {
  Bytes stream;
  AppendMessage(stream, false, Bytes(kBlock - 2 * 5 - in_first_block, 0));
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
  const std::vector<Message> messages = {{false, Pattern(70 * 1024, 1), Pattern(70 * 1024, 1)},
                                         {false, Pattern(300, 2), Pattern(300, 2)}};
  {
    Harness harness(kMax, /*keep_bytes=*/true, TapLimits{1 << 20, &budget, &stats});
    ASSERT_EQ(harness.PushInChunks(Frame(messages), 1000), GrpcFramingError::kNone);
    ExpectDelivered(harness, messages, /*keep_bytes=*/true);
    EXPECT_EQ(harness.taken_at_delivery(), (std::vector<std::size_t>{70 * 1024, 300}));
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
  Harness harness(kMax, /*keep_bytes=*/true, TapLimits{32 * 1024, &budget, &stats});
  ASSERT_EQ(harness.PushInChunks(Frame({{false, big, big}, {false, small, small}}), 4096), GrpcFramingError::kNone);
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
  RelayBudget budget(50 * 1024);
  RelayStats stats;
  const Bytes big = Pattern(70 * 1024, 5);
  const Bytes small = Pattern(1000, 6);
  Harness harness(kMax, /*keep_bytes=*/true, TapLimits{1 << 20, &budget, &stats});
  ASSERT_EQ(harness.PushInChunks(Frame({{false, big, big}, {false, small, small}}), 8192), GrpcFramingError::kNone);
  ASSERT_EQ(harness.delivered().size(), 2U);
  EXPECT_FALSE(harness.delivered()[0].bytes_available);
  EXPECT_TRUE(harness.delivered()[1].bytes_available) << "the next message is kept again";
  EXPECT_EQ(stats.hits(RelayLimit::kBufferBudget), 1U);
  EXPECT_EQ(budget.taken(), 0U);
  EXPECT_LE(budget.high_water(), 50U * 1024);
}

TEST(MessageTapperLimitsTest, ACompressedMessageInflatingPastTheTracedLimitIsNotUndecodable) {
  RelayStats stats;
  const Bytes text = Text(200 * 1024);  // compresses to a few KiB
  const Bytes wire = Gzip(text);
  ASSERT_LT(wire.size(), 64U * 1024);
  Harness harness(kMax, /*keep_bytes=*/true, TapLimits{64 * 1024, nullptr, &stats});
  harness.tapper().SetEncoding("gzip");
  ASSERT_EQ(harness.PushInChunks(Frame({{true, wire, text}}), 4096), GrpcFramingError::kNone);
  ASSERT_EQ(harness.delivered().size(), 1U);
  EXPECT_FALSE(harness.delivered()[0].bytes_available);
  EXPECT_EQ(stats.hits(RelayLimit::kTracedMessageBytes), 1U);
  EXPECT_EQ(harness.tapper().count().undecodable, 0U);
}

}  // namespace
}  // namespace sparktrace::proxy
