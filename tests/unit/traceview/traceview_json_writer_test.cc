// JsonWriter (common/json_writer.h) with span attributes (traceview/attribute_writer.h) and the store's fast
// attribute reader (tracing/store/span_rows/attribute_json_reader.h): what they write parses back to the same
// values, user text is escaped however hostile, and the reader agrees with the nlohmann-based
// AttributesFromJson.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "traceview/attribute_writer.h"
#include "tracing/attribute_json.h"
#include "tracing/store/span_rows/attribute_json_reader.h"

namespace sparktrace::traceview {
namespace {

TEST(JsonWriter, EscapesUserTextSoThatItParsesBackUnchanged) {
  const std::string hostile = "quote\" backslash\\ newline\n tab\t nul" + std::string(1, '\0') +
                              " bell\x07 </script><img src=x onerror=alert(1)> zürich 東京";
  JsonWriter out;
  out.BeginObject().Key("text").String(hostile).Key(hostile).Int(1).EndObject();
  const std::string text = out.Take();
  EXPECT_EQ(text.find('\n'), std::string::npos);  // control characters never appear raw
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  const auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["text"], hostile);
  EXPECT_EQ(parsed[hostile], 1);
}

// The escape check reads eight bytes at a time: a byte that needs escaping is found at every offset
// of a word and of the tail, and bytes just outside each class (0x1f/0x20, 0x7f/0x80, '"' and '\'
// beside their neighbours) are told apart.
TEST(JsonWriter, FindsWhatNeedsEscapingAtEveryOffset) {
  for (std::size_t length = 1; length <= 19; ++length) {
    for (std::size_t offset = 0; offset < length; ++offset) {
      for (const char special : {'"', '\\', '\n', '\x1f', '\x01'}) {
        std::string text(length, 'a');
        text[offset] = special;
        JsonWriter out;
        out.String(text);
        const std::string written = out.Take();
        EXPECT_EQ(written.size(), text.size() + 2 + (special == '\x1f' || special == '\x01' ? 5 : 1))
            << "length " << length << " offset " << offset << " byte " << int{special};
        EXPECT_EQ(nlohmann::json::parse(written).get<std::string>(), text);
      }
      for (const char plain : {' ', '!', '#', '[', ']', '\x7f', '~'}) {
        std::string text(length, 'a');
        text[offset] = plain;
        JsonWriter out;
        out.String(text);
        EXPECT_EQ(out.Take(), "\"" + text + "\"") << "length " << length << " offset " << offset;
      }
      std::string accented(length, 'a');
      accented[offset] = '\xc3';  // a lone lead byte: replaced, so it was seen
      JsonWriter out;
      out.String(accented);
      EXPECT_NE(out.Take().find("\xef\xbf\xbd"), std::string::npos) << "length " << length << " offset " << offset;
    }
  }
}

TEST(JsonWriter, WritesEmptyStringsIncludingANullView) {
  JsonWriter out;
  out.BeginArray().String("").String(std::string_view{}).String(std::string()).EndArray();
  EXPECT_EQ(out.Take(), R"(["","",""])");
}

TEST(JsonWriter, ReplacesInvalidUtf8) {
  JsonWriter out;
  out.String("ok \xff\xfe bad \xc3 cut \xed\xa0\x80 surrogate");
  const auto parsed = nlohmann::json::parse(out.Take());  // throws on invalid UTF-8
  EXPECT_EQ(
      parsed.get<std::string>(),
      "ok \xef\xbf\xbd\xef\xbf\xbd bad \xef\xbf\xbd cut \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd surrogate");
}

TEST(JsonWriter, PlacesCommasAndWritesEveryKind) {
  JsonWriter out;
  out.BeginObject();
  out.Key("a").BeginArray().Int(1).Double(2.5).Double(3.0).Bool(true).Null().EndArray();
  out.Key("b").BeginObject().EndObject();
  out.Key("nan").Double(std::numeric_limits<double>::quiet_NaN());
  out.Key("raw").Raw("{\"x\":[1,2]}");
  out.Key("attributes");
  WriteAttributes(
      out, {{"s", std::string("v")}, {"i", std::int64_t{-7}}, {"list", std::vector<std::string>{"a", "b"}}});
  out.EndObject();
  EXPECT_EQ(
      out.Take(),
      R"({"a":[1,2.5,3.0,true,null],"b":{},"nan":null,"raw":{"x":[1,2]},"attributes":{"s":"v","i":-7,"list":["a","b"]}})");
}

TEST(AttributeJsonReader, AgreesWithTheTreeReaderOnEveryKind) {
  const std::vector<tracing::Attribute> written = {
      {"text", std::string("zürich \"quoted\"")},
      {"empty", std::string()},
      {"int.max", std::numeric_limits<std::int64_t>::max()},
      {"int.min", std::numeric_limits<std::int64_t>::min()},
      {"double.whole", 3.0},
      {"double.tiny", -2.5e-300},
      {"flag", false},
      {"list", std::vector<std::string>{"x", "", "y"}},
  };
  const std::string text = tracing::DumpJson(tracing::AttributesToJson(written));
  std::vector<tracing::Attribute> fast;
  ASSERT_TRUE(tracing::store::ReadAttributesJson(text, fast));
  const std::vector<tracing::Attribute> slow =
      tracing::AttributesFromJson(nlohmann::ordered_json::parse(text));
  ASSERT_EQ(fast.size(), slow.size());
  for (std::size_t i = 0; i < fast.size(); ++i) {
    EXPECT_EQ(fast[i].key, slow[i].key);
    EXPECT_EQ(fast[i].value, slow[i].value) << fast[i].key;
    EXPECT_EQ(fast[i].value, written[i].value) << fast[i].key;
  }
}

TEST(AttributeJsonReader, KeepsForeignShapesAsTextAndNullAsNaN) {
  std::vector<tracing::Attribute> read;
  ASSERT_TRUE(tracing::store::ReadAttributesJson(R"({"obj":{"a":1},"mixed":[1,"a"],"none":null})", read));
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(std::get<std::string>(read[0].value), R"({"a":1})");
  EXPECT_EQ(std::get<std::string>(read[1].value), R"([1,"a"])");
  EXPECT_TRUE(std::isnan(std::get<double>(read[2].value)));
  std::vector<tracing::Attribute> untouched;
  EXPECT_FALSE(tracing::store::ReadAttributesJson("[1,2]", untouched));
  EXPECT_FALSE(tracing::store::ReadAttributesJson("{broken", untouched));
  EXPECT_TRUE(untouched.empty());
}

TEST(AttributeJsonReader, ReadsEvents) {
  std::vector<tracing::SpanEvent> events;
  ASSERT_TRUE(tracing::store::ReadEventsJson(
      R"([{"name":"first_batch","time_unix_nano":1764050400000000001,"attributes":{"rows":5}}])", events));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].name, "first_batch");
  EXPECT_EQ(events[0].time_unix_nano, 1764050400000000001ULL);
  EXPECT_EQ(std::get<std::int64_t>(events[0].attributes.at(0).value), 5);
  EXPECT_FALSE(tracing::store::ReadEventsJson(R"([1])", events));
}

}  // namespace
}  // namespace sparktrace::traceview
