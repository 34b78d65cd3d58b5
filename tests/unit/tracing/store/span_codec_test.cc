#include "tracing/store/spool/span_codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace sparktrace::tracing::store {
namespace {

using namespace std::string_literals;

TraceId FilledTraceId(std::uint8_t byte) {
  TraceId id{};
  id.fill(byte);
  return id;
}

SpanId FilledSpanId(std::uint8_t byte) {
  SpanId id{};
  id.fill(byte);
  return id;
}

// One span that uses every field and every attribute value kind, with edge values.
Span EverythingSpan() {
  Span span;
  span.trace_id = FilledTraceId(0xff);
  span.span_id = {1, 2, 3, 4, 5, 6, 7, 8};
  span.parent_span_id = FilledSpanId(0x80);
  span.trace_state = "vendor=a,other=b";
  span.name = "ExecutePlan \xe2\x9c\x93";
  span.kind = SpanKind::kConsumer;
  span.start_time_unix_nano = 0;
  span.end_time_unix_nano = std::numeric_limits<std::uint64_t>::max();
  span.attributes = {
      {"empty.string", ""s},
      {"binary.string", "a\0b\xff\x80z"s},
      {"int.min", std::numeric_limits<std::int64_t>::min()},
      {"int.max", std::numeric_limits<std::int64_t>::max()},
      {"int.zero", std::int64_t{0}},
      {"int.minus.one", std::int64_t{-1}},
      {"double.negative.zero", -0.0},
      {"double.nan.payload", std::bit_cast<double>(std::uint64_t{0x7ff8'0000'dead'beefULL})},
      {"double.infinity", -std::numeric_limits<double>::infinity()},
      {"double.denormal", std::numeric_limits<double>::denorm_min()},
      {"double.max", std::numeric_limits<double>::max()},
      {"bool.true", true},
      {"bool.false", false},
      {"array.empty", std::vector<std::string>{}},
      {"array", std::vector<std::string>{"", "x", std::string(300, 'y')}},
      {"", "empty key"s},
  };
  span.events = {
      SpanEvent{.name = "exception", .time_unix_nano = 123, .attributes = {{"exception.message", "boom"s}}},
      SpanEvent{.name = "", .time_unix_nano = std::numeric_limits<std::uint64_t>::max(), .attributes = {}},
  };
  span.status_code = StatusCode::kError;
  span.status_message = std::string(200, 'm');
  return span;
}

// Compares attribute values bit for bit, so that NaN payloads and -0.0 count.
void ExpectSameValue(const AttributeValue& actual, const AttributeValue& expected, const std::string& key) {
  ASSERT_EQ(actual.index(), expected.index()) << key;
  if (const double* expected_double = std::get_if<double>(&expected)) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(std::get<double>(actual)),
              std::bit_cast<std::uint64_t>(*expected_double))
        << key;
  } else {
    EXPECT_TRUE(actual == expected) << key;
  }
}

void ExpectSameAttributes(const std::vector<Attribute>& actual, const std::vector<Attribute>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].key, expected[i].key);
    ExpectSameValue(actual[i].value, expected[i].value, expected[i].key);
  }
}

void ExpectSameSpan(const Span& actual, const Span& expected) {
  EXPECT_EQ(actual.trace_id, expected.trace_id);
  EXPECT_EQ(actual.span_id, expected.span_id);
  EXPECT_EQ(actual.parent_span_id, expected.parent_span_id);
  EXPECT_EQ(actual.trace_state, expected.trace_state);
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.kind, expected.kind);
  EXPECT_EQ(actual.start_time_unix_nano, expected.start_time_unix_nano);
  EXPECT_EQ(actual.end_time_unix_nano, expected.end_time_unix_nano);
  ExpectSameAttributes(actual.attributes, expected.attributes);
  ASSERT_EQ(actual.events.size(), expected.events.size());
  for (std::size_t i = 0; i < expected.events.size(); ++i) {
    EXPECT_EQ(actual.events[i].name, expected.events[i].name);
    EXPECT_EQ(actual.events[i].time_unix_nano, expected.events[i].time_unix_nano);
    ExpectSameAttributes(actual.events[i].attributes, expected.events[i].attributes);
  }
  EXPECT_EQ(actual.status_code, expected.status_code);
  EXPECT_EQ(actual.status_message, expected.status_message);
}

std::vector<Span> SampleBatch() {
  Span plain;
  plain.trace_id = FilledTraceId(0x11);
  plain.span_id = FilledSpanId(0x22);
  plain.name = "plain";
  plain.kind = SpanKind::kServer;
  plain.start_time_unix_nano = 1'714'564'800'000'000'000ULL;
  plain.end_time_unix_nano = 1'714'564'800'250'000'000ULL;
  plain.status_code = StatusCode::kOk;
  return {EverythingSpan(), plain, Span{}};
}

TEST(SpanCodecTest, RoundTripsEveryFieldAndAttributeKindExactly) {
  const std::vector<Span> spans = SampleBatch();
  Result<std::vector<Span>> decoded = DecodeSpans(EncodeSpans(spans));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  ASSERT_EQ(decoded->size(), spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectSameSpan((*decoded)[i], spans[i]);
  }
  // NaN != NaN, so check the bits survived rather than trusting ExpectSameValue's path alone.
  const double* nan = AttributeValueOf<double>((*decoded)[0].attributes, "double.nan.payload");
  ASSERT_NE(nan, nullptr);
  EXPECT_TRUE(std::isnan(*nan));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(*nan), 0x7ff8'0000'dead'beefULL);
  const double* negative_zero = AttributeValueOf<double>((*decoded)[0].attributes, "double.negative.zero");
  ASSERT_NE(negative_zero, nullptr);
  EXPECT_TRUE(std::signbit(*negative_zero));
}

TEST(SpanCodecTest, RoundTripsEverySpanKindAndStatus) {
  std::vector<Span> spans;
  for (int kind = 0; kind <= 5; ++kind) {
    for (int status = 0; status <= 2; ++status) {
      Span span;
      span.kind = static_cast<SpanKind>(kind);
      span.status_code = static_cast<StatusCode>(status);
      spans.push_back(span);
    }
  }
  Result<std::vector<Span>> decoded = DecodeSpans(EncodeSpans(spans));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  ASSERT_EQ(decoded->size(), spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ((*decoded)[i].kind, spans[i].kind);
    EXPECT_EQ((*decoded)[i].status_code, spans[i].status_code);
  }
}

TEST(SpanCodecTest, EmptyBatchRoundTrips) {
  const std::string bytes = EncodeSpans({});
  EXPECT_EQ(bytes, "\x01\x00"s);
  Result<std::vector<Span>> decoded = DecodeSpans(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_TRUE(decoded->empty());
}

// The layout is what spool files already on disk hold: changing it without a new version byte breaks
// them, and this test.
TEST(SpanCodecTest, LayoutOfVersionOneIsStable) {
  Span span;
  span.trace_id = FilledTraceId(0xaa);
  span.span_id = FilledSpanId(0xbb);
  span.name = "n";
  span.kind = SpanKind::kClient;
  span.start_time_unix_nano = 0x0102030405060708ULL;
  span.end_time_unix_nano = 0x1112131415161718ULL;
  span.attributes = {{"i", std::int64_t{-2}}, {"b", true}};
  span.status_code = StatusCode::kError;
  span.status_message = "e";
  const std::string expected = "\x01\x01"s + std::string(16, '\xaa') + std::string(8, '\xbb') +
                               std::string(8, '\0') + "\x00"s + "\x01n"s + "\x03"s +
                               "\x08\x07\x06\x05\x04\x03\x02\x01"s + "\x18\x17\x16\x15\x14\x13\x12\x11"s +
                               "\x02"s + "\x01i\x02\x03"s +
                               "\x01"
                               "b\x04\x01"s +
                               "\x00"s + "\x02"s +
                               "\x01"
                               "e"s;
  const Span spans[] = {span};
  EXPECT_EQ(EncodeSpans(spans), expected);
}

TEST(SpanCodecTest, EveryTruncationFailsCleanly) {
  const std::string bytes = EncodeSpans(SampleBatch());
  ASSERT_GT(bytes.size(), 500U);
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    Result<std::vector<Span>> decoded = DecodeSpans(std::string_view(bytes).substr(0, size));
    ASSERT_FALSE(decoded.ok()) << "a prefix of " << size << " bytes decoded";
    EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument) << size;
  }
}

TEST(SpanCodecTest, TrailingBytesFail) {
  Result<std::vector<Span>> decoded = DecodeSpans(EncodeSpans(SampleBatch()) + "x");
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message.find("1 bytes after the last span"), std::string::npos)
      << decoded.error().message;
}

TEST(SpanCodecTest, UnknownVersionFails) {
  std::string bytes = EncodeSpans(SampleBatch());
  bytes[0] = '\x02';
  Result<std::vector<Span>> decoded = DecodeSpans(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message.find("unsupported version 2"), std::string::npos)
      << decoded.error().message;
}

TEST(SpanCodecTest, ForgedCountsAndLengthsAreRefusedBeforeAllocating) {
  struct Case {
    const char* name;
    std::string bytes;
    const char* message;
  };
  const std::string one_empty_span_prefix =
      "\x01\x01"s + std::string(32, '\0') + "\x00\x00\x00"s + std::string(16, '\0');
  const Case cases[] = {
      {"span count 2^63", "\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"s, "cannot fit"},
      {"span count one more than fits", "\x01\x02"s + std::string(60, '\0'), "cannot fit"},
      {"varint of 11 bytes", "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"s, "varint"},
      {"varint past 64 bits", "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"s, "varint overflows"},
      {"trace_state of 2^40 bytes",
       "\x01\x01"s + std::string(32, '\0') + "\x80\x80\x80\x80\x80\x20"s + std::string(30, '\0'),
       "string of"},
      {"attribute count 2^62",
       one_empty_span_prefix + "\x80\x80\x80\x80\x80\x80\x80\x80\x40"s + std::string(3, '\0'), "cannot fit"},
      {"span kind 6", "\x01\x01"s + std::string(32, '\0') + "\x00\x00\x06"s + std::string(20, '\0'),
       "span kind 6"},
      {"attribute tag 9", one_empty_span_prefix + "\x01\x00\x09"s + std::string(8, '\0'), "tag 9"},
      {"bool 2", one_empty_span_prefix + "\x01\x00\x04\x02"s + std::string(8, '\0'), "bool value 2"},
      {"string array count too large", one_empty_span_prefix + "\x01\x00\x05\x7f"s + std::string(8, '\0'),
       "cannot fit"},
      {"status 3", one_empty_span_prefix + "\x00\x00\x03\x00"s, "status code 3"},
  };
  for (const Case& test : cases) {
    Result<std::vector<Span>> decoded = DecodeSpans(test.bytes);
    ASSERT_FALSE(decoded.ok()) << test.name;
    EXPECT_EQ(decoded.error().code, ErrorCode::kInvalidArgument) << test.name;
    EXPECT_NE(decoded.error().message.find(test.message), std::string::npos)
        << test.name << ": " << decoded.error().message;
  }
}

// Random damage never crashes or hangs (run under ASan/UBSan to make this bite); whatever still
// decodes must re-encode to the same bytes, so it was read exactly as written.
TEST(SpanCodecTest, RandomByteFlipsNeverCrash) {
  const std::string original = EncodeSpans(SampleBatch());
  std::mt19937 random(20240501);
  std::uniform_int_distribution<std::size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<int> byte_value(0, 255);
  std::uniform_int_distribution<int> flips(1, 4);
  int failed = 0;
  int decoded_ok = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string damaged = original;
    for (int i = flips(random); i > 0; --i) damaged[position(random)] = static_cast<char>(byte_value(random));
    Result<std::vector<Span>> decoded = DecodeSpans(damaged);
    if (!decoded.ok()) {
      ++failed;
      continue;
    }
    ++decoded_ok;
    // Varints may be decoded from a non-canonical form; those re-encode shorter, everything else equal.
    const std::string again = EncodeSpans(*decoded);
    if (again.size() == damaged.size()) {
      EXPECT_EQ(again, damaged) << "round " << round;
    }
  }
  // Both outcomes happen: flips in string bytes decode, flips in structure do not.
  EXPECT_GT(failed, 100);
  EXPECT_GT(decoded_ok, 100);
}

TEST(SpanCodecTest, RandomBytesNeverCrash) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte_value(0, 255);
  std::uniform_int_distribution<std::size_t> length(0, 200);
  for (int round = 0; round < 5000; ++round) {
    std::string bytes(length(random), '\0');
    for (char& byte : bytes) byte = static_cast<char>(byte_value(random));
    if (!bytes.empty()) bytes[0] = '\x01';  // get past the version check
    Result<std::vector<Span>> decoded = DecodeSpans(bytes);
    if (decoded.ok()) {
      EXPECT_LE(decoded->size(), bytes.size() / 55);
    }
  }
}

}  // namespace
}  // namespace sparktrace::tracing::store
