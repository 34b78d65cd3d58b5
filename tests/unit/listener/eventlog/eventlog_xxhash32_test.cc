#include <gtest/gtest.h>

#include <string>

#include "listener/eventlog/xxhash32.h"

namespace sparktrace::listener::eventlog {
namespace {

std::string Bytes0To255Times3() {
  std::string bytes;
  for (int round = 0; round < 3; ++round) {
    for (int value = 0; value < 256; ++value) bytes.push_back(static_cast<char>(value));
  }
  return bytes;
}

// Expected values computed with the reference implementation (Debian's libxxhash.so.0, XXH32).
TEST(EventLogXxHash32, MatchesTheReferenceImplementation) {
  EXPECT_EQ(XxHash32("", 0), 0x02CC5D05U);
  EXPECT_EQ(XxHash32("a", 0), 0x550D7456U);
  EXPECT_EQ(XxHash32("abc", 0), 0x32D153FFU);
  EXPECT_EQ(XxHash32("Nobody inspects the spammish repetition", 0), 0xE2293B2FU);
  EXPECT_EQ(XxHash32(Bytes0To255Times3(), 0), 0xCDB946B1U);
}

TEST(EventLogXxHash32, UsesTheSeedLz4JavaUses) {
  constexpr std::uint32_t kLz4JavaSeed = 0x9747b28c;
  EXPECT_EQ(XxHash32("", kLz4JavaSeed), 0x8D3B42D8U);
  EXPECT_EQ(XxHash32("a", kLz4JavaSeed), 0x12B7E114U);
  EXPECT_EQ(XxHash32("abc", kLz4JavaSeed), 0x4D4CB222U);
  EXPECT_EQ(XxHash32("Nobody inspects the spammish repetition", kLz4JavaSeed), 0x70B91719U);
  EXPECT_EQ(XxHash32(Bytes0To255Times3(), kLz4JavaSeed), 0xEAA85739U);
}

}  // namespace
}  // namespace sparktrace::listener::eventlog
