#include "common/logging.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <sstream>
#include <string>
#include <vector>

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

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));  // throws if not JSON
  return lines;
}

TEST(ConfigureLogging, JsonLinesOfBothLoggersAreJsonObjects) {
  ConfigureLogging(spdlog::level::info, LogFormat::kJson);
  testing::internal::CaptureStderr();
  spdlog::info("upstream {} cannot be reached: \"{}\"", "127.0.0.1:1", "refused");
  AccessLogger()->info(LogFields(LogFormat::kJson).Add("method", "/a.B/C").Add("code", "OK").str());
  spdlog::default_logger()->flush();
  AccessLogger()->flush();
  const std::string captured = testing::internal::GetCapturedStderr();
  ConfigureLogging(spdlog::level::info, LogFormat::kText);

  const std::vector<nlohmann::json> lines = JsonLines(captured);
  ASSERT_EQ(lines.size(), 2U) << captured;
  EXPECT_EQ(lines[0]["logger"], "sparktrace");
  EXPECT_EQ(lines[0]["level"], "info");
  EXPECT_EQ(lines[0]["msg"], "upstream 127.0.0.1:1 cannot be reached: \"refused\"");
  EXPECT_EQ(lines[1]["logger"], "access");
  EXPECT_EQ(lines[1]["method"], "/a.B/C");
  EXPECT_EQ(lines[1]["code"], "OK");
  EXPECT_FALSE(lines[1].contains("msg"));
}

}  // namespace
}  // namespace sparktrace
