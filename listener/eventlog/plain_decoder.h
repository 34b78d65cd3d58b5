#pragma once
// Uncompressed event logs: bytes pass through unchanged.

#include "listener/eventlog/chunk_decoder.h"

namespace sparktrace::listener::eventlog {

class PlainDecoder final : public ChunkDecoder {
 public:
  Result<void> Decode(std::string_view input, const Output& output) override;
  bool HoldsIncompleteUnit() const override { return false; }
  void ReleaseIdleMemory() override {}
};

}  // namespace sparktrace::listener::eventlog
