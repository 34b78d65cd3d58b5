#include "tracing/store/export/burst_forecast.h"

namespace sparktrace::tracing::store {
namespace {

// Arrivals are counted over intervals at least this long: shorter ones measure the scheduler, not
// the traffic.
constexpr auto kMinSampleInterval = std::chrono::milliseconds(20);
// Weight of the newest write in the store's pace: a few writes decide it, one odd write does not.
constexpr double kWriteWeight = 0.3;
// While the forecast alone spools, a write goes in this often to measure the store's pace again.
constexpr auto kRemeasureInterval = std::chrono::seconds(1);

}  // namespace

void BurstForecast::SampleArrivals(Clock::time_point now) {
  const std::uint64_t arrived = gauge_->arrived();
  if (sampled_at_ == Clock::time_point{}) {
    sampled_at_ = now;
    arrived_at_sample_ = arrived;
    return;
  }
  const auto interval = now - sampled_at_;
  if (interval < kMinSampleInterval) return;
  arrivals_per_second_ =
      static_cast<double>(arrived - arrived_at_sample_) / std::chrono::duration<double>(interval).count();
  sampled_at_ = now;
  arrived_at_sample_ = arrived;
}

bool BurstForecast::SpoolInstead(std::size_t spans, Clock::time_point now) {
  if (gauge_ == nullptr || gauge_->capacity() == 0) return false;
  SampleArrivals(now);
  const double queued = static_cast<double>(gauge_->queued());
  const double capacity = static_cast<double>(gauge_->capacity());
  if (queued * 4 > capacity) return true;
  const double expected_arrivals = arrivals_per_second_ * seconds_per_span_ * static_cast<double>(spans);
  if (queued + expected_arrivals <= capacity / 2) return false;
  if (now - last_write_ >= kRemeasureInterval) {
    last_write_ = now;  // this one goes to the store: its time is the pace from now on
    return false;
  }
  return true;
}

void BurstForecast::RecordWrite(std::size_t spans, Clock::duration took, Clock::time_point now) {
  last_write_ = now;
  if (spans == 0) return;
  const double per_span = std::chrono::duration<double>(took).count() / static_cast<double>(spans);
  seconds_per_span_ =
      seconds_per_span_ == 0 ? per_span : kWriteWeight * per_span + (1 - kWriteWeight) * seconds_per_span_;
}

}  // namespace sparktrace::tracing::store
