#include "listener/eventlog/codec.h"

namespace sparktrace::listener::eventlog {

Codec CodecFromSuffix(std::string_view suffix) {
  if (suffix.empty()) return Codec::kNone;
  if (suffix == "zstd" || suffix == "zst") return Codec::kZstd;
  if (suffix == "lz4") return Codec::kLz4;
  if (suffix == "snappy") return Codec::kSnappy;
  if (suffix == "lzf") return Codec::kLzf;
  return Codec::kUnknown;
}

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kNone:
      return "none";
    case Codec::kZstd:
      return "zstd";
    case Codec::kLz4:
      return "lz4";
    case Codec::kSnappy:
      return "snappy";
    case Codec::kLzf:
      return "lzf";
    case Codec::kUnknown:
      return "unknown";
  }
  return "unknown";
}

bool IsSupported(Codec codec) {
  return codec == Codec::kNone || codec == Codec::kZstd || codec == Codec::kLz4 || codec == Codec::kSnappy;
}

}  // namespace sparktrace::listener::eventlog
