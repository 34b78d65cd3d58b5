// The admin server's pure HTTP helpers: token checks (admin/ui_access.h), conditional requests and
// compression (admin/http_caching.h) and URL coding (common/url_codec.h).

#include <gtest/gtest.h>
#include <zlib.h>

#include "admin/http_caching.h"
#include "admin/ui_access.h"
#include "common/url_codec.h"

namespace sparktrace::admin {
namespace {

TEST(UiAccess, ComparesTokensExactly) {
  EXPECT_TRUE(ConstantTimeEquals("s3cret", "s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("s3cret", "s3creT"));
  EXPECT_FALSE(ConstantTimeEquals("s3cret", "s3cret "));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
}

TEST(UiAccess, AcceptsOnlyTokensThatTravelUnchanged) {
  EXPECT_TRUE(ValidateAdminToken("0123456789abcdef-._~ABC").ok());
  EXPECT_FALSE(ValidateAdminToken("short").ok());
  const auto spaced = ValidateAdminToken("has a space in it, long enough");
  ASSERT_FALSE(spaced.ok());
  EXPECT_EQ(spaced.error().message.find("space"), std::string::npos);  // the value is never echoed
  EXPECT_FALSE(ValidateAdminToken("semicolon;breaks-the-cookie").ok());
}

TEST(UiAccess, ReadsBearerTokensAndCookies) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer   abc  "), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), std::nullopt);
  EXPECT_EQ(BearerToken("Bearer "), std::nullopt);
  EXPECT_EQ(CookieValue("a=1; sparktrace_token=t0k; b=2", "sparktrace_token"), "t0k");
  EXPECT_EQ(CookieValue("xsparktrace_token=t0k", "sparktrace_token"), std::nullopt);
  EXPECT_EQ(CookieValue("", "sparktrace_token"), std::nullopt);
}

TEST(UiAccess, TakesTheTokenOutOfTheQuery) {
  const TokenLogin login = SplitTokenParameter("map_index=2&token=a%2Bb%3D&find=x");
  ASSERT_TRUE(login.token.has_value());
  EXPECT_EQ(*login.token, "a+b=");
  EXPECT_EQ(login.rest_of_query, "map_index=2&find=x");
  EXPECT_FALSE(SplitTokenParameter("find=token").token.has_value());
}

TEST(HttpCaching, MatchesEntityTags) {
  const std::string tag = EntityTag("body");
  EXPECT_NE(tag, EntityTag("body2"));
  EXPECT_EQ(tag, EntityTag("body"));
  EXPECT_TRUE(MatchesIfNoneMatch(tag, tag));
  EXPECT_TRUE(MatchesIfNoneMatch("\"other\", W/" + tag, tag));
  EXPECT_TRUE(MatchesIfNoneMatch("*", tag));
  EXPECT_FALSE(MatchesIfNoneMatch("\"other\"", tag));
}

TEST(HttpCaching, NegotiatesGzip) {
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));
  EXPECT_TRUE(AcceptsGzip("br;q=1.0, GZIP;q=0.5"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("deflate"));
  EXPECT_FALSE(WorthCompressing("application/json", 100));
  EXPECT_TRUE(WorthCompressing("application/json; charset=utf-8", 4096));
  EXPECT_FALSE(WorthCompressing("image/png", 4096));
}

TEST(HttpCaching, GzipRoundTrips) {
  const std::string body(10000, 'a');
  const auto compressed = Gzip(body);
  ASSERT_TRUE(compressed.has_value());
  z_stream stream{};
  ASSERT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(body.size() + 16, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed->data()));
  stream.avail_in = static_cast<uInt>(compressed->size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - stream.avail_out);
  inflateEnd(&stream);
  EXPECT_EQ(out, body);
}

TEST(UrlCodec, EncodesPathSegmentsAndDecodesQueries) {
  EXPECT_EQ(EncodePathSegment("scheduled__2026-11-25T00:00:00+00:00"),
            "scheduled__2026-11-25T00%3A00%3A00%2B00%3A00");
  EXPECT_EQ(EncodePathSegment("a/b c%"), "a%2Fb%20c%25");
  EXPECT_EQ(PercentDecode("a%2Fb%20c%25"), "a/b c%");
  EXPECT_EQ(PercentDecode("bad%zz%"), "bad%zz%");
  const auto query = ParseQuery("dag=etl&q=a+b&empty=&flag");
  EXPECT_EQ(query.at("dag"), "etl");
  EXPECT_EQ(query.at("q"), "a b");
  EXPECT_EQ(query.at("empty"), "");
  EXPECT_EQ(query.at("flag"), "");
}

}  // namespace
}  // namespace sparktrace::admin
