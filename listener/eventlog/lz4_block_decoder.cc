#include "listener/eventlog/lz4_block_decoder.h"

#include <lz4.h>

#include <algorithm>
#include <limits>

#include "listener/eventlog/byte_order.h"
#include "listener/eventlog/xxhash32.h"

namespace sparktrace::listener::eventlog {
namespace {

constexpr std::string_view kLz4Magic = "LZ4Block";
constexpr std::size_t kLz4HeaderBytes = 21;  // magic 8, token 1, three 4-byte little-endian ints
constexpr unsigned kMethodRaw = 0x10;
constexpr unsigned kMethodLz4 = 0x20;
constexpr unsigned kLevelBase = 10;  // block size = 1 << (10 + low nibble of the token)
constexpr std::uint32_t kChecksumSeed = 0x9747b28c;
constexpr std::uint32_t kChecksumMask = 0x0FFFFFFF;  // lz4-java's Checksum view keeps 28 bits

Error CorruptBlock(std::uint64_t block, const std::string& what) {
  return Error{ErrorCode::kInvalidArgument, "lz4 block " + std::to_string(block) + ": " + what};
}

}  // namespace

Result<void> Lz4BlockDecoder::Decode(std::string_view input, const Output& output) {
  const std::string_view data = pending_.Combine(input);
  Result<std::size_t> consumed = DecodeBlocks(data, output);
  if (!consumed.ok()) return consumed.error();
  pending_.Keep(data, *consumed);
  return {};
}

Result<std::size_t> Lz4BlockDecoder::DecodeBlocks(std::string_view data, const Output& output) {
  std::size_t position = 0;
  while (position < data.size()) {
    const std::string_view rest = data.substr(position);
    // Reject garbage as soon as it shows rather than after a whole header's worth of it.
    const std::size_t magic_bytes = std::min(rest.size(), kLz4Magic.size());
    if (rest.substr(0, magic_bytes) != kLz4Magic.substr(0, magic_bytes)) {
      return CorruptBlock(blocks_seen_, "bad magic (not an lz4-java LZ4Block stream)");
    }
    if (rest.size() < kLz4HeaderBytes) break;

    const auto token = static_cast<unsigned char>(rest[8]);
    const unsigned method = token & 0xF0U;
    const std::uint64_t block_size = std::uint64_t{1} << (kLevelBase + (token & 0x0FU));
    const std::uint32_t compressed_length = ReadLittleEndian32(rest.data() + 9);
    const std::uint32_t original_length = ReadLittleEndian32(rest.data() + 13);
    const std::uint32_t checksum = ReadLittleEndian32(rest.data() + 17);
    constexpr auto kIntMax = static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max());

    // The same consistency checks as lz4-java's LZ4BlockInputStream, before buffering any payload.
    if (method != kMethodRaw && method != kMethodLz4)
      return CorruptBlock(blocks_seen_, "unknown compression method");
    if (compressed_length > kIntMax || original_length > kIntMax || original_length > block_size) {
      return CorruptBlock(blocks_seen_, "block length out of range");
    }
    if ((original_length == 0) != (compressed_length == 0)) {
      return CorruptBlock(blocks_seen_, "zero length on one side only");
    }
    if (method == kMethodRaw && compressed_length != original_length) {
      return CorruptBlock(blocks_seen_, "stored block with different lengths");
    }
    if (method == kMethodLz4 && compressed_length > static_cast<std::uint32_t>(LZ4_compressBound(
                                                        static_cast<int>(original_length)))) {
      return CorruptBlock(blocks_seen_, "compressed length larger than LZ4 can produce");
    }
    if (original_length == 0) {  // end of one stream; another may follow
      if (checksum != 0) return CorruptBlock(blocks_seen_, "end-of-stream block with a checksum");
      position += kLz4HeaderBytes;
      ++blocks_seen_;
      continue;
    }
    if (rest.size() - kLz4HeaderBytes < compressed_length) break;

    const std::string_view payload = rest.substr(kLz4HeaderBytes, compressed_length);
    std::string_view original = payload;
    if (method == kMethodLz4) {
      block_.resize(original_length);
      const int decoded =
          LZ4_decompress_safe(payload.data(), block_.data(), static_cast<int>(compressed_length),
                              static_cast<int>(original_length));
      if (decoded != static_cast<int>(original_length))
        return CorruptBlock(blocks_seen_, "LZ4 data does not decode");
      original = std::string_view(block_.data(), original_length);
    }
    if ((XxHash32(original, kChecksumSeed) & kChecksumMask) != checksum) {
      return CorruptBlock(blocks_seen_, "checksum mismatch");
    }
    output(original);
    position += kLz4HeaderBytes + compressed_length;
    ++blocks_seen_;
  }
  return position;
}

void Lz4BlockDecoder::ReleaseIdleMemory() {
  pending_.ReleaseIdleMemory();
  std::string().swap(block_);
}

}  // namespace sparktrace::listener::eventlog
