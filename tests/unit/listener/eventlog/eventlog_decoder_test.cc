// The chunk decoders on streams written by the test writers: any split of the input gives the same
// bytes, unfinished units are held (not errors), corruption is an error.

#include <gtest/gtest.h>

#include <string>

#include "listener/eventlog/chunk_decoder.h"
#include "tests/unit/listener/eventlog/eventlog_test_support.h"

namespace sparktrace::listener::eventlog {
namespace {

using testing::AwkwardChunkSizes;
using testing::JoinLines;
using testing::Lz4JavaStream;
using testing::MakeEventLines;
using testing::SnappyJavaStream;
using testing::ZstdFrame;

std::unique_ptr<ChunkDecoder> Make(Codec codec) {
  Result<std::unique_ptr<ChunkDecoder>> decoder = MakeChunkDecoder(codec);
  EXPECT_TRUE(decoder.ok()) << decoder.error().ToString();
  return std::move(decoder).value();
}

// Feeds `stream` in pieces of `chunk` bytes; returns everything decoded, or the first error.
Result<std::string> DecodeInChunks(ChunkDecoder& decoder, std::string_view stream, std::size_t chunk) {
  std::string decoded;
  const ChunkDecoder::Output append = [&](std::string_view bytes) { decoded += bytes; };
  for (std::size_t start = 0; start < stream.size(); start += chunk) {
    Result<void> fed = decoder.Decode(stream.substr(start, chunk), append);
    if (!fed.ok()) return fed.error();
  }
  return decoded;
}

std::string ZstdFrames(const std::string& text, std::size_t frame_bytes) {
  std::string frames;
  for (std::size_t start = 0; start < text.size(); start += frame_bytes)
    frames += ZstdFrame(text.substr(start, frame_bytes));
  return frames;
}

struct CodecCase {
  const char* name;
  Codec codec;
  std::string (*write)(const std::string&);
};

const std::string& SampleText() {
  static const std::string text = JoinLines(MakeEventLines(600));
  return text;
}

class EventLogDecoderRoundTrip : public ::testing::TestWithParam<CodecCase> {};

TEST_P(EventLogDecoderRoundTrip, AnySplitDecodesToTheOriginal) {
  const std::string stream = GetParam().write(SampleText());
  for (std::size_t chunk : AwkwardChunkSizes()) {
    auto decoder = Make(GetParam().codec);
    Result<std::string> decoded = DecodeInChunks(*decoder, stream, chunk);
    ASSERT_TRUE(decoded.ok()) << "chunk " << chunk << ": " << decoded.error().ToString();
    EXPECT_EQ(*decoded, SampleText()) << "chunk " << chunk;
    EXPECT_FALSE(decoder->HoldsIncompleteUnit()) << "chunk " << chunk;
  }
}

// Units (frames, blocks, chunks) only exist in compressed streams.
class EventLogCompressedDecoder : public ::testing::TestWithParam<CodecCase> {};

TEST_P(EventLogCompressedDecoder, HoldsAnUnfinishedUnitWithoutError) {
  const std::string stream = GetParam().write(SampleText());
  auto decoder = Make(GetParam().codec);
  std::string decoded;
  ASSERT_TRUE(
      decoder->Decode(stream.substr(0, stream.size() - 2), [&](std::string_view b) { decoded += b; }).ok());
  EXPECT_TRUE(decoder->HoldsIncompleteUnit());
  EXPECT_LE(decoded.size(), SampleText().size());
  EXPECT_EQ(decoded, SampleText().substr(0, decoded.size()));
  decoder->ReleaseIdleMemory();  // must keep what the unfinished unit needs
  ASSERT_TRUE(
      decoder->Decode(stream.substr(stream.size() - 2), [&](std::string_view b) { decoded += b; }).ok());
  EXPECT_FALSE(decoder->HoldsIncompleteUnit());
  EXPECT_EQ(decoded, SampleText());
}

TEST_P(EventLogCompressedDecoder, GarbageIsAnError) {
  auto decoder = Make(GetParam().codec);
  EXPECT_FALSE(DecodeInChunks(*decoder, std::string(64, '\x7f'), 64).ok());
}

const CodecCase kPlain{"plain", Codec::kNone, [](const std::string& text) { return text; }};
const CodecCase kCompressed[] = {
    {"zstd_frames", Codec::kZstd, [](const std::string& text) { return ZstdFrames(text, 1000); }},
    {"lz4", Codec::kLz4, [](const std::string& text) { return Lz4JavaStream(text); }},
    {"lz4_stored", Codec::kLz4, [](const std::string& text) { return Lz4JavaStream(text, /*stored=*/true); }},
    {"snappy", Codec::kSnappy, [](const std::string& text) { return SnappyJavaStream(text); }},
    {"snappy_small_chunks", Codec::kSnappy,
     [](const std::string& text) { return SnappyJavaStream(text, 100); }},
};

std::string CaseName(const ::testing::TestParamInfo<CodecCase>& param_info) { return param_info.param.name; }

INSTANTIATE_TEST_SUITE_P(EventLogPlain, EventLogDecoderRoundTrip, ::testing::Values(kPlain), CaseName);
INSTANTIATE_TEST_SUITE_P(EventLogCompressed, EventLogDecoderRoundTrip, ::testing::ValuesIn(kCompressed),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(EventLogCompressed, EventLogCompressedDecoder, ::testing::ValuesIn(kCompressed),
                         CaseName);

TEST(EventLogZstdDecoder, KnowsFrameBoundariesAndFreesIdleContexts) {
  const std::string first = ZstdFrame("one\ntwo\n");
  const std::string second = ZstdFrame("three\n");
  auto decoder = Make(Codec::kZstd);
  std::string decoded;
  const ChunkDecoder::Output append = [&](std::string_view bytes) { decoded += bytes; };
  ASSERT_TRUE(decoder->Decode(first, append).ok());
  EXPECT_FALSE(decoder->HoldsIncompleteUnit());
  decoder->ReleaseIdleMemory();  // at a boundary a fresh context continues correctly
  ASSERT_TRUE(decoder->Decode(second.substr(0, 5), append).ok());
  EXPECT_TRUE(decoder->HoldsIncompleteUnit());
  ASSERT_TRUE(decoder->Decode(second.substr(5), append).ok());
  EXPECT_FALSE(decoder->HoldsIncompleteUnit());
  EXPECT_EQ(decoded, "one\ntwo\nthree\n");
}

TEST(EventLogLz4BlockDecoder, ReadsOnAfterAnEndMarkAndChecksChecksums) {
  // Two closed streams back to back, as Spark's reader (stopOnEmptyBlock=false) accepts.
  const std::string stream = Lz4JavaStream("first\n") + Lz4JavaStream("second\n");
  auto decoder = Make(Codec::kLz4);
  Result<std::string> decoded = DecodeInChunks(*decoder, stream, 3);
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, "first\nsecond\n");

  std::string corrupted = Lz4JavaStream("payload that gets a wrong checksum\n", /*stored=*/true);
  corrupted[17] = static_cast<char>(corrupted[17] ^ 0x01);  // the checksum field
  auto checking = Make(Codec::kLz4);
  Result<std::string> rejected = DecodeInChunks(*checking, corrupted, corrupted.size());
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().message.find("checksum"), std::string::npos) << rejected.error().message;
}

TEST(EventLogLz4BlockDecoder, RejectsBadHeadersBeforeBuffering) {
  auto bad_magic = Make(Codec::kLz4);
  EXPECT_FALSE(bad_magic->Decode("LZ4Blx", [](std::string_view) {}).ok());  // fewer bytes than a header

  std::string huge = Lz4JavaStream("x\n", /*stored=*/true, /*end_mark=*/false);
  huge[13] = '\0';  // original length 0x7f000000: more than a 32 KiB block
  huge[14] = '\0';
  huge[15] = '\0';
  huge[16] = '\x7f';
  auto bounded = Make(Codec::kLz4);
  EXPECT_FALSE(bounded->Decode(huge.substr(0, 21), [](std::string_view) {}).ok());
}

TEST(EventLogSnappyStreamDecoder, ReadsConcatenatedStreamsAndHoldsPartialHeaders) {
  const std::string stream = SnappyJavaStream("first\n") + SnappyJavaStream("second\n");
  auto decoder = Make(Codec::kSnappy);
  std::string decoded;
  const ChunkDecoder::Output append = [&](std::string_view bytes) { decoded += bytes; };
  ASSERT_TRUE(decoder->Decode(stream.substr(0, 10), append).ok());  // inside the first header
  EXPECT_TRUE(decoder->HoldsIncompleteUnit());
  ASSERT_TRUE(decoder->Decode(stream.substr(10), append).ok());
  EXPECT_FALSE(decoder->HoldsIncompleteUnit());
  EXPECT_EQ(decoded, "first\nsecond\n");

  auto wrong = Make(Codec::kSnappy);
  EXPECT_FALSE(wrong->Decode(std::string_view("\x82SNAPPX", 7), append).ok());
}

TEST(EventLogChunkDecoder, RefusesCodecsItCannotDecode) {
  Result<std::unique_ptr<ChunkDecoder>> lzf = MakeChunkDecoder(Codec::kLzf);
  ASSERT_FALSE(lzf.ok());
  EXPECT_NE(lzf.error().message.find("lzf"), std::string::npos);
  EXPECT_FALSE(MakeChunkDecoder(Codec::kUnknown).ok());
}

}  // namespace
}  // namespace sparktrace::listener::eventlog
