#include "listener/eventlog/snappy_stream_decoder.h"

#include <snappy.h>

#include <algorithm>

#include "listener/eventlog/byte_order.h"

namespace sparktrace::listener::eventlog {
namespace {

constexpr std::string_view kSnappyMagic{"\x82SNAPPY\0", 8};
constexpr std::size_t kSnappyHeaderBytes = 16;
// snappy-java compares its first four bytes, read as a chunk length, with this to spot a new header.
constexpr std::uint32_t kMagicAsLength = 0x82534E41;
constexpr std::uint32_t kNewestCompatibleVersion = 1;
// Spark writes 32 KiB chunks; anything near this bound is corruption, not data.
constexpr std::size_t kMaxChunkBytes = std::size_t{64} << 20;

Error CorruptChunk(std::uint64_t chunk, const std::string& what) {
  return Error{ErrorCode::kInvalidArgument, "snappy chunk " + std::to_string(chunk) + ": " + what};
}

}  // namespace

Result<void> SnappyStreamDecoder::Decode(std::string_view input, const Output& output) {
  const std::string_view data = pending_.Combine(input);
  Result<std::size_t> consumed = DecodeChunks(data, output);
  if (!consumed.ok()) return consumed.error();
  pending_.Keep(data, *consumed);
  return {};
}

Result<std::size_t> SnappyStreamDecoder::DecodeChunks(std::string_view data, const Output& output) {
  std::size_t position = 0;
  while (position < data.size()) {
    const std::string_view rest = data.substr(position);
    if (expecting_header_) {
      const std::size_t magic_bytes = std::min(rest.size(), kSnappyMagic.size());
      if (rest.substr(0, magic_bytes) != kSnappyMagic.substr(0, magic_bytes)) {
        return CorruptChunk(chunks_seen_, "bad magic (not a snappy-java SnappyOutputStream)");
      }
      if (rest.size() < kSnappyHeaderBytes) break;
      const std::uint32_t compatible_version = ReadBigEndian32(rest.data() + 12);
      if (compatible_version > kNewestCompatibleVersion) {
        return CorruptChunk(chunks_seen_, "stream needs a newer snappy-java (compatible version " +
                                              std::to_string(compatible_version) + ")");
      }
      position += kSnappyHeaderBytes;
      expecting_header_ = false;
      continue;
    }
    if (rest.size() < 4) break;
    const std::uint32_t compressed_length = ReadBigEndian32(rest.data());
    if (compressed_length == kMagicAsLength) {  // another stream starts here; parse its header
      expecting_header_ = true;
      continue;
    }
    if (compressed_length > kMaxChunkBytes) return CorruptChunk(chunks_seen_, "chunk length out of range");
    if (rest.size() - 4 < compressed_length) break;

    const std::string_view compressed = rest.substr(4, compressed_length);
    if (!compressed.empty()) {
      std::size_t original_length = 0;
      if (!snappy::GetUncompressedLength(compressed.data(), compressed.size(), &original_length) ||
          original_length > kMaxChunkBytes) {
        return CorruptChunk(chunks_seen_, "bad snappy block header");
      }
      chunk_.resize(original_length);
      if (!snappy::RawUncompress(compressed.data(), compressed.size(), chunk_.data())) {
        return CorruptChunk(chunks_seen_, "snappy data does not decode");
      }
      if (original_length > 0) output(std::string_view(chunk_.data(), original_length));
    }
    position += 4 + compressed_length;
    ++chunks_seen_;
  }
  return position;
}

void SnappyStreamDecoder::ReleaseIdleMemory() {
  pending_.ReleaseIdleMemory();
  std::string().swap(chunk_);
}

}  // namespace sparktrace::listener::eventlog
