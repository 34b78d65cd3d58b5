#include "listener/eventlog/chunk_decoder.h"

#include <string>

#include "listener/eventlog/lz4_block_decoder.h"
#include "listener/eventlog/plain_decoder.h"
#include "listener/eventlog/snappy_stream_decoder.h"
#include "listener/eventlog/zstd_decoder.h"

namespace sparktrace::listener::eventlog {

Result<std::unique_ptr<ChunkDecoder>> MakeChunkDecoder(Codec codec) {
  switch (codec) {
    case Codec::kNone:
      return std::unique_ptr<ChunkDecoder>(std::make_unique<PlainDecoder>());
    case Codec::kZstd:
      return std::unique_ptr<ChunkDecoder>(std::make_unique<ZstdDecoder>());
    case Codec::kLz4:
      return std::unique_ptr<ChunkDecoder>(std::make_unique<Lz4BlockDecoder>());
    case Codec::kSnappy:
      return std::unique_ptr<ChunkDecoder>(std::make_unique<SnappyStreamDecoder>());
    case Codec::kLzf:
      return InvalidArgument(
          "codec lzf (ning compress-lzf) is not supported; set spark.eventLog.compression.codec to zstd, lz4 "
          "or "
          "snappy");
    case Codec::kUnknown:
      break;
  }
  return InvalidArgument("unknown compression codec suffix (supported: zstd, lz4, snappy, or none)");
}

}  // namespace sparktrace::listener::eventlog
