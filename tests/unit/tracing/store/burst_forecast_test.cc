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

// PostgreSQL at ~14k spans/s (150 ms for a batch of 2,048) while spans arrive at 60k/s: the write
// would let 9,000 spans in, past half the queue, though the queue holds only 1,000 now. Once the
// burst is over, the store is written again.
TEST(BurstForecast, ASlowStoreUnderABurstSpoolsBeforeTheQueueFills) {
  BacklogGauge gauge(kQueue);
  BurstForecast forecast;
  forecast.Watch(gauge);
  forecast.RecordWrite(kBatch, milliseconds(150));
  const auto t0 = BurstForecast::Clock::now();
  EXPECT_FALSE(forecast.SpoolInstead(kBatch, t0)) << "no arrival rate measured yet";
  Arrive(gauge, 6000, 1000);  // 6,000 spans in 100 ms
  EXPECT_TRUE(forecast.SpoolInstead(kBatch, t0 + milliseconds(100)));
  EXPECT_NEAR(forecast.arrivals_per_second(), 60'000, 1);

  Arrive(gauge, 100, 0);  // 100 spans in the next second: 100/s
  EXPECT_FALSE(forecast.SpoolInstead(kBatch, t0 + milliseconds(1100)));
}

// SQLite at ~40k spans/s (50 ms a batch) with the same burst: 3,000 arrivals during a write, well
// within half the queue: it keeps writing.
TEST(BurstForecast, AFastStoreKeepsWritingThroughTheSameBurst) {
  BacklogGauge gauge(kQueue);
  BurstForecast forecast;
  forecast.Watch(gauge);
  forecast.RecordWrite(kBatch, milliseconds(50));
  const auto t0 = BurstForecast::Clock::now();
  forecast.SpoolInstead(kBatch, t0);
  Arrive(gauge, 6000, 1000);
  EXPECT_FALSE(forecast.SpoolInstead(kBatch, t0 + milliseconds(100)));
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
