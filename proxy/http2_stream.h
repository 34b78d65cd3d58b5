#pragma once
// One side of a relayed call as the connection carrying it sees it: the stream events an
// Http2Connection hands over, and the pull through which it takes the stream's DATA. Apart from
// http2_connection.h so that a call (relayed_call.h) implements it without seeing nghttp2: the codec
// owns nghttp2, and a stream speaks RFC 9113 (its error codes), not the library.
//
// Threads: the relay worker's that owns the connection, as for Http2Connection.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

struct evbuffer;

namespace sparktrace::proxy {

// The RFC 9113 error codes (§7) a call closes or resets its streams with.
inline constexpr std::uint32_t kHttp2NoError = 0x0;
inline constexpr std::uint32_t kHttp2Cancel = 0x8;

// RFC 9113's name of an error code ("CANCEL"; "unknown" past the codes it defines).
const char* Http2ErrorName(std::uint32_t error_code);

// ReadyToSend's answer when nothing is queued yet: the connection asks again after ResumeData.
// nghttp2's NGHTTP2_ERR_DEFERRED, which http2_connection.cc checks it equals.
inline constexpr ssize_t kNothingToSendYet = -508;

// One side of a relayed call, as seen by the connection carrying it.
class Http2Stream {
 public:
  virtual ~Http2Stream() = default;
  // `never_index`: the peer sent it as a never-indexed literal (a secret, RFC 7541 §7.1.3), which an
  // intermediary forwards as such (§6.2.3).
  virtual void OnHeader(std::string_view name, std::string_view value, bool never_index) = 0;
  // A complete HEADERS block (request headers, response headers or trailers).
  virtual void OnHeadersComplete(bool end_stream) = 0;
  virtual void OnData(std::span<const std::uint8_t> bytes) = 0;
  // END_STREAM on a DATA frame.
  virtual void OnEndOfData() = 0;
  // The stream is closed (reset by either side, finished, or the connection is gone); the
  // connection forgets the stream after this. `error_code` is the RFC 9113 code, 0 when clean.
  virtual void OnStreamClosed(std::uint32_t error_code) = 0;
  // The data provider: how many queued bytes to send now (at most `max_bytes`); sets
  // `*end_of_data` when nothing is left and the sending side has ended. Returns
  // kNothingToSendYet when nothing is queued yet.
  virtual ssize_t ReadyToSend(std::size_t max_bytes, bool* end_of_data, bool* no_end_stream) = 0;
  // Writes the next `bytes` queued bytes into `out` (the frame header is already there).
  virtual void SendData(evbuffer* out, std::size_t bytes) = 0;
  // Client role: the request was submitted as stream `stream_id`.
  virtual void OnOpened(std::int32_t /*stream_id*/) {}
};

}  // namespace sparktrace::proxy
