// The admin server's request-head parser (admin/http_parser.h): every split point of a request gives
// the same head, limits bite while bytes arrive (before a newline), and a table of malformed heads.

#include "admin/http_parser.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace sparktrace::admin {
namespace {

constexpr HeadLimits kLimits{256, 1024, 8};

struct Outcome {
  RequestHeadParser::Status status = RequestHeadParser::Status::kNeedMore;
  HeadError error = HeadError::kNone;
  std::size_t consumed = 0;  // bytes of the whole input used when the head ended (or failed)
  RequestHead head;
};

// Feeds `input` cut at the given points; stops at kDone or kError as a connection does.
Outcome FeedInPieces(const std::string& input, const std::vector<std::size_t>& cuts, HeadLimits limits = kLimits) {
  RequestHeadParser parser(limits);
  Outcome outcome;
  std::size_t start = 0;
  std::vector<std::size_t> ends = cuts;
  ends.push_back(input.size());
  for (const std::size_t end : ends) {
    const auto progress = parser.Feed(std::string_view(input).substr(start, end - start));
    outcome.consumed = start + progress.consumed;
    outcome.status = progress.status;
    if (progress.status != RequestHeadParser::Status::kNeedMore) break;
    start = end;
  }
  outcome.error = parser.error();
  if (outcome.status == RequestHeadParser::Status::kDone) outcome.head = parser.TakeHead();
  return outcome;
}

Outcome FeedWhole(const std::string& input, HeadLimits limits = kLimits) { return FeedInPieces(input, {}, limits); }

Outcome FeedByteByByte(const std::string& input, HeadLimits limits = kLimits) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < input.size(); ++i) cuts.push_back(i);
  return FeedInPieces(input, cuts, limits);
}

const std::string kRequest =
    "POST /api/v1/events?app=a%2Fb&x=1 HTTP/1.1\r\n"
    "Host: 127.0.0.1:9464\r\n"
    "Content-Type:application/x-ndjson\r\n"
    "X-Spaced:   padded value \t\r\n"
    "Content-Length: 5\r\n"
    "\r\n"
    "hello";
const std::size_t kHeadSize = kRequest.size() - 5;

void ExpectTheRequest(const Outcome& outcome) {
  ASSERT_EQ(outcome.status, RequestHeadParser::Status::kDone);
  EXPECT_EQ(outcome.consumed, kHeadSize);  // the body is left for the connection
  EXPECT_EQ(outcome.head.method, "POST");
  EXPECT_EQ(outcome.head.path, "/api/v1/events");
  EXPECT_EQ(outcome.head.query, "app=a%2Fb&x=1");
  EXPECT_EQ(outcome.head.version_minor, 1);
  ASSERT_EQ(outcome.head.headers.size(), 4u);
  EXPECT_EQ(outcome.head.Header("host"), "127.0.0.1:9464");
  EXPECT_EQ(outcome.head.Header("CONTENT-TYPE"), "application/x-ndjson");
  EXPECT_EQ(outcome.head.Header("x-spaced"), "padded value");
  EXPECT_EQ(outcome.head.Header("missing"), std::nullopt);
  EXPECT_EQ(RequestBodyLength(outcome.head).bytes, 5u);
}

TEST(HttpParser, ParsesAWholeRequestHead) { ExpectTheRequest(FeedWhole(kRequest)); }

TEST(HttpParser, GivesTheSameHeadAtEverySplitPoint) {
  for (std::size_t cut = 1; cut < kRequest.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    ExpectTheRequest(FeedInPieces(kRequest, {cut}));
  }
  for (std::size_t first = 1; first < kHeadSize; first += 7) {
    for (std::size_t second = first + 1; second < kRequest.size(); second += 5) {
      SCOPED_TRACE("cuts at " + std::to_string(first) + ", " + std::to_string(second));
      ExpectTheRequest(FeedInPieces(kRequest, {first, second}));
    }
  }
  ExpectTheRequest(FeedByteByByte(kRequest));
}

TEST(HttpParser, ResetReadsTheNextRequestOfTheConnection) {
  RequestHeadParser parser(kLimits);
  EXPECT_FALSE(parser.started());
  const std::string two = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
  auto progress = parser.Feed(two);
  ASSERT_EQ(progress.status, RequestHeadParser::Status::kDone);
  EXPECT_TRUE(parser.started());
  EXPECT_EQ(parser.TakeHead().path, "/a");
  parser.Reset();
  EXPECT_FALSE(parser.started());
  progress = parser.Feed(std::string_view(two).substr(progress.consumed));
  ASSERT_EQ(progress.status, RequestHeadParser::Status::kDone);
  EXPECT_EQ(parser.TakeHead().path, "/b");
}

TEST(HttpParser, AcceptsBareLineFeedsAndLeadingBlankLines) {
  const Outcome outcome = FeedByteByByte("\r\n\nGET /healthz HTTP/1.0\nHost: a\n\n");
  ASSERT_EQ(outcome.status, RequestHeadParser::Status::kDone);
  EXPECT_EQ(outcome.head.path, "/healthz");
  EXPECT_EQ(outcome.head.version_minor, 0);
  EXPECT_EQ(outcome.head.Header("Host"), "a");
}

TEST(HttpParser, ReadsTheTargetForms) {
  const auto path_and_query = [](const std::string& target) {
    const Outcome outcome = FeedWhole("GET " + target + " HTTP/1.1\r\n\r\n");
    EXPECT_EQ(outcome.status, RequestHeadParser::Status::kDone) << target;
    return outcome.head.path + "|" + outcome.head.query;
  };
  EXPECT_EQ(path_and_query("/"), "/|");
  EXPECT_EQ(path_and_query("/a/b?"), "/a/b|");
  EXPECT_EQ(path_and_query("/a?b?c"), "/a|b?c");
  EXPECT_EQ(path_and_query("http://host:9464/api/v1/tasks?dag=x"), "/api/v1/tasks|dag=x");
  EXPECT_EQ(path_and_query("HTTPS://host"), "/|");
  EXPECT_EQ(path_and_query("http://host?q=1"), "/|q=1");
  EXPECT_EQ(path_and_query("*"), "*|");
}

TEST(HttpParser, ServesHttp1xAbove1As11AndRefusesOtherMajors) {
  EXPECT_EQ(FeedWhole("GET / HTTP/1.2\r\n\r\n").head.version_minor, 1);
  const Outcome two = FeedWhole("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  EXPECT_EQ(two.status, RequestHeadParser::Status::kError);
  EXPECT_EQ(two.error, HeadError::kVersionNotSupported);
  EXPECT_EQ(HeadErrorStatus(two.error), 505);
}

TEST(HttpParser, RefusesMalformedHeads) {
  const std::vector<std::string> malformed = {
      "GET /\r\n\r\n",                                  // HTTP/0.9
      "GET\r\n\r\n",                                    // no target
      "GET  / HTTP/1.1\r\n\r\n",                        // two spaces
      "GET / HTTP/1.1 \r\n\r\n",                        // trailing space
      "G(T / HTTP/1.1\r\n\r\n",                         // not a token
      "GET / http/1.1\r\n\r\n",                         // lower-case version
      "GET / HTTP/1\r\n\r\n",                           // short version
      "GET / HTTP/1.1x\r\n\r\n",                        // long version
      "GET foo HTTP/1.1\r\n\r\n",                       // not origin-form
      "CONNECT host:443 HTTP/1.1\r\n\r\n",              // authority-form
      "GET /a\x01 HTTP/1.1\r\n\r\n",                    // control character in the target
      "GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n",              // raw UTF-8 in the target
      "GET / HTTP/1.1\r\nHost : a\r\n\r\n",             // space before the colon
      "GET / HTTP/1.1\r\nHost a\r\n\r\n",               // no colon
      "GET / HTTP/1.1\r\n: a\r\n\r\n",                  // empty name
      "GET / HTTP/1.1\r\nX-A: 1\r\n  folded\r\n\r\n",   // obs-fold
      "GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n",            // bare CR in a value
      std::string("GET / HTTP/1.1\r\nX-A: a") + '\0' + "b\r\n\r\n",  // NUL in a value
      "GET / HTTP/1.1\r\nX-A: a\x7f\r\n\r\n",           // DEL in a value
  };
  for (const std::string& head : malformed) {
    SCOPED_TRACE(head);
    const Outcome whole = FeedWhole(head);
    EXPECT_EQ(whole.status, RequestHeadParser::Status::kError);
    EXPECT_EQ(whole.error, HeadError::kBadRequest);
    EXPECT_EQ(FeedByteByByte(head).error, HeadError::kBadRequest);
  }
}

TEST(HttpParser, KeepsObsTextAndTabsInValues) {
  const Outcome outcome = FeedWhole("GET / HTTP/1.1\r\nX-Name: caf\xc3\xa9\tbar\r\n\r\n");
  ASSERT_EQ(outcome.status, RequestHeadParser::Status::kDone);
  EXPECT_EQ(outcome.head.Header("x-name"), "caf\xc3\xa9\tbar");
}

TEST(HttpParser, RefusesALongRequestLineAtItsLimitWithoutANewline) {
  // Exactly the limit (CRLF included) passes.
  const std::string fits = "GET /" + std::string(kLimits.max_request_line_bytes - 16, 'a') + " HTTP/1.1\r\n";
  ASSERT_EQ(fits.size(), kLimits.max_request_line_bytes);
  EXPECT_EQ(FeedWhole(fits + "\r\n").status, RequestHeadParser::Status::kDone);
  const std::string over = "GET /" + std::string(kLimits.max_request_line_bytes - 15, 'a') + " HTTP/1.1\r\n\r\n";
  EXPECT_EQ(FeedWhole(over).error, HeadError::kUriTooLong);
  EXPECT_EQ(HeadErrorStatus(HeadError::kUriTooLong), 414);

  // A line that never ends fails on the first byte past the limit, whatever the pieces.
  const std::string endless(10 * kLimits.max_request_line_bytes, 'A');
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{256}, std::size_t{4096}}) {
    std::vector<std::size_t> cuts;
    for (std::size_t at = piece; at < endless.size(); at += piece) cuts.push_back(at);
    const Outcome outcome = FeedInPieces(endless, cuts);
    EXPECT_EQ(outcome.error, HeadError::kUriTooLong) << piece;
    EXPECT_LE(outcome.consumed, kLimits.max_request_line_bytes + piece) << piece;
  }
  // Blank lines before the request line count toward its limit.
  EXPECT_EQ(FeedWhole(std::string(kLimits.max_request_line_bytes, '\n')).status, RequestHeadParser::Status::kNeedMore);
  EXPECT_EQ(FeedWhole(std::string(kLimits.max_request_line_bytes + 1, '\n')).error, HeadError::kUriTooLong);
}

TEST(HttpParser, RefusesHeadersOverTheirByteOrLineLimit) {
  const std::string line = "GET / HTTP/1.1\r\n";
  // 1024 bytes of header lines with the final blank line: fits.
  const std::string filler = "X-Fill: " + std::string(kLimits.max_header_bytes - 2 - 10, 'f') + "\r\n";
  ASSERT_EQ(filler.size() + 2, kLimits.max_header_bytes);
  EXPECT_EQ(FeedWhole(line + filler + "\r\n").status, RequestHeadParser::Status::kDone);
  const std::string longer = "X-Fill: " + std::string(kLimits.max_header_bytes - 2 - 9, 'f') + "\r\n";
  EXPECT_EQ(FeedWhole(line + longer + "\r\n").error, HeadError::kHeadersTooLarge);
  EXPECT_EQ(HeadErrorStatus(HeadError::kHeadersTooLarge), 431);

  // An endless header line, or endless short lines, stop at the byte limit.
  const Outcome endless = FeedByteByByte(line + "X-Endless: " + std::string(4 * kLimits.max_header_bytes, 'e'));
  EXPECT_EQ(endless.error, HeadError::kHeadersTooLarge);
  EXPECT_LE(endless.consumed, line.size() + kLimits.max_header_bytes + 1);

  std::string many = line;
  for (std::size_t i = 0; i < kLimits.max_headers; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(FeedWhole(many + "\r\n").status, RequestHeadParser::Status::kDone);
  EXPECT_EQ(FeedWhole(many + "X-One-More: v\r\n\r\n").error, HeadError::kHeadersTooLarge);
}

TEST(HttpParser, TellsTheBodyLengthFromContentLengthOnly) {
  const auto length = [](const std::string& headers) {
    const Outcome outcome = FeedWhole("POST / HTTP/1.1\r\n" + headers + "\r\n");
    EXPECT_EQ(outcome.status, RequestHeadParser::Status::kDone) << headers;
    return RequestBodyLength(outcome.head);
  };
  EXPECT_EQ(length("").bytes, 0u);
  EXPECT_EQ(length("Content-Length: 0\r\n").bytes, 0u);
  EXPECT_EQ(length("Content-Length: 42\r\n").bytes, 42u);
  EXPECT_EQ(length("Content-Length: 42, 42\r\ncontent-length: 42\r\n").bytes, 42u);
  EXPECT_EQ(length("Content-Length: 99999999999999999999999\r\n").bytes, std::numeric_limits<std::uint64_t>::max());
  for (const char* bad : {"Content-Length: 42, 43\r\n", "Content-Length: 1\r\nContent-Length: 2\r\n",
                          "Content-Length: -1\r\n", "Content-Length: 0x10\r\n", "Content-Length: \r\n",
                          "Content-Length: 1 2\r\n"}) {
    EXPECT_EQ(length(bad).error_status, 400) << bad;
  }
  EXPECT_EQ(length("Transfer-Encoding: chunked\r\n").error_status, 411);
  EXPECT_EQ(length("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n").error_status, 411);
}

TEST(HttpParser, KnowsWhenTheConnectionStaysOpenAndWhenToContinue) {
  const auto head = [](const std::string& version, const std::string& headers) {
    return FeedWhole("GET / " + version + "\r\n" + headers + "\r\n").head;
  };
  EXPECT_TRUE(head("HTTP/1.1", "").KeepAlive());
  EXPECT_FALSE(head("HTTP/1.1", "Connection: close\r\n").KeepAlive());
  EXPECT_FALSE(head("HTTP/1.1", "Connection: Upgrade, CLOSE\r\n").KeepAlive());
  EXPECT_FALSE(head("HTTP/1.0", "").KeepAlive());
  EXPECT_TRUE(head("HTTP/1.0", "Connection: Keep-Alive\r\n").KeepAlive());
  EXPECT_TRUE(head("HTTP/1.1", "Expect: 100-Continue\r\n").ExpectsContinue());
  EXPECT_FALSE(head("HTTP/1.1", "").ExpectsContinue());
}

}  // namespace
}  // namespace sparktrace::admin
