#include "proxy/grpc_wire.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// --- grpc-timeout: 1 to 8 ASCII digits, then one unit (H M S m u n) -----------------------------

TEST(GrpcWireTest, TimeoutEveryUnitOneDigit) {
  EXPECT_EQ(ParseGrpcTimeout("1H"), std::optional<nanoseconds>(hours(1)));
  EXPECT_EQ(ParseGrpcTimeout("1M"), std::optional<nanoseconds>(minutes(1)));
  EXPECT_EQ(ParseGrpcTimeout("1S"), std::optional<nanoseconds>(seconds(1)));
  EXPECT_EQ(ParseGrpcTimeout("1m"), std::optional<nanoseconds>(milliseconds(1)));
  EXPECT_EQ(ParseGrpcTimeout("1u"), std::optional<nanoseconds>(microseconds(1)));
  EXPECT_EQ(ParseGrpcTimeout("1n"), std::optional<nanoseconds>(nanoseconds(1)));
}

TEST(GrpcWireTest, TimeoutZeroAndLeadingZeros) {
  EXPECT_EQ(ParseGrpcTimeout("0n"), std::optional<nanoseconds>(nanoseconds(0)));
  EXPECT_EQ(ParseGrpcTimeout("0S"), std::optional<nanoseconds>(nanoseconds(0)));
  EXPECT_EQ(ParseGrpcTimeout("00000100m"), std::optional<nanoseconds>(milliseconds(100)));
}

TEST(GrpcWireTest, TimeoutEveryUnitEightDigits) {
  // Units whose eight-digit maximum fits in int64 nanoseconds (292 years): exact values.
  EXPECT_EQ(ParseGrpcTimeout("99999999M"), std::optional<nanoseconds>(minutes(99'999'999)));
  EXPECT_EQ(ParseGrpcTimeout("99999999S"), std::optional<nanoseconds>(seconds(99'999'999)));
  EXPECT_EQ(ParseGrpcTimeout("99999999m"), std::optional<nanoseconds>(milliseconds(99'999'999)));
  EXPECT_EQ(ParseGrpcTimeout("99999999u"), std::optional<nanoseconds>(microseconds(99'999'999)));
  EXPECT_EQ(ParseGrpcTimeout("99999999n"), std::optional<nanoseconds>(nanoseconds(99'999'999)));
  EXPECT_EQ(ParseGrpcTimeout("1234567H"), std::optional<nanoseconds>(hours(1'234'567)));
  // Eight digits of hours: see TimeoutHoursBeyondInt64NanosecondsStayLong.
  EXPECT_EQ(ParseGrpcTimeout("2562047H"), std::optional<nanoseconds>(hours(2'562'047)));  // the largest that fits
}

TEST(GrpcWireTest, TimeoutHoursBeyondInt64NanosecondsStayLong) {
  // Eight digits of hours (up to ~11,400 years) do not fit in int64 nanoseconds (~292 years). A
  // legal header must not come out as a short, zero or negative deadline (the proxy would fail
  // the call with DEADLINE_EXCEEDED at once); the longest representable one (clamping) is fine.
  for (const std::string_view value : {"2562048H", "12345678H", "99999999H"}) {
    SCOPED_TRACE(value);
    const auto timeout = ParseGrpcTimeout(value);
    ASSERT_TRUE(timeout.has_value());
    EXPECT_GE(*timeout, hours(2'562'047));
  }
}

TEST(GrpcWireTest, TimeoutNineDigitsRefused) {
  EXPECT_EQ(ParseGrpcTimeout("123456789S"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("000000001n"), std::nullopt);
}

TEST(GrpcWireTest, TimeoutMalformedRefused) {
  EXPECT_EQ(ParseGrpcTimeout(""), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("S"), std::nullopt);     // no digits
  EXPECT_EQ(ParseGrpcTimeout("m"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("100"), std::nullopt);   // no unit
  EXPECT_EQ(ParseGrpcTimeout("1"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("10s"), std::nullopt);   // unknown unit (units are case-sensitive)
  EXPECT_EQ(ParseGrpcTimeout("10h"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("10U"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("10N"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("10x"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("10ms"), std::nullopt);  // two-letter unit
  EXPECT_EQ(ParseGrpcTimeout("1.5S"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("0x1S"), std::nullopt);
}

TEST(GrpcWireTest, TimeoutSignsRefused) {
  // The grammar is digits only: a sign is malformed, and a negative timeout must never come out.
  EXPECT_EQ(ParseGrpcTimeout("+1S"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("-1S"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("-100m"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("-0n"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("-1234567H"), std::nullopt);
}

TEST(GrpcWireTest, TimeoutSpacesRefused) {
  EXPECT_EQ(ParseGrpcTimeout(" 1S"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("1 S"), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("1S "), std::nullopt);
  EXPECT_EQ(ParseGrpcTimeout("\t1S"), std::nullopt);
}

// --- grpc-status -------------------------------------------------------------------------------

TEST(GrpcWireTest, StatusInRange) {
  EXPECT_EQ(ParseGrpcStatus("0"), std::optional<StatusCode>(StatusCode::kOk));
  EXPECT_EQ(ParseGrpcStatus("1"), std::optional<StatusCode>(StatusCode::kCancelled));
  EXPECT_EQ(ParseGrpcStatus("14"), std::optional<StatusCode>(StatusCode::kUnavailable));
  EXPECT_EQ(ParseGrpcStatus("16"), std::optional<StatusCode>(StatusCode::kUnauthenticated));
  // Codes past 16 are legal on the wire (clients map them to UNKNOWN); kept as they are.
  const auto ninety_nine = ParseGrpcStatus("99");
  ASSERT_TRUE(ninety_nine.has_value());
  EXPECT_EQ(static_cast<int>(*ninety_nine), 99);
}

TEST(GrpcWireTest, StatusOutOfRangeOrMalformed) {
  EXPECT_EQ(ParseGrpcStatus("100"), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus("256"), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus("-1"), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus(""), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus("1a"), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus("a1"), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus(" 1"), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus("1 "), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus("+1"), std::nullopt);
  EXPECT_EQ(ParseGrpcStatus("99999999999999999999"), std::nullopt);  // overflows int
}

// --- RST_STREAM error codes (RFC 9113 §7), by number so the test does not share nghttp2's names --

TEST(GrpcWireTest, ResetCodes) {
  EXPECT_EQ(StatusForResetCode(0x0), StatusCode::kInternal);  // NO_ERROR before any grpc-status
  EXPECT_EQ(StatusForResetCode(0x1), StatusCode::kInternal);  // PROTOCOL_ERROR
  EXPECT_EQ(StatusForResetCode(0x2), StatusCode::kInternal);  // INTERNAL_ERROR
  EXPECT_EQ(StatusForResetCode(0x3), StatusCode::kInternal);  // FLOW_CONTROL_ERROR
  EXPECT_EQ(StatusForResetCode(0x4), StatusCode::kInternal);  // SETTINGS_TIMEOUT
  EXPECT_EQ(StatusForResetCode(0x5), StatusCode::kInternal);  // STREAM_CLOSED
  EXPECT_EQ(StatusForResetCode(0x6), StatusCode::kInternal);  // FRAME_SIZE_ERROR
  EXPECT_EQ(StatusForResetCode(0x7), StatusCode::kUnavailable);  // REFUSED_STREAM
  EXPECT_EQ(StatusForResetCode(0x8), StatusCode::kCancelled);    // CANCEL
  EXPECT_EQ(StatusForResetCode(0x9), StatusCode::kInternal);     // COMPRESSION_ERROR
  EXPECT_EQ(StatusForResetCode(0xa), StatusCode::kInternal);     // CONNECT_ERROR
  EXPECT_EQ(StatusForResetCode(0xb), StatusCode::kResourceExhausted);  // ENHANCE_YOUR_CALM
  EXPECT_EQ(StatusForResetCode(0xc), StatusCode::kPermissionDenied);   // INADEQUATE_SECURITY
  EXPECT_EQ(StatusForResetCode(0xd), StatusCode::kInternal);           // HTTP_1_1_REQUIRED
  EXPECT_EQ(StatusForResetCode(0xe), StatusCode::kInternal);           // unknown
  EXPECT_EQ(StatusForResetCode(0xffffffffU), StatusCode::kInternal);
}

// --- :status other than 200 (gRPC's doc/http-grpc-status-mapping.md) ---------------------------

TEST(GrpcWireTest, HttpStatuses) {
  EXPECT_EQ(StatusForHttpStatus(400), StatusCode::kInternal);
  EXPECT_EQ(StatusForHttpStatus(401), StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusForHttpStatus(403), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusForHttpStatus(404), StatusCode::kUnimplemented);
  EXPECT_EQ(StatusForHttpStatus(429), StatusCode::kUnavailable);
  EXPECT_EQ(StatusForHttpStatus(502), StatusCode::kUnavailable);
  EXPECT_EQ(StatusForHttpStatus(503), StatusCode::kUnavailable);
  EXPECT_EQ(StatusForHttpStatus(504), StatusCode::kUnavailable);
  // Everything else is UNKNOWN, including 500 and the codes around the mapped ones.
  EXPECT_EQ(StatusForHttpStatus(500), StatusCode::kUnknown);
  EXPECT_EQ(StatusForHttpStatus(501), StatusCode::kUnknown);
  EXPECT_EQ(StatusForHttpStatus(505), StatusCode::kUnknown);
  EXPECT_EQ(StatusForHttpStatus(402), StatusCode::kUnknown);
  EXPECT_EQ(StatusForHttpStatus(302), StatusCode::kUnknown);
  EXPECT_EQ(StatusForHttpStatus(0), StatusCode::kUnknown);
  EXPECT_EQ(StatusForHttpStatus(-1), StatusCode::kUnknown);
  // The function is for responses that are not 200; asked anyway, it does not claim success.
  EXPECT_NE(StatusForHttpStatus(200), StatusCode::kOk);
}

// --- grpc-message percent-encoding -------------------------------------------------------------

TEST(GrpcWireTest, PercentEncodeKeepsPrintableAscii) {
  std::string printable;
  for (char c = 0x20; c <= 0x7e; ++c) {
    if (c != '%') printable += c;
  }
  EXPECT_EQ(PercentEncodeGrpcMessage(printable), printable);
  EXPECT_EQ(PercentEncodeGrpcMessage(""), "");
}

TEST(GrpcWireTest, PercentEncodeEscapes) {
  EXPECT_EQ(PercentEncodeGrpcMessage("100%"), "100%25");
  EXPECT_EQ(PercentEncodeGrpcMessage("a\nb"), "a%0Ab");
  EXPECT_EQ(PercentEncodeGrpcMessage("\r\t"), "%0D%09");
  EXPECT_EQ(PercentEncodeGrpcMessage(std::string_view("\0", 1)), "%00");
  EXPECT_EQ(PercentEncodeGrpcMessage("\x1f\x7f"), "%1F%7F");
  EXPECT_EQ(PercentEncodeGrpcMessage("\xff"), "%FF");
  // Non-ASCII UTF-8 goes byte by byte, upper-case hex: "é" is C3 A9, "€" E2 82 AC.
  EXPECT_EQ(PercentEncodeGrpcMessage("caf\xc3\xa9 \xe2\x82\xac"), "caf%C3%A9 %E2%82%AC");
}

TEST(GrpcWireTest, PercentRoundTrip) {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  const std::string cases[] = {
      "",
      "plain message",
      "100% done, 50%% left, %41 is not A",
      "line one\nline two\r\n\ttabbed",
      "unicode: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      std::string("nul\0inside", 10),
      "%",
      "%%%",
      every_byte,
  };
  for (const std::string& message : cases) {
    SCOPED_TRACE(testing::Message() << "message of " << message.size() << " bytes");
    const std::string encoded = PercentEncodeGrpcMessage(message);
    for (const char c : encoded) {
      const auto byte = static_cast<unsigned char>(c);
      EXPECT_TRUE(byte >= 0x20 && byte <= 0x7e) << "unprintable byte " << int{byte} << " in " << encoded;
    }
    EXPECT_EQ(PercentDecodeGrpcMessage(encoded), message);
  }
}

TEST(GrpcWireTest, PercentDecodeValid) {
  EXPECT_EQ(PercentDecodeGrpcMessage("a%20b"), "a b");
  EXPECT_EQ(PercentDecodeGrpcMessage("%25"), "%");
  EXPECT_EQ(PercentDecodeGrpcMessage("%c3%A9"), "\xc3\xa9");  // either case of hex digits
  EXPECT_EQ(PercentDecodeGrpcMessage("%41%42%43"), "ABC");
  EXPECT_EQ(PercentDecodeGrpcMessage("end%41"), "endA");       // a sequence ending the value
  EXPECT_EQ(PercentDecodeGrpcMessage("%00"), std::string("\0", 1));
  EXPECT_EQ(PercentDecodeGrpcMessage("%2541"), "%41");         // decoded once, not twice
}

TEST(GrpcWireTest, PercentDecodeMalformedKeptAsIs) {
  EXPECT_EQ(PercentDecodeGrpcMessage("%"), "%");
  EXPECT_EQ(PercentDecodeGrpcMessage("%4"), "%4");
  EXPECT_EQ(PercentDecodeGrpcMessage("%zz"), "%zz");
  EXPECT_EQ(PercentDecodeGrpcMessage("%4z"), "%4z");
  EXPECT_EQ(PercentDecodeGrpcMessage("%z4"), "%z4");
  EXPECT_EQ(PercentDecodeGrpcMessage("abc%4"), "abc%4");
  EXPECT_EQ(PercentDecodeGrpcMessage("abc%"), "abc%");
  EXPECT_EQ(PercentDecodeGrpcMessage("%%41"), "%A");  // the stray '%' is kept, the next one decodes
  EXPECT_EQ(PercentDecodeGrpcMessage("%G0 ok"), "%G0 ok");
  EXPECT_EQ(PercentDecodeGrpcMessage("50% off %41"), "50% off A");
}

}  // namespace
}  // namespace sparktrace::proxy
