// --event-push-max-bytes, --event-push-without-token (docs/tracing.md, "Driver events").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/tracing_config.h"

namespace sparktrace::cli {
namespace {

Result<TracingConfig> ConfigureWith(std::vector<std::string> args) {
  auto flags = ParseFlags(TracingFlagSpecs(), args, [](const std::string&) { return std::nullopt; });
  if (!flags.ok()) return flags.error();
  return TracingConfigFromFlags(*flags);
}

TEST(TracingConfigEventPush, DefaultsTo16MiBAndZeroTurnsItOff) {
  auto defaults = ConfigureWith({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->event_push_max_bytes, std::uint64_t{16} << 20);
  auto off = ConfigureWith({"--event-push-max-bytes", "0"});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->event_push_max_bytes, 0u);
  auto kib = ConfigureWith({"--event-push-max-bytes", "1KiB"});
  ASSERT_TRUE(kib.ok());
  EXPECT_EQ(kib->event_push_max_bytes, 1024u);
}

// With --admin-token the push route asks for it (cli/tracing_stack.cc) unless this flag opens it.
TEST(TracingConfigEventPush, NeedsTheAdminTokenUnlessOpenedOnPurpose) {
  auto defaults = ConfigureWith({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->event_push_needs_token);
  auto opened = ConfigureWith({"--event-push-without-token"});
  ASSERT_TRUE(opened.ok());
  EXPECT_FALSE(opened->event_push_needs_token);
}

TEST(TracingConfigEventPush, BadValuesNameTheFlag) {
  for (const char* bad : {"lots", "-1", "2GiB"}) {
    auto config = ConfigureWith({"--event-push-max-bytes", bad});
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_NE(config.error().message.find("--event-push-max-bytes"), std::string::npos)
        << config.error().message;
  }
}

}  // namespace
}  // namespace sparktrace::cli
