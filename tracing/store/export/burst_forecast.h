#pragma once
// Whether the store exporter may write a batch to the store now, or must put it in the spool so that
// the pipeline's queue does not overflow while the store is busy. A store write blocks the exporter
// thread; spans keep arriving meanwhile. Two rules, either of which sends batches to the spool:
// - the queue is more than a quarter full already (the exporter is behind: spooling, an append,
//   empties it several times faster than writing);
// - the spans expected to arrive during the write (the arrival rate measured on the pipeline's gauge,
//   times the time per span the store's recent writes took) would take the queue past half of what
//   it holds. Half, not all: a write can take twice its average (a PostgreSQL checkpoint, a SQLite
//   WAL checkpoint). This is what keeps a slow store (PostgreSQL: ~100 ms for 2,048 spans) from
//   overflowing the queue at 60k spans/s while the queue still looks nearly empty.
// Both estimates follow the traffic: once a burst ends the rate falls, and the store is written again.
// The store's pace is only learnt from writes, so while the forecast alone keeps batches out of the
// store, one write a second still goes in (while the queue is below a quarter): a single slow write
// (a checkpoint, a vacuum) must not keep a store that is fast again out for as long as the traffic
// lasts, until the spool fills. One write is at most what the half margin allows for.
//
// Exporter thread only.

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "tracing/span_exporter.h"

namespace sparktrace::tracing::store {

class BurstForecast {
 public:
  using Clock = std::chrono::steady_clock;

  void Watch(const BacklogGauge& gauge) { gauge_ = &gauge; }

  // Whether `spans` should go to the spool rather than the store, deciding at `now`.
  bool SpoolInstead(std::size_t spans, Clock::time_point now);

  // A store write of `spans` that took `took`, ending at `now`: the store's pace.
  void RecordWrite(std::size_t spans, Clock::duration took, Clock::time_point now = Clock::now());

  double arrivals_per_second() const { return arrivals_per_second_; }
  double seconds_per_span() const { return seconds_per_span_; }

 private:
  void SampleArrivals(Clock::time_point now);

  const BacklogGauge* gauge_ = nullptr;  // null: no pipeline (tests, tools): never spool for a burst
  double seconds_per_span_ = 0;          // moving average over writes; 0 before the first
  Clock::time_point last_write_{};       // the last write recorded, or the last one let through
  double arrivals_per_second_ = 0;       // over the last sampling interval
  Clock::time_point sampled_at_{};
  std::uint64_t arrived_at_sample_ = 0;
};

}  // namespace sparktrace::tracing::store
