#include "proxy/relay_budget.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

constexpr WindowSizes kSizes{64 * 1024, 1024 * 1024};

TEST(RelayBudget, TakesWhatFitsAndCountsRefusals) {
  RelayBudget budget(100);
  EXPECT_TRUE(budget.TryTake(60));
  EXPECT_FALSE(budget.TryTake(41));
  EXPECT_EQ(budget.refusals(), 1U);
  EXPECT_TRUE(budget.TryTake(40));
  EXPECT_EQ(budget.taken(), 100U);
  budget.Give(100);
  EXPECT_EQ(budget.taken(), 0U);
  EXPECT_EQ(budget.high_water(), 100U);
}

TEST(RelayBudget, ForcedTakesMayGoOverAndThenRefuseGrowth) {
  RelayBudget budget(100);
  budget.Take(150);  // windows announced before the stream existed
  EXPECT_EQ(budget.taken(), 150U);
  EXPECT_FALSE(budget.TryTake(1));
  EXPECT_EQ(budget.high_water(), 150U);
}

TEST(RelayBudget, ConcurrentTakersNeverExceedTheLimit) {
  RelayBudget budget(1000);
  std::vector<std::thread> threads;
  std::atomic<int> granted{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (budget.TryTake(3)) granted.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(granted.load(), 333);
  EXPECT_LE(budget.taken(), 1000U);
  EXPECT_LE(budget.high_water(), 1000U);
}

TEST(StreamWindow, OpenTakesTheInitialWindowAndCloseGivesItAllBack) {
  RelayBudget budget(10 << 20);
  {
    StreamWindow window(budget, nullptr, kSizes);
    window.Open();
    window.Open();  // idempotent
    EXPECT_EQ(window.size(), 64 * 1024);
    EXPECT_EQ(budget.taken(), 64U * 1024);
    window.Received(64 * 1024);
    EXPECT_EQ(window.GrowIfStarved(), 128 * 1024);
    EXPECT_EQ(budget.taken(), 128U * 1024);
    window.Close();
    EXPECT_EQ(budget.taken(), 0U);
    window.Close();
    EXPECT_EQ(budget.taken(), 0U);
  }
  {
    StreamWindow window(budget, nullptr, kSizes);
    window.Open();
  }  // the destructor closes
  EXPECT_EQ(budget.taken(), 0U);
}

TEST(StreamWindow, GrowsOnlyWhenTheSenderUsedAWholeWindow) {
  RelayBudget budget(10 << 20);
  StreamWindow window(budget, nullptr, kSizes);
  window.Open();
  window.Received(500);  // a unary call: no growth, no WINDOW_UPDATE
  EXPECT_EQ(window.GrowIfStarved(), 0);
  window.Received(64 * 1024);
  EXPECT_EQ(window.GrowIfStarved(), 128 * 1024);
  EXPECT_EQ(window.GrowIfStarved(), 0) << "nothing received since";
}

TEST(StreamWindow, DoublesUpToTheMaximumAndNoFurther) {
  RelayBudget budget(10 << 20);
  StreamWindow window(budget, nullptr, kSizes);
  window.Open();
  std::vector<std::int32_t> sizes;
  for (int i = 0; i < 8; ++i) {
    window.Received(static_cast<std::size_t>(window.size()));
    if (const std::int32_t grown = window.GrowIfStarved()) sizes.push_back(grown);
  }
  EXPECT_EQ(sizes, (std::vector<std::int32_t>{128 << 10, 256 << 10, 512 << 10, 1 << 20}));
  EXPECT_EQ(budget.taken(), 1U << 20);
}

TEST(StreamWindow, TheBudgetStopsGrowthAndTheWindowKeepsWhatItHas) {
  RelayBudget budget(150 * 1024);
  StreamWindow first(budget, nullptr, kSizes);
  StreamWindow second(budget, nullptr, kSizes);
  first.Open();
  second.Open();
  first.Received(64 * 1024);
  EXPECT_EQ(first.GrowIfStarved(), 0) << "64 KiB more would pass 150 KiB";
  EXPECT_EQ(first.size(), 64 * 1024);
  EXPECT_EQ(budget.refusals(), 1U);
  second.Close();  // room again
  EXPECT_EQ(first.GrowIfStarved(), 128 * 1024);
}

TEST(StreamWindow, OneConnectionCannotTakeMoreThanItsShare) {
  RelayBudget budget(10 << 20);
  auto share = std::make_shared<ConnectionShare>(192 * 1024);
  StreamWindow first(budget, share, kSizes);
  StreamWindow second(budget, share, kSizes);
  StreamWindow other_connection(budget, nullptr, kSizes);
  first.Open();
  second.Open();
  other_connection.Open();
  first.Received(64 * 1024);
  EXPECT_EQ(first.GrowIfStarved(), 128 * 1024);  // +64 KiB of the share
  first.Received(128 * 1024);
  EXPECT_EQ(first.GrowIfStarved(), 256 * 1024);  // +128 KiB: the share is spent
  second.Received(64 * 1024);
  GrowthRefusal refusal = GrowthRefusal::kNone;
  EXPECT_EQ(second.GrowIfStarved(&refusal), 0);
  EXPECT_EQ(refusal, GrowthRefusal::kConnectionShare);
  EXPECT_EQ(budget.refusals(), 0U) << "the budget was not asked";
  other_connection.Received(64 * 1024);
  EXPECT_EQ(other_connection.GrowIfStarved(), 128 * 1024) << "another connection still grows";
  first.Close();
  EXPECT_EQ(share->taken(), 0U) << "a closed window gives its growth back to the share";
  EXPECT_EQ(second.GrowIfStarved(), 128 * 1024);
}

TEST(StreamWindow, ABudgetRefusalGivesTheShareBack) {
  RelayBudget budget(100 * 1024);
  auto share = std::make_shared<ConnectionShare>(10 << 20);
  StreamWindow window(budget, share, kSizes);
  window.Open();
  window.Received(64 * 1024);
  GrowthRefusal refusal = GrowthRefusal::kNone;
  EXPECT_EQ(window.GrowIfStarved(&refusal), 0);
  EXPECT_EQ(refusal, GrowthRefusal::kBudget);
  EXPECT_EQ(share->taken(), 0U);
}

TEST(StreamWindow, ClosedWindowsNeitherGrowNorTake) {
  RelayBudget budget(10 << 20);
  StreamWindow window(budget, nullptr, kSizes);
  window.Received(1 << 20);
  EXPECT_EQ(window.GrowIfStarved(), 0);
  EXPECT_EQ(budget.taken(), 0U);
}

}  // namespace
}  // namespace sparktrace::proxy
