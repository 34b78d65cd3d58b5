#include "tracing/otlp/headers.h"

#include <gtest/gtest.h>

namespace sparktrace::tracing::otlp {
namespace {

TEST(OtlpHeaders, ParsesFlagValues) {
  auto header = ParseOtlpHeader(" X-Api-Key =abc=def ");
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->first, "x-api-key");
  EXPECT_EQ(header->second, "abc=def ");  // the value is taken as given
  EXPECT_FALSE(ParseOtlpHeader("novalue").ok());
  EXPECT_FALSE(ParseOtlpHeader("=v").ok());
}

TEST(OtlpHeaders, ParsesOtelListsWithPercentDecoding) {
  auto list = ParseOtelKeyValueList("a=1, team = data%20eng ,url=x%3Dy%2Cz,plus=a+b");
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ((*list)[0], std::make_pair(std::string("a"), std::string("1")));
  EXPECT_EQ((*list)[1], std::make_pair(std::string("team"), std::string("data eng")));
  EXPECT_EQ((*list)[2], std::make_pair(std::string("url"), std::string("x=y,z")));
  EXPECT_EQ((*list)[3], std::make_pair(std::string("plus"), std::string("a+b")));
  EXPECT_TRUE(ParseOtelKeyValueList("").value().empty());
  EXPECT_TRUE(ParseOtelKeyValueList("   ").value().empty());
  auto empty_value = ParseOtelKeyValueList("k=");
  ASSERT_TRUE(empty_value.ok());
  EXPECT_EQ((*empty_value)[0].second, "");
}

TEST(OtlpHeaders, MalformedListsFailWhole) {
  for (const char* text : {"a=1,b", "a=1,,b=2", "=v", "a=%zz", "a=%2", "a=1,"}) {
    EXPECT_FALSE(ParseOtelKeyValueList(text).ok()) << text;
  }
}

TEST(OtlpHeaders, ValidationNamesTheKeyNeverTheValue) {
  EXPECT_TRUE(ValidateOtlpHeaders({{"authorization", "Bearer abc"}, {"x-tenant_id.v2", "7"}}).ok());
  EXPECT_TRUE(ValidateOtlpHeaders({{"trace-bin", std::string("\x00\x01", 2)}}).ok());
  auto bad_value = ValidateOtlpHeaders({{"authorization", "secret\r\nx: y"}});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.error().message.find("authorization"), std::string::npos);
  EXPECT_EQ(bad_value.error().message.find("secret"), std::string::npos);
  for (const char* key :
       {"", "Upper", "sp ace", "content-type", "te", "grpc-timeout", ":path", "user-agent"}) {
    EXPECT_FALSE(ValidateOtlpHeaders({{key, "v"}}).ok()) << key;
  }
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
