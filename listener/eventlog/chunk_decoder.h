#pragma once
// Incremental decompression of one event-log file, fed with the file's bytes in whatever pieces they
// were read (a live file can end anywhere: inside a zstd frame, an lz4 block header, a snappy chunk).

#include <functional>
#include <memory>
#include <string_view>

#include "common/result.h"
#include "listener/eventlog/codec.h"

namespace sparktrace::listener::eventlog {

// One decoder per file, fed on one thread (the one polling the log).
class ChunkDecoder {
 public:
  // Receives decoded bytes in order, in pieces of bounded size (one zstd output buffer, one lz4 or
  // snappy block); the view is valid only during the call.
  using Output = std::function<void(std::string_view decoded)>;

  virtual ~ChunkDecoder() = default;

  // Consumes all of `input`, the file's next bytes: decodes every unit (frame, block, chunk) that is now
  // complete, passes its bytes to `output`, and keeps the start of an unfinished unit for the next call.
  // An error means the stream is corrupt; the decoder must not be fed again.
  virtual Result<void> Decode(std::string_view input, const Output& output) = 0;

  // True while it holds part of a unit whose rest has not arrived: normal for a live file, a truncation
  // if the file is known to be complete.
  virtual bool HoldsIncompleteUnit() const = 0;

  // Frees what is not needed to continue (decompression contexts, buffers) when no unit is incomplete;
  // called while the file is idle, so that many idle logs cost little memory.
  virtual void ReleaseIdleMemory() = 0;
};

// Errors for codecs that cannot be decoded (lzf, unknown).
Result<std::unique_ptr<ChunkDecoder>> MakeChunkDecoder(Codec codec);

}  // namespace sparktrace::listener::eventlog
