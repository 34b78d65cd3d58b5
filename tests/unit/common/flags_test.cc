#include "common/flags.h"

#include <array>
#include <map>

#include <gtest/gtest.h>

namespace sparktrace {
namespace {

const std::array<FlagSpec, 4> kSpecs = {{
    {"listen", "ADDR", "0.0.0.0:15002", "where to listen"},
    {"upstream", "ADDR", "", "where to forward", /*required=*/true},
    {"verbose", "", "", "more output"},
    {"event-log-dir", "DIR", "", "event logs", false, /*repeatable=*/true},
}};

EnvironmentLookup FakeEnvironment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

Result<ParsedFlags> Parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  return ParseFlags(kSpecs, args, FakeEnvironment(std::move(env)));
}

TEST(ParseFlags, SpaceAndEqualsFormsAndDefaults) {
  auto flags = Parse({"--upstream", "spark:15002", "--listen=127.0.0.1:0"});
  ASSERT_TRUE(flags.ok()) << flags.error().message;
  EXPECT_EQ(flags->Get("upstream"), "spark:15002");
  EXPECT_EQ(flags->Get("listen"), "127.0.0.1:0");
  EXPECT_FALSE(flags->GetBool("verbose"));
  EXPECT_FALSE(flags->IsSet("verbose"));
}

TEST(ParseFlags, DefaultWhenUnset) {
  auto flags = Parse({"--upstream=a:1"});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->Get("listen"), "0.0.0.0:15002");
  EXPECT_FALSE(flags->IsSet("listen"));
}

TEST(ParseFlags, BooleanSwitchForms) {
  EXPECT_TRUE(Parse({"--upstream=a:1", "--verbose"})->GetBool("verbose"));
  EXPECT_FALSE(Parse({"--upstream=a:1", "--verbose=false"})->GetBool("verbose"));
  auto bad = Parse({"--upstream=a:1", "--verbose=maybe"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--verbose"), std::string::npos);
}

TEST(ParseFlags, ErrorsNameTheFlag) {
  auto missing = Parse({});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("--upstream is required"), std::string::npos);
  EXPECT_NE(missing.error().message.find("SPARKTRACE_UPSTREAM"), std::string::npos);

  auto unknown = Parse({"--upstream=a:1", "--listne=x"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("--listne"), std::string::npos);

  auto no_value = Parse({"--upstream"});
  ASSERT_FALSE(no_value.ok());
  EXPECT_NE(no_value.error().message.find("--upstream needs a value"), std::string::npos);

  auto single_dash = Parse({"-upstream", "a:1"});
  ASSERT_FALSE(single_dash.ok());
  EXPECT_NE(single_dash.error().message.find("-upstream"), std::string::npos);
}

TEST(ParseFlags, EnvironmentIsAFallbackAndCommandLineWins) {
  auto from_env = Parse({}, {{"SPARKTRACE_UPSTREAM", "env:1"}, {"SPARKTRACE_VERBOSE", "1"}});
  ASSERT_TRUE(from_env.ok()) << from_env.error().message;
  EXPECT_EQ(from_env->Get("upstream"), "env:1");
  EXPECT_TRUE(from_env->GetBool("verbose"));
  EXPECT_TRUE(from_env->IsSet("upstream"));

  auto both = Parse({"--upstream=cli:1"}, {{"SPARKTRACE_UPSTREAM", "env:1"}});
  EXPECT_EQ(both->Get("upstream"), "cli:1");

  auto bad_env_bool = Parse({"--upstream=a:1"}, {{"SPARKTRACE_VERBOSE", "perhaps"}});
  ASSERT_FALSE(bad_env_bool.ok());
  EXPECT_NE(bad_env_bool.error().message.find("SPARKTRACE_VERBOSE"), std::string::npos);
}

TEST(ParseFlags, RepeatableFlagsCollectAndEnvSplitsOnCommas) {
  auto flags = Parse({"--upstream=a:1", "--event-log-dir", "/a", "--event-log-dir=/b"});
  EXPECT_EQ(flags->GetAll("event-log-dir"), (std::vector<std::string>{"/a", "/b"}));
  auto env = Parse({"--upstream=a:1"}, {{"SPARKTRACE_EVENT_LOG_DIR", "/x,/y"}});
  EXPECT_EQ(env->GetAll("event-log-dir"), (std::vector<std::string>{"/x", "/y"}));
}

TEST(ParseFlags, PositionalsAndDoubleDash) {
  auto flags = Parse({"--upstream=a:1", "file1", "--", "--not-a-flag"});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->positional(), (std::vector<std::string>{"file1", "--not-a-flag"}));
}

TEST(FlagHelp, ListsEveryFlagWithDefaults) {
  const std::string help = FormatFlagHelp(kSpecs);
  for (const auto& spec : kSpecs) EXPECT_NE(help.find("--" + spec.name), std::string::npos) << spec.name;
  EXPECT_NE(help.find("[default: 0.0.0.0:15002]"), std::string::npos);
  EXPECT_NE(help.find("(required)"), std::string::npos);
  EXPECT_TRUE(WantsHelp(std::vector<std::string>{"--x", "-h"}));
  EXPECT_FALSE(WantsHelp(std::vector<std::string>{"--", "--help"}));
}

TEST(FlagEnvironmentName, UpperSnake) {
  EXPECT_EQ(FlagEnvironmentName("max-message-bytes"), "SPARKTRACE_MAX_MESSAGE_BYTES");
}

}  // namespace
}  // namespace sparktrace
