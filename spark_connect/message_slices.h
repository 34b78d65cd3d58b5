#pragma once
// MessageSlices: one serialized protobuf message, as the list of byte slices it arrived in.
//
// The proxy hands a message over as the pieces of its receive buffers the message landed in
// (proxy::MessageBytes, the same type), without copying; a field may start in one slice and end in
// the next. The decoders read across slice boundaries and never copy or change the bytes. The
// slices must outlive the decode call only.

#include <cstdint>
#include <span>

namespace sparktrace::spark_connect {

using ByteSlice = std::span<const std::uint8_t>;
using MessageSlices = std::span<const ByteSlice>;

}  // namespace sparktrace::spark_connect
