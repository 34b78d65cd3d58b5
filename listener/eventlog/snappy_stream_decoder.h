#pragma once
// snappy event logs: snappy-java's SnappyOutputStream format (not the snappy framing format). A 16-byte
// header — magic "\x82SNAPPY\0", then version and minimum compatible version as big-endian ints — and
// then chunks of [big-endian int32 compressed length][raw snappy block]; every flush ends a chunk. A
// header may appear again between chunks (concatenated streams), as SnappyInputStream accepts.

#include <cstdint>
#include <string>

#include "listener/eventlog/chunk_decoder.h"
#include "listener/eventlog/pending_input.h"

namespace sparktrace::listener::eventlog {

class SnappyStreamDecoder final : public ChunkDecoder {
 public:
  Result<void> Decode(std::string_view input, const Output& output) override;
  bool HoldsIncompleteUnit() const override { return !pending_.empty(); }
  void ReleaseIdleMemory() override;

 private:
  Result<std::size_t> DecodeChunks(std::string_view data, const Output& output);

  PendingInput pending_;
  std::string chunk_;  // one decompressed chunk
  bool expecting_header_ = true;
  std::uint64_t chunks_seen_ = 0;  // for error messages
};

}  // namespace sparktrace::listener::eventlog
