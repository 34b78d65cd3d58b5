#pragma once
// An incremental parser of HTTP/1.x request heads (RFC 9112): the request line and the header lines
// up to the blank line, fed in whatever pieces the socket delivers. Limits are checked as bytes
// arrive, before they are kept, so a parser never holds more than its limits: a request line with no
// newline is refused once it passes max_request_line_bytes, not buffered. The body is not its job
// (RequestBodyLength says how long it is). Pure; one parser per connection, not thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::admin {

struct HttpHeader {
  std::string name;  // as sent
  std::string value;  // without the surrounding whitespace
};

struct RequestHead {
  std::string method;  // case-sensitive, as sent: "GET"
  std::string path;    // the target before '?' ("/" for an absolute-form target without one)
  std::string query;   // after '?', undecoded; empty when none
  int version_minor = 1;  // HTTP/1.<minor>
  std::vector<HttpHeader> headers;

  // The first value of a header (case-insensitive name), or nullopt. Valid while the head is.
  std::optional<std::string_view> Header(std::string_view name) const;
  // Whether the connection may serve another request after this one: HTTP/1.1 unless
  // "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
  bool KeepAlive() const;
  // "Expect: 100-continue".
  bool ExpectsContinue() const;
};

struct HeadLimits {
  std::size_t max_request_line_bytes = 0;  // request line with its CRLF (leading blank lines count)
  std::size_t max_header_bytes = 0;        // header lines with their CRLFs and the final blank line
  std::size_t max_headers = 0;
};

// Why a head was refused; each maps to the status the server answers.
enum class HeadError {
  kNone,
  kBadRequest,          // 400: malformed request line or header line
  kUriTooLong,          // 414: request line over its limit
  kHeadersTooLarge,     // 431: header bytes or count over their limit
  kVersionNotSupported  // 505: not HTTP/1.0 or HTTP/1.1
};
int HeadErrorStatus(HeadError error);

class RequestHeadParser {
 public:
  enum class Status { kNeedMore, kDone, kError };
  struct Progress {
    Status status = Status::kNeedMore;
    std::size_t consumed = 0;  // bytes of the piece used: all of it unless the head ended inside it
  };

  explicit RequestHeadParser(HeadLimits limits) : limits_(limits) {}

  // Takes the next piece of the stream. After kDone the bytes past `consumed` belong to the body
  // or the next request; after kDone or kError, Feed must not be called again until Reset().
  Progress Feed(std::string_view piece);

  // Whether any byte of a request has arrived since the last Reset (an idle keep-alive connection
  // has none; one that has is waiting for the rest of a head).
  bool started() const { return started_; }
  HeadError error() const { return error_; }
  // The parsed head, after kDone; leaves the parser to be Reset.
  RequestHead TakeHead() { return std::move(head_); }
  // Ready for the next request on the same connection.
  void Reset();

 private:
  Status Fail(HeadError error);
  // One complete line without its terminator; returns kDone at the blank line ending the head.
  Status TakeLine(std::string_view line);
  bool ParseRequestLine(std::string_view line);

  HeadLimits limits_;
  std::string line_;          // the line being received (bounded by the limit of its part)
  std::size_t prefix_bytes_ = 0;  // blank lines before the request line (RFC 9112 2.2)
  std::size_t header_bytes_ = 0;  // complete header lines so far
  bool have_request_line_ = false;
  bool started_ = false;
  HeadError error_ = HeadError::kNone;
  RequestHead head_;
};

// The length of a request's body from its framing headers: Content-Length (repeated values must
// agree), 0 without one. Transfer-Encoding is not supported (status 411: send Content-Length).
struct BodyLength {
  std::uint64_t bytes = 0;
  int error_status = 0;  // 400 or 411; 0 when `bytes` is valid
};
BodyLength RequestBodyLength(const RequestHead& head);

// ASCII case-insensitive equality, as header names and tokens compare.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace sparktrace::admin
