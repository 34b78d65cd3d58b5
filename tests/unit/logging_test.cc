#include "common/logging.h"

#include <gtest/gtest.h>

namespace sparktrace {
namespace {

TEST(LogFields, TextQuotesOnlyWhenNeeded) {
  LogFields fields(LogFormat::kText);
  fields.Add("method", "/a.B/C").Add("error", "bad thing \"x\"").Add("n", std::int64_t{42}).Add("ms", 1.5);
  EXPECT_EQ(fields.str(), R"(method=/a.B/C error="bad thing \"x\"" n=42 ms=1.500)");
}

TEST(LogFields, JsonMembersAreEscaped) {
  LogFields fields(LogFormat::kJson);
  fields.Add("msg", std::string_view("line1\nline2\x01", 12)).Add("n", std::int64_t{7});
  EXPECT_EQ(fields.str(), R"("msg":"line1\nline2\u0001","n":7)");
}

TEST(ParseLogSettings, KnownValuesOnly) {
  EXPECT_EQ(*ParseLogLevel("debug"), spdlog::level::debug);
  EXPECT_EQ(*ParseLogLevel("error"), spdlog::level::err);
  EXPECT_FALSE(ParseLogLevel("verbose").ok());
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  EXPECT_FALSE(ParseLogFormat("yaml").ok());
}

}  // namespace
}  // namespace sparktrace
