#include "common/log_throttle.h"

#include <gtest/gtest.h>

namespace sparktrace {
namespace {

using std::chrono::seconds;

TEST(LogThrottle, LogsTheFirstThenOnePerIntervalWithTheCountHeldBack) {
  LogThrottle throttle(seconds(10));
  const LogThrottle::Clock::time_point start{};
  EXPECT_EQ(throttle.Allow(start + seconds(100)), 0U);
  EXPECT_FALSE(throttle.Allow(start + seconds(101)).has_value());
  EXPECT_FALSE(throttle.Allow(start + seconds(109)).has_value());
  EXPECT_EQ(throttle.Allow(start + seconds(110)), 2U);
  EXPECT_FALSE(throttle.Allow(start + seconds(111)).has_value());
}

TEST(LogThrottle, ResetLogsTheNextAtOnce) {
  LogThrottle throttle(seconds(10));
  const LogThrottle::Clock::time_point start{};
  EXPECT_TRUE(throttle.Allow(start + seconds(1)).has_value());
  EXPECT_FALSE(throttle.Allow(start + seconds(2)).has_value());
  throttle.Reset();
  EXPECT_EQ(throttle.Allow(start + seconds(3)), 0U);
}

}  // namespace
}  // namespace sparktrace
