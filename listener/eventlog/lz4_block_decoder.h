#pragma once
// lz4 event logs: lz4-java's LZ4BlockOutputStream format (not the LZ4 frame format). Each block is a
// 21-byte header — magic "LZ4Block", token (method | level), compressed length, original length and
// checksum, all little endian — then the payload: LZ4 block data (method 0x20) or the bytes as they are
// (0x10). A block with both lengths 0 ends a stream; Spark reads on after it (concatenated streams).
// The checksum is xxhash32 (seed 0x9747b28c) of the original bytes, masked to 28 bits; it is verified.

#include <cstdint>
#include <string>

#include "listener/eventlog/chunk_decoder.h"
#include "listener/eventlog/pending_input.h"

namespace sparktrace::listener::eventlog {

class Lz4BlockDecoder final : public ChunkDecoder {
 public:
  Result<void> Decode(std::string_view input, const Output& output) override;
  bool HoldsIncompleteUnit() const override { return !pending_.empty(); }
  void ReleaseIdleMemory() override;

 private:
  // Decodes whole blocks from the front of `data`; returns how many bytes they took.
  Result<std::size_t> DecodeBlocks(std::string_view data, const Output& output);

  PendingInput pending_;
  std::string block_;              // one decompressed block
  std::uint64_t blocks_seen_ = 0;  // for error messages
};

}  // namespace sparktrace::listener::eventlog
