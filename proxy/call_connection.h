#pragma once
// What a relayed call asks of a connection that carries one of its streams: the stream verbs.
// Http2Connection implements them over nghttp2; the call never sees the session, so it can be
// tested against a fake connection (tests/unit/proxy/relayed_call_test.cc).
//
// A thin virtual interface rather than a template parameter on RelayedCall: the call stays one
// ordinary class in one .cc. Two verbs run per DATA chunk (ResumeData when it arrives, Consume
// when it leaves), one indirect call each on a path that already makes several (nghttp2's
// callbacks, Http2Stream's) and copies the chunk once; before and after, interleaved on the
// same 2-core machine, the 64 KiB and 4 MiB streams showed no difference beyond the run-to-run
// spread (about 20 %).
//
// Threads: the relay worker's that owns the connection, as for Http2Connection.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::proxy {

class Http2Stream;

struct Header {
  std::string name;
  std::string value;
  // A value made for this one call (an observer's traceparent): HPACK sends it as a literal never
  // indexed. Indexed, a value that never repeats would fill the connection's dynamic table and push
  // out the headers that do repeat (content-type, user-agent, the session's metadata), which every
  // call would then send and index again.
  bool never_index = false;
};

// The size RFC 9113 gives a header field in a header list: its name and value, plus 32 bytes.
inline std::size_t HeaderFieldSize(std::string_view name, std::string_view value) {
  return name.size() + value.size() + 32;
}

// The error code streams are closed with when their connection is gone. Not an RFC 9113 code
// (those are small numbers): nobody reset the stream, it has no connection left.
inline constexpr std::uint32_t kConnectionLost = 0xffff'ffff;
// The error code a stream is closed with when its request headers were never sent: their header
// list is larger than the peer's SETTINGS_MAX_HEADER_LIST_SIZE, so the peer would refuse them, or
// fail the whole connection (and every other call on it) over them.
inline constexpr std::uint32_t kHeaderListTooLarge = 0xffff'fffe;

class CallConnection {
 public:
  // Client role (the upstream side): opens a stream carrying `stream` (see SubmitRequest in
  // http2_connection.h for when it waits, and what closes it).
  enum class Submitted { kYes, kClosing, kOverPeerHeaderLimit };

  virtual const std::string& peer() const = 0;  // "ipv4:127.0.0.1:5000"
  virtual Submitted SubmitRequest(std::vector<Header> headers, Http2Stream& stream) = 0;
  // Server role: the response's HEADERS. With `body`, nghttp2 pulls the DATA from it
  // (Http2Stream::ReadyToSend / SendData); without, the headers end the stream (trailers-only).
  virtual void SubmitResponse(std::int32_t stream_id, const std::vector<Header>& headers,
                              Http2Stream* body) = 0;
  // The trailers that end a response. Called from the body's ReadyToSend, while the connection is
  // sending: it flushes them itself. False when nghttp2 refused them (try again later).
  virtual bool SubmitTrailers(std::int32_t stream_id, const std::vector<Header>& trailers) = 0;
  // RST_STREAM with `error_code` (an RFC 9113 code).
  virtual void ResetStream(std::int32_t stream_id, std::uint32_t error_code) = 0;
  // The stream has something new to send (DATA queued, its end, or trailers): asks for its DATA
  // again, and flushes after this event. A stream not opened yet (`stream_id` <= 0) only flushes.
  virtual void ResumeData(std::int32_t stream_id) = 0;
  // Reopens `bytes` of receive window on `stream_id`: the other side has taken them.
  virtual void Consume(std::int32_t stream_id, std::size_t bytes) = 0;
  // Raises `stream_id`'s receive window to `window` bytes.
  virtual void GrowStreamWindow(std::int32_t stream_id, std::int32_t window) = 0;
  // The stream forgets its connection: no further callbacks reach it (its HTTP/2 stream may
  // still be open, e.g. until a reset is written).
  virtual void DetachStream(std::int32_t stream_id, Http2Stream& stream) = 0;

 protected:
  ~CallConnection() = default;
};

}  // namespace sparktrace::proxy
