#pragma once
// zstd event logs: a concatenation of standard frames, one per flush (SPARK-29322), so a live file ends
// at a frame boundary or inside a frame that is still being written.

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "listener/eventlog/chunk_decoder.h"

namespace sparktrace::listener::eventlog {

class ZstdDecoder final : public ChunkDecoder {
 public:
  Result<void> Decode(std::string_view input, const Output& output) override;
  bool HoldsIncompleteUnit() const override { return bytes_into_frame_ > 0; }
  void ReleaseIdleMemory() override;

 private:
  struct ContextDeleter {
    void operator()(ZSTD_DCtx* context) const { ZSTD_freeDCtx(context); }
  };

  // Created on first use and dropped at frame boundaries while idle: a fresh context continues
  // correctly at the next frame, and an idle one holds the whole window (hundreds of KiB).
  std::unique_ptr<ZSTD_DCtx, ContextDeleter> context_;
  std::vector<char> output_buffer_;
  std::uint64_t bytes_into_frame_ = 0;  // input consumed since the last frame ended
};

}  // namespace sparktrace::listener::eventlog
