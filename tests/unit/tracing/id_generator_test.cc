#include "tracing/id_generator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

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

std::uint64_t HighWordOf(const TraceId& id) {
  std::uint64_t word = 0;
  for (std::size_t b = 0; b < 8; ++b) word = (word << 8) | id[b];
  return word;
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
    // and strictly in the order they are made, within a millisecond too (the sequence after the time)
    EXPECT_GT(HighWordOf(id), HighWordOf(previous)) << ToHex(previous) << " then " << ToHex(id);
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

TEST(RandomIdGeneratorTest, ThreadsSharingAGeneratorGetUniqueIdsEachInOrder) {
  RandomIdGenerator ids;  // one instance, as the proxy's workers share it
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20'000;  // more than one millisecond's worth at any pace of this machine
  std::vector<std::vector<TraceId>> made(kThreads);
  {
    std::vector<std::jthread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&ids, &mine = made[static_cast<std::size_t>(t)]] {
        for (int i = 0; i < kPerThread; ++i) mine.push_back(ids.NewTraceId());
      });
    }
  }
  std::set<std::uint64_t> high_words;
  for (const auto& mine : made) {
    for (std::size_t i = 0; i < mine.size(); ++i) {
      high_words.insert(HighWordOf(mine[i]));
      if (i > 0) {
        EXPECT_GT(HighWordOf(mine[i]), HighWordOf(mine[i - 1])) << "thread's ids out of order";
      }
    }
  }
  // No two ids share their time and sequence, however the threads interleaved.
  EXPECT_EQ(high_words.size(), static_cast<std::size_t>(kThreads * kPerThread));
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
