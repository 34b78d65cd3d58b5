#include "tracing/store/export/burst_forecast.h"

#include <gtest/gtest.h>

#include <chrono>

namespace sparktrace::tracing::store {
namespace {

using std::chrono::milliseconds;
constexpr std::size_t kBatch = 2048;
constexpr std::size_t kQueue = 16384;

// `count` spans accepted into a queue that holds `queued` afterwards.
void Arrive(BacklogGauge& gauge, int count, std::size_t queued) {
  for (int i = 0; i < count; ++i) gauge.Accepted(queued);
}

TEST(BurstForecast, WithoutAPipelineItNeverSpools) {
  BurstForecast forecast;
  forecast.RecordWrite(kBatch, milliseconds(500));
  EXPECT_FALSE(forecast.SpoolInstead(kBatch, BurstForecast::Clock::now()));
}

TEST(BurstForecast, AQueueMoreThanAQuarterFullSpools) {
  BacklogGauge gauge(kQueue);
  BurstForecast forecast;
  forecast.Watch(gauge);
  const auto t0 = BurstForecast::Clock::now();
  gauge.Taken(kQueue / 4);
  EXPECT_FALSE(forecast.SpoolInstead(kBatch, t0));
  gauge.Taken(kQueue / 4 + 1);
  EXPECT_TRUE(forecast.SpoolInstead(kBatch, t0));
}

// A forecast watching a queue of kQueue, for a store whose batches of kBatch took `write`, asked
// once at t0 (no arrival rate yet), then after 6,000 spans arrived in 100 ms (60k spans/s) with
// 1,000 in the queue: whether it spools at t0 + 100 ms.
struct BurstAfterWrites {
  explicit BurstAfterWrites(milliseconds write) {
    forecast.Watch(gauge);
    forecast.RecordWrite(kBatch, write, t0);
    first_answer = forecast.SpoolInstead(kBatch, t0);
    Arrive(gauge, 6000, 1000);
    spools = forecast.SpoolInstead(kBatch, t0 + milliseconds(100));
  }
  BacklogGauge gauge{kQueue};
  BurstForecast forecast;
  const BurstForecast::Clock::time_point t0 = BurstForecast::Clock::now();
  bool first_answer = true;
  bool spools = false;
};

// PostgreSQL at ~14k spans/s (150 ms for a batch of 2,048) while spans arrive at 60k/s: the write
// would let 9,000 spans in, past half the queue, though the queue holds only 1,000 now. Once the
// burst is over, the store is written again.
TEST(BurstForecast, ASlowStoreUnderABurstSpoolsBeforeTheQueueFills) {
  BurstAfterWrites burst(milliseconds(150));
  EXPECT_FALSE(burst.first_answer) << "no arrival rate measured yet";
  EXPECT_TRUE(burst.spools);
  EXPECT_NEAR(burst.forecast.arrivals_per_second(), 60'000, 1);

  Arrive(burst.gauge, 100, 0);  // 100 spans in the next second: 100/s
  EXPECT_FALSE(burst.forecast.SpoolInstead(kBatch, burst.t0 + milliseconds(1100)));
}

// One slow write (a checkpoint) must not keep the store out for as long as the burst lasts: the
// forecast only learns the store's pace from writes, so while it alone spools, one batch a second
// still goes to the store; the others keep going to the spool.
TEST(BurstForecast, WhileItSpoolsOnAForecastOneWriteASecondStillGoesIn) {
  BurstAfterWrites burst(milliseconds(150));
  ASSERT_TRUE(burst.spools);
  auto at = burst.t0 + milliseconds(100);
  bool let_through = false;
  for (int step = 0; step < 9 && !let_through; ++step) {  // 100 ms more each time, still 60k/s
    at += milliseconds(100);
    Arrive(burst.gauge, 6000, 1000);
    let_through = !burst.forecast.SpoolInstead(kBatch, at);
    EXPECT_EQ(let_through, at - burst.t0 >= std::chrono::seconds(1)) << "at +" << (at - burst.t0).count();
  }
  EXPECT_TRUE(let_through);
  Arrive(burst.gauge, 6000, 1000);
  EXPECT_TRUE(burst.forecast.SpoolInstead(kBatch, at + milliseconds(100)))
      << "one write, then the spool again";
}

// SQLite at ~40k spans/s (50 ms a batch) with the same burst: 3,000 arrivals during a write, well
// within half the queue: it keeps writing.
TEST(BurstForecast, AFastStoreKeepsWritingThroughTheSameBurst) {
  EXPECT_FALSE(BurstAfterWrites(milliseconds(50)).spools);
}

// The store's pace follows its writes: one slow write raises it, not to its own level.
TEST(BurstForecast, TheStoresPaceIsAMovingAverage) {
  BurstForecast forecast;
  forecast.RecordWrite(1000, milliseconds(10));
  EXPECT_DOUBLE_EQ(forecast.seconds_per_span(), 10e-6);
  forecast.RecordWrite(1000, milliseconds(110));
  EXPECT_NEAR(forecast.seconds_per_span(), 0.3 * 110e-6 + 0.7 * 10e-6, 1e-12);
}

}  // namespace
}  // namespace sparktrace::tracing::store
