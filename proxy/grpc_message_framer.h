#pragma once
// Incremental parser of gRPC's message framing (length-prefixed messages) over one direction of
// one HTTP/2 stream.
//
// Why: the HTTP/2 frame relay (issue 11) forwards DATA frames as they arrive and never re-frames
// them, but the taps (CallTap: "a message passed") still need whole gRPC messages. The relay feeds
// each DATA payload it forwards to this framer, which reports where messages start and end and
// hands over the payload as spans into the caller's own buffers, so the tap can be shown a message
// as a list of slices without the proxy copying or buffering it. DATA frames split the byte
// stream arbitrarily: a message may span many frames and a frame may hold many messages.
//
// Wire format (gRPC over HTTP/2): each message is a 1-byte compressed flag (0 or 1; anything else
// is a protocol error), a 4-byte big-endian length, then that many payload bytes.
//
// The size limit is enforced on the 5-byte prefix alone: a message declared larger than
// `max_message_bytes` is refused before any of its payload is looked at, so the relay can reset
// the stream (RESOURCE_EXHAUSTED) instead of forwarding a message its peer would refuse anyway.
//
// Threads: none of its own and no locks. One framer per stream direction, used by the one thread
// that owns the stream (the relay's event loop); the visitor is called synchronously from Feed.
//
// Memory: fixed, a few dozen bytes, whatever the message sizes. Only a prefix cut by a chunk
// boundary is carried over (at most 4 bytes; a complete 5th byte is consumed at once); payload
// bytes are never copied or kept. Feed allocates nothing.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sparktrace::proxy {

// std::uint8_t rather than std::byte: the bytes come from nghttp2's data callbacks
// (const uint8_t*, size_t) and go to the spark_connect/ decoders (ByteSlice is
// span<const uint8_t>), so neither side needs a cast; std::byte would add two reinterpret_casts
// and buy nothing, as the framer does no bit arithmetic on payload bytes.
using GrpcBytes = std::span<const std::uint8_t>;

// What the framer reports, in stream order, for every message: one OnMessageStart, then zero or
// more non-empty OnMessagePayload pieces adding up to `length`, then one OnMessageEnd (right after
// the start for an empty message). The pieces point into the chunk passed to the Feed call that
// reports them and are valid only as long as the caller keeps that chunk.
class GrpcMessageVisitor {
 public:
  virtual ~GrpcMessageVisitor() = default;
  virtual void OnMessageStart(bool compressed, std::uint32_t length) = 0;
  virtual void OnMessagePayload(GrpcBytes piece) = 0;
  virtual void OnMessageEnd() = 0;
};

enum class GrpcFramingError : std::uint8_t {
  kNone,
  kBadCompressedFlag,  // the flag byte was neither 0 nor 1
  kMessageTooLarge,    // the declared length exceeds max_message_bytes
};
std::string_view GrpcFramingErrorName(GrpcFramingError error);

// Where the stream stands if it ends now (END_STREAM seen). gRPC treats anything but kClean as an
// error: the peer's last message was cut short.
enum class GrpcStreamEnd : std::uint8_t {
  kClean,             // at a message boundary (also: nothing was received)
  kTruncatedPrefix,   // ended inside a 5-byte prefix
  kTruncatedPayload,  // ended inside a message's payload
  kFailed,            // a framing error was reported earlier
};
std::string_view GrpcStreamEndName(GrpcStreamEnd end);

class GrpcMessageFramer {
 public:
  static constexpr std::size_t kPrefixBytes = 5;

  explicit GrpcMessageFramer(std::uint32_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}

  // Parses the next chunk of the stream, calling `visitor` for what it completes. Returns kNone,
  // or the error that stopped parsing: the visitor sees nothing of the offending message, the
  // framer keeps the error, and every later Feed returns it without reading its input. An empty
  // chunk is allowed and reports nothing.
  GrpcFramingError Feed(GrpcBytes chunk, GrpcMessageVisitor& visitor);

  // For the end of the stream: whether it ended cleanly. Does not change the framer.
  GrpcStreamEnd AtEndOfStream() const;

  GrpcFramingError error() const { return error_; }
  // The length the offending prefix declared, for the error message when error() is
  // kMessageTooLarge; 0 otherwise.
  std::uint32_t refused_length() const { return refused_length_; }
  std::uint32_t max_message_bytes() const { return max_message_bytes_; }
  // Messages completed so far (OnMessageEnd calls).
  std::uint64_t messages() const { return messages_; }

 private:
  // Handles a complete prefix; returns the error or kNone.
  GrpcFramingError StartMessage(std::span<const std::uint8_t, kPrefixBytes> prefix,
                                GrpcMessageVisitor& visitor);

  std::uint32_t max_message_bytes_;
  // Payload bytes of the current message not yet seen; nonzero exactly while inside a payload,
  // as an empty message ends as soon as its prefix is read.
  std::uint32_t payload_left_ = 0;
  std::uint8_t prefix_size_ = 0;  // bytes in prefix_, 0..4 between Feed calls
  std::array<std::uint8_t, kPrefixBytes> prefix_{};
  GrpcFramingError error_ = GrpcFramingError::kNone;
  std::uint32_t refused_length_ = 0;
  std::uint64_t messages_ = 0;
};

}  // namespace sparktrace::proxy
