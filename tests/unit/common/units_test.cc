#include "common/units.h"

#include <gtest/gtest.h>

namespace sparktrace {
namespace {

TEST(ParseByteSize, AcceptsPlainAndUnits) {
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576u);
  EXPECT_EQ(*ParseByteSize("256MiB"), 256ULL << 20);
  EXPECT_EQ(*ParseByteSize("2GiB"), 2ULL << 30);
  EXPECT_EQ(*ParseByteSize("4KB"), 4000u);
}

TEST(ParseByteSize, RejectsGarbageAndOverflow) {
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("MiB").ok());
  EXPECT_FALSE(ParseByteSize("12 MiB").ok());
  EXPECT_FALSE(ParseByteSize("12XB").ok());
  EXPECT_FALSE(ParseByteSize("-5").ok());
  EXPECT_FALSE(ParseByteSize("99999999999999999999GiB").ok());
  EXPECT_FALSE(ParseByteSize("17179869184GiB").ok());
}

TEST(ParseDuration, AcceptsUnitsAndCompounds) {
  EXPECT_EQ(ParseDuration("150s")->count(), 150'000);
  EXPECT_EQ(ParseDuration("500ms")->count(), 500);
  EXPECT_EQ(ParseDuration("2m")->count(), 120'000);
  EXPECT_EQ(ParseDuration("1h30m")->count(), 5'400'000);
  EXPECT_EQ(ParseDuration("7d")->count(), 7LL * 86'400'000);
  EXPECT_EQ(ParseDuration("0")->count(), 0);
}

TEST(ParseDuration, RejectsMissingUnitsAndJunk) {
  EXPECT_FALSE(ParseDuration("150").ok());
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("s").ok());
  EXPECT_FALSE(ParseDuration("10w").ok());
  EXPECT_FALSE(ParseDuration("1.5s").ok());
}

TEST(Format, RoundTripsExactValues) {
  EXPECT_EQ(FormatByteSize(256ULL << 20), "256MiB");
  EXPECT_EQ(FormatByteSize(1000), "1000B");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(150'000)), "150s");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(120'000)), "2m");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(1500)), "1500ms");
}

}  // namespace
}  // namespace sparktrace
