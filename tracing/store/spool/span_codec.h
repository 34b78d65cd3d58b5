#pragma once
// The binary encoding of a batch of spans that the span spool (tracing/store/spool/span_spool.h) keeps on
// disk: compact, versioned, and exact (every field round-trips, doubles bit for bit, NaN payloads
// and -0.0 included). Not a wire format for other programs; OTLP is that.
//
// Layout, version 1 (integers little-endian; "varint" is LEB128, at most 10 bytes; "string" is a
// varint length then that many bytes):
//   u8 version (1), varint span count, then per span:
//     trace id (16 bytes), span id (8), parent span id (8), string trace_state, string name,
//     u8 kind, u64 start, u64 end, varint attribute count, attributes, varint event count, events,
//     u8 status code, string status message
//   attribute: string key, u8 tag, value:
//     1 string: string | 2 int64: zigzag varint | 3 double: u64 bits | 4 bool: u8 0 or 1 |
//     5 string array: varint count, strings
//   event: string name, u64 time, varint attribute count, attributes
// A new field or value kind means a new version byte; DecodeSpans refuses versions it does not know
// rather than guess.
//
// Threads: both functions are pure; call them from any thread.
//
// Errors: DecodeSpans treats its input as hostile. Every length and count is checked against the
// bytes that remain before anything is allocated, so truncated, corrupt or forged input gives a
// kInvalidArgument Error saying what was wrong and at which byte, never a crash, never an
// allocation larger than a small multiple of the input. No exception leaves it. EncodeSpans cannot
// fail except by running out of memory, where it throws std::bad_alloc like any std::string
// producer (SpanSpool::Append catches it at its boundary).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"

namespace sparktrace::tracing::store {

// The version byte EncodeSpans writes first.
inline constexpr std::uint8_t kSpanCodecVersion = 1;

std::string EncodeSpans(std::span<const Span> spans);

// The spans EncodeSpans wrote, in order; an Error for anything that is not exactly one whole
// encoded batch (trailing bytes included).
Result<std::vector<Span>> DecodeSpans(std::string_view bytes);

}  // namespace sparktrace::tracing::store
