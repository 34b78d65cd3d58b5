#include "proxy/grpc_message_framer.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct TestMessage {
  bool compressed = false;
  Bytes payload;
};

void AppendPrefix(Bytes& out, std::uint8_t flag, std::uint32_t length) {
  out.push_back(flag);
  out.push_back(static_cast<std::uint8_t>(length >> 24U));
  out.push_back(static_cast<std::uint8_t>(length >> 16U));
  out.push_back(static_cast<std::uint8_t>(length >> 8U));
  out.push_back(static_cast<std::uint8_t>(length));
}

Bytes FramedStream(const std::vector<TestMessage>& messages) {
  Bytes out;
  for (const auto& message : messages) {
    AppendPrefix(out, message.compressed ? 1 : 0, static_cast<std::uint32_t>(message.payload.size()));
    out.insert(out.end(), message.payload.begin(), message.payload.end());
  }
  return out;
}

Bytes Pattern(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed + i * 31U + (i >> 8U));
  return out;
}

// The mixed stream the split tests use: empty, 1-byte, 70 KB, compressed, and an empty compressed
// message last so the stream ends on a prefix.
std::vector<TestMessage> MixedMessages() {
  return {{false, {}},
          {false, {0x42}},
          {true, Pattern(std::size_t{70} * 1024, 7)},
          {false, Pattern(300, 3)},
          {true, Pattern(5, 9)},
          {true, {}}};
}

// What the visitor saw. Payload bytes are copied only when `copy_payload`; the pieces' addresses
// and sizes are always kept so tests can check where they point.
struct SeenMessage {
  bool compressed = false;
  std::uint32_t declared = 0;
  bool ended = false;
  Bytes payload;
  std::vector<GrpcBytes> pieces;
  std::size_t payload_size = 0;
};

class Recorder : public GrpcMessageVisitor {
 public:
  explicit Recorder(bool copy_payload) : copy_payload_(copy_payload) {}

  void OnMessageStart(bool compressed, std::uint32_t length) override {
    if (!messages.empty()) {
      EXPECT_TRUE(messages.back().ended) << "a message started inside another";
    }
    SeenMessage& message = messages.emplace_back();
    message.compressed = compressed;
    message.declared = length;
  }
  void OnMessagePayload(GrpcBytes piece) override {
    ASSERT_FALSE(messages.empty());
    SeenMessage& message = messages.back();
    EXPECT_FALSE(message.ended);
    EXPECT_FALSE(piece.empty()) << "empty pieces are never reported";
    if (on_piece) on_piece(piece);
    if (copy_payload_) message.payload.insert(message.payload.end(), piece.begin(), piece.end());
    message.pieces.push_back(piece);
    message.payload_size += piece.size();
  }
  void OnMessageEnd() override {
    ASSERT_FALSE(messages.empty());
    SeenMessage& message = messages.back();
    EXPECT_FALSE(message.ended);
    EXPECT_EQ(message.payload_size, message.declared);
    message.ended = true;
  }

  std::vector<SeenMessage> messages;
  std::function<void(GrpcBytes)> on_piece;

 private:
  bool copy_payload_;
};

// Checks `seen` against `expected` byte for byte (the recorder copied the payload).
void ExpectSameMessages(const std::vector<SeenMessage>& seen, const std::vector<TestMessage>& expected) {
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "message " << i);
    EXPECT_TRUE(seen[i].ended);
    EXPECT_EQ(seen[i].compressed, expected[i].compressed);
    EXPECT_EQ(seen[i].declared, expected[i].payload.size());
    EXPECT_EQ(seen[i].payload, expected[i].payload);
  }
}

// Checks `seen` against `expected` where every chunk was a view of `stream`: each message's pieces
// must tile exactly its payload's bytes inside `stream`, in order. Same bytes, by address, so
// it proves exact reassembly and zero copy without copying 70 KB per split.
void ExpectPiecesTileStream(const std::vector<SeenMessage>& seen, const std::vector<TestMessage>& expected,
                            const Bytes& stream) {
  ASSERT_EQ(seen.size(), expected.size());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "message " << i);
    ASSERT_TRUE(seen[i].ended);
    ASSERT_EQ(seen[i].compressed, expected[i].compressed);
    ASSERT_EQ(seen[i].declared, expected[i].payload.size());
    offset += GrpcMessageFramer::kPrefixBytes;
    for (const GrpcBytes piece : seen[i].pieces) {
      ASSERT_EQ(piece.data(), stream.data() + offset);
      offset += piece.size();
    }
  }
  EXPECT_EQ(offset, stream.size());
}

constexpr std::uint32_t kMax = 4U * 1024U * 1024U;

TEST(GrpcMessageFramerTest, TwoChunksSplitAtEveryByteBoundary) {
  const auto expected = MixedMessages();
  const Bytes stream = FramedStream(expected);
  const GrpcBytes all(stream);
  for (std::size_t split = 0; split <= stream.size(); ++split) {
    SCOPED_TRACE(testing::Message() << "split at " << split);
    GrpcMessageFramer framer(kMax);
    Recorder recorder(/*copy_payload=*/false);
    ASSERT_EQ(framer.Feed(all.first(split), recorder), GrpcFramingError::kNone);
    ASSERT_EQ(framer.Feed(all.subspan(split), recorder), GrpcFramingError::kNone);
    ASSERT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kClean);
    ASSERT_EQ(framer.messages(), expected.size());
    ExpectPiecesTileStream(recorder.messages, expected, stream);
    if (HasFatalFailure()) return;
  }
}

TEST(GrpcMessageFramerTest, TwoSeparateBuffersSplitInEveryPrefix) {
  // As on the network, the two chunks are separate buffers (not views of one), so the payload is
  // compared byte for byte; the split points cover every byte of every prefix and its neighbours.
  const auto expected = MixedMessages();
  const Bytes stream = FramedStream(expected);
  std::vector<std::size_t> splits;
  std::size_t offset = 0;
  for (const auto& message : expected) {
    for (std::size_t i = 0; i <= GrpcMessageFramer::kPrefixBytes + 1; ++i) {
      if (offset + i <= stream.size()) splits.push_back(offset + i);
    }
    offset += GrpcMessageFramer::kPrefixBytes + message.payload.size();
  }
  splits.push_back(stream.size() - 1);
  splits.push_back(stream.size());
  for (const std::size_t split : splits) {
    SCOPED_TRACE(testing::Message() << "split at " << split);
    const Bytes first(stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(split));
    const Bytes second(stream.begin() + static_cast<std::ptrdiff_t>(split), stream.end());
    GrpcMessageFramer framer(kMax);
    Recorder recorder(/*copy_payload=*/true);
    ASSERT_EQ(framer.Feed(first, recorder), GrpcFramingError::kNone);
    ASSERT_EQ(framer.Feed(second, recorder), GrpcFramingError::kNone);
    EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kClean);
    ExpectSameMessages(recorder.messages, expected);
  }
}

TEST(GrpcMessageFramerTest, OneByteChunks) {
  const auto expected = MixedMessages();
  const Bytes stream = FramedStream(expected);
  GrpcMessageFramer framer(kMax);
  Recorder recorder(/*copy_payload=*/true);
  for (const std::uint8_t byte : stream) {
    // Each byte in its own short-lived buffer, so nothing can point back into `stream`.
    const std::array<std::uint8_t, 1> chunk = {byte};
    ASSERT_EQ(framer.Feed(chunk, recorder), GrpcFramingError::kNone);
  }
  EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kClean);
  ExpectSameMessages(recorder.messages, expected);
}

TEST(GrpcMessageFramerTest, ManyMessagesInOneChunk) {
  std::vector<TestMessage> expected;
  for (std::size_t i = 0; i < 1000; ++i) {
    expected.push_back({(i % 3) == 0, Pattern(i % 17, static_cast<std::uint8_t>(i))});
  }
  const Bytes stream = FramedStream(expected);
  GrpcMessageFramer framer(kMax);
  Recorder recorder(/*copy_payload=*/true);
  ASSERT_EQ(framer.Feed(stream, recorder), GrpcFramingError::kNone);
  EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kClean);
  EXPECT_EQ(framer.messages(), 1000U);
  ExpectSameMessages(recorder.messages, expected);
  // One chunk holding every message whole: each non-empty message is exactly one piece.
  for (const auto& message : recorder.messages) {
    EXPECT_EQ(message.pieces.size(), message.declared == 0 ? 0U : 1U);
  }
}

TEST(GrpcMessageFramerTest, EmptyChunksReportNothing) {
  GrpcMessageFramer framer(kMax);
  Recorder recorder(/*copy_payload=*/true);
  EXPECT_EQ(framer.Feed({}, recorder), GrpcFramingError::kNone);
  EXPECT_TRUE(recorder.messages.empty());
  EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kClean);
}

TEST(GrpcMessageFramerTest, OversizedMessageRefusedOnPrefixAlone) {
  constexpr std::uint32_t kSmallMax = 1024;
  Bytes prefix;
  AppendPrefix(prefix, 0, kSmallMax + 1);
  ASSERT_EQ(prefix.size(), GrpcMessageFramer::kPrefixBytes);

  GrpcMessageFramer framer(kSmallMax);
  Recorder recorder(/*copy_payload=*/true);
  // Only the five prefix bytes: no payload was ever offered.
  EXPECT_EQ(framer.Feed(prefix, recorder), GrpcFramingError::kMessageTooLarge);
  EXPECT_EQ(framer.error(), GrpcFramingError::kMessageTooLarge);
  EXPECT_EQ(framer.refused_length(), kSmallMax + 1);
  EXPECT_TRUE(recorder.messages.empty()) << "the refused message was never started";
  EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kFailed);
  EXPECT_EQ(GrpcFramingErrorName(framer.error()), "message too large");
}

TEST(GrpcMessageFramerTest, OversizedMessageRefusedWithPrefixSplitByteByByte) {
  Bytes prefix;
  AppendPrefix(prefix, 1, 0xFFFFFFFFU);
  GrpcMessageFramer framer(1024);
  Recorder recorder(/*copy_payload=*/true);
  for (std::size_t i = 0; i + 1 < prefix.size(); ++i) {
    EXPECT_EQ(framer.Feed(GrpcBytes(prefix).subspan(i, 1), recorder), GrpcFramingError::kNone);
    EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kTruncatedPrefix);
  }
  EXPECT_EQ(framer.Feed(GrpcBytes(prefix).last(1), recorder), GrpcFramingError::kMessageTooLarge);
  EXPECT_EQ(framer.refused_length(), 0xFFFFFFFFU);
  EXPECT_TRUE(recorder.messages.empty());
}

TEST(GrpcMessageFramerTest, MessageOfExactlyMaxSizeAccepted) {
  const std::vector<TestMessage> expected = {{false, Pattern(1024, 1)}};
  GrpcMessageFramer framer(1024);
  Recorder recorder(/*copy_payload=*/true);
  EXPECT_EQ(framer.Feed(FramedStream(expected), recorder), GrpcFramingError::kNone);
  ExpectSameMessages(recorder.messages, expected);
}

TEST(GrpcMessageFramerTest, MessagesBeforeAnOversizedOneAreReported) {
  Bytes stream = FramedStream({{false, {1, 2, 3}}});
  AppendPrefix(stream, 0, 11);
  stream.resize(stream.size() + 11);
  GrpcMessageFramer framer(10);
  Recorder recorder(/*copy_payload=*/true);
  EXPECT_EQ(framer.Feed(stream, recorder), GrpcFramingError::kMessageTooLarge);
  ASSERT_EQ(recorder.messages.size(), 1U);
  EXPECT_EQ(recorder.messages[0].payload, (Bytes{1, 2, 3}));
}

TEST(GrpcMessageFramerTest, CompressedFlagTwoRefused) {
  for (const std::uint8_t flag : {std::uint8_t{2}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
    SCOPED_TRACE(testing::Message() << "flag " << int{flag});
    Bytes stream;
    AppendPrefix(stream, flag, 3);
    stream.insert(stream.end(), {1, 2, 3});
    GrpcMessageFramer framer(kMax);
    Recorder recorder(/*copy_payload=*/true);
    EXPECT_EQ(framer.Feed(stream, recorder), GrpcFramingError::kBadCompressedFlag);
    EXPECT_EQ(framer.error(), GrpcFramingError::kBadCompressedFlag);
    EXPECT_TRUE(recorder.messages.empty());
    EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kFailed);
    EXPECT_EQ(GrpcFramingErrorName(framer.error()), "bad compressed flag");

    // The same prefix cut into 1-byte chunks: refused when its last byte arrives.
    GrpcMessageFramer split_framer(kMax);
    const GrpcBytes all(stream);
    for (std::size_t i = 0; i + 1 < GrpcMessageFramer::kPrefixBytes; ++i) {
      EXPECT_EQ(split_framer.Feed(all.subspan(i, 1), recorder), GrpcFramingError::kNone);
    }
    EXPECT_EQ(split_framer.Feed(all.subspan(GrpcMessageFramer::kPrefixBytes - 1), recorder),
              GrpcFramingError::kBadCompressedFlag);
    EXPECT_TRUE(recorder.messages.empty());
  }
}

TEST(GrpcMessageFramerTest, InputAfterAnErrorIsRefused) {
  Bytes bad;
  AppendPrefix(bad, 2, 0);
  const Bytes good = FramedStream({{false, {1, 2, 3}}});
  GrpcMessageFramer framer(kMax);
  Recorder recorder(/*copy_payload=*/true);
  ASSERT_EQ(framer.Feed(bad, recorder), GrpcFramingError::kBadCompressedFlag);
  EXPECT_EQ(framer.Feed(good, recorder), GrpcFramingError::kBadCompressedFlag);
  EXPECT_EQ(framer.Feed({}, recorder), GrpcFramingError::kBadCompressedFlag);
  EXPECT_TRUE(recorder.messages.empty()) << "nothing is parsed after an error";
  EXPECT_EQ(framer.messages(), 0U);
}

TEST(GrpcMessageFramerTest, TruncationDetectedAtEveryPosition) {
  const auto expected = MixedMessages();
  const Bytes stream = FramedStream(expected);
  // Where each end position falls: at a message boundary (clean), after 1..4 bytes of a prefix, or
  // after a whole prefix and fewer than all of its payload bytes.
  std::vector<GrpcStreamEnd> end_at(stream.size() + 1, GrpcStreamEnd::kClean);
  std::size_t offset = 0;
  for (const auto& message : expected) {
    for (std::size_t i = 1; i < GrpcMessageFramer::kPrefixBytes; ++i) {
      end_at[offset + i] = GrpcStreamEnd::kTruncatedPrefix;
    }
    offset += GrpcMessageFramer::kPrefixBytes;
    for (std::size_t i = 0; i < message.payload.size(); ++i) {
      end_at[offset + i] = GrpcStreamEnd::kTruncatedPayload;
    }
    offset += message.payload.size();
  }
  const GrpcBytes all(stream);
  for (std::size_t end = 0; end <= stream.size(); ++end) {
    SCOPED_TRACE(testing::Message() << "stream ends at " << end);
    GrpcMessageFramer framer(kMax);
    Recorder recorder(/*copy_payload=*/false);
    ASSERT_EQ(framer.Feed(all.first(end), recorder), GrpcFramingError::kNone);
    ASSERT_EQ(framer.AtEndOfStream(), end_at[end]) << GrpcStreamEndName(framer.AtEndOfStream());
  }
}

TEST(GrpcMessageFramerTest, PayloadPiecesPointIntoTheCallersBuffers) {
  const auto expected = MixedMessages();
  const Bytes stream = FramedStream(expected);
  // Chunks of assorted sizes, each copied into its own buffer; every piece reported during a Feed
  // must lie inside that Feed's chunk.
  constexpr std::array<std::size_t, 9> kSizes = {1, 3, 7, 1000, 4, 65536, 2, 5, 9};
  GrpcMessageFramer framer(kMax);
  Recorder recorder(/*copy_payload=*/true);
  std::size_t offset = 0;
  std::size_t pieces = 0;
  for (std::size_t i = 0; offset < stream.size(); ++i) {
    const std::size_t size = std::min(kSizes[i % kSizes.size()], stream.size() - offset);
    const Bytes chunk(stream.begin() + static_cast<std::ptrdiff_t>(offset),
                      stream.begin() + static_cast<std::ptrdiff_t>(offset + size));
    recorder.on_piece = [&chunk, &pieces](GrpcBytes piece) {
      ++pieces;
      EXPECT_GE(piece.data(), chunk.data());
      EXPECT_LE(piece.data() + piece.size(), chunk.data() + chunk.size());
    };
    ASSERT_EQ(framer.Feed(chunk, recorder), GrpcFramingError::kNone);
    offset += size;
  }
  EXPECT_GT(pieces, expected.size());
  EXPECT_EQ(framer.AtEndOfStream(), GrpcStreamEnd::kClean);
  ExpectSameMessages(recorder.messages, expected);
}

}  // namespace
}  // namespace sparktrace::proxy
