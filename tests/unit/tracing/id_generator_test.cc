#include "tracing/id_generator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

namespace sparktrace::tracing {
namespace {

std::uint64_t NowMs() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

std::uint64_t TimeOf(const TraceId& id) {
  std::uint64_t ms = 0;
  for (std::size_t b = 0; b < 6; ++b) ms = (ms << 8) | id[b];
  return ms;
}

TEST(RandomIdGeneratorTest, TraceIdsStartWithTheTimeAndStayUnique) {
  RandomIdGenerator ids;
  const std::uint64_t before = NowMs();
  std::set<std::string> seen;
  std::set<std::uint64_t> low_words;
  TraceId previous{};
  for (int i = 0; i < 10'000; ++i) {
    const TraceId id = ids.NewTraceId();
    ASSERT_TRUE(IsValid(id));
    EXPECT_TRUE(seen.insert(ToHex(id)).second) << "repeated id " << ToHex(id);
    EXPECT_GE(TimeOf(id), TimeOf(previous));  // ids grow with time
    std::uint64_t low = 0;
    for (std::size_t b = 8; b < 16; ++b) low = (low << 8) | id[b];
    low_words.insert(low);
    previous = id;
  }
  const std::uint64_t after = NowMs();
  EXPECT_GE(TimeOf(previous), before);
  EXPECT_LE(TimeOf(previous), after);
  // The low 8 bytes, which samplers read, are random.
  EXPECT_EQ(low_words.size(), 10'000u);
}

TEST(RandomIdGeneratorTest, SpanIdsAreRandomAndValid) {
  RandomIdGenerator ids;
  std::set<std::string> seen;
  for (int i = 0; i < 10'000; ++i) {
    const SpanId id = ids.NewSpanId();
    ASSERT_TRUE(IsValid(id));
    seen.insert(ToHex(id));
  }
  EXPECT_EQ(seen.size(), 10'000u);
}

}  // namespace
}  // namespace sparktrace::tracing
