#pragma once
// How far a decode got. The decoders return what they could read together with this status (not a
// Result<T>): a message with one bad field still names its session and operation, and the proxy
// counts the failure instead of losing the call.

#include <cstdint>
#include <string_view>

namespace sparktrace::spark_connect {

enum class DecodeStatus : std::uint8_t {
  kOk,             // every field read was well-formed
  kNotDecoded,     // not a message sparktrace decodes (unknown method); nothing was read
  kTruncated,      // a tag, varint or field runs past the end of its message
  kMalformed,      // invalid tag, wire type, varint, or unbalanced group
  kWrongWireType,  // a known field came with another wire type: skipped, the rest was decoded
  kTooDeep,        // nesting beyond WireReader::kMaxNestingDepth
};

// "ok", "not_decoded", "truncated", "malformed", "wrong_wire_type", "too_deep".
std::string_view DecodeStatusName(DecodeStatus status);

// True when the bytes were not a well-formed message: what the proxy counts as undecodable.
bool IsDecodeFailure(DecodeStatus status);

}  // namespace sparktrace::spark_connect
