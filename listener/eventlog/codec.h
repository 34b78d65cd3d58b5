#pragma once
// The compression codec of an event-log file, as Spark names it in the file's suffix
// (`spark.eventLog.compression.codec` short names: lz4, lzf, snappy, zstd).

#include <string_view>

namespace sparktrace::listener::eventlog {

enum class Codec {
  kNone,     // no suffix: plain JSON lines
  kZstd,     // ".zstd" (Spark) or ".zst"
  kLz4,      // lz4-java LZ4BlockOutputStream
  kSnappy,   // snappy-java SnappyOutputStream
  kLzf,      // ning compress-lzf: recognised, not decoded
  kUnknown,  // any other suffix (a custom codec class, or a file that is not an event log)
};

// `suffix` is the text after the last '.', without the dot; empty for none.
Codec CodecFromSuffix(std::string_view suffix);

std::string_view CodecName(Codec codec);

// Whether MakeChunkDecoder() can decode it.
bool IsSupported(Codec codec);

}  // namespace sparktrace::listener::eventlog
