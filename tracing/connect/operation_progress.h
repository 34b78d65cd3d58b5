#pragma once
// The live progress of one Spark Connect operation, from the execution_progress responses Spark
// 4.0+ streams in ExecutePlan/ReattachExecute (docs/tracing.md, "Live progress"): the latest
// figures, the samples that become `spark.connect.progress` span events, and when a live snapshot
// of the still open operation span is due. Clients of older Spark never get such responses: their
// operations have no progress at all.
//
// Bounded: each response lists every stage of the operation (Spark's
// ConnectProgressExecutionListener sends them all each time), so the latest response replaces the
// stages kept; the decoder keeps at most spark_connect::kMaxDecodedStages of them and counts the
// rest. Samples: at most max_events, at least event_interval apart (the last excepted), the first
// and the last always kept; when they are full, every second one goes and the interval doubles.
//
// Threads: none of its own; it lives in an Operation, under OperationRegistry's mutex.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "spark_connect/response_info.h"

namespace sparktrace::tracing::connect {

struct ProgressOptions {
  // A `spark.connect.progress` event is kept at most this often (the last one excepted)…
  std::chrono::milliseconds event_interval{1000};
  // … and at most this many per operation (at least 2: the first and the last).
  std::size_t max_events = 32;
  // A running operation's span is sent live to the store at most this often.
  std::chrono::milliseconds snapshot_interval{2000};
};

// Sums over the stages of one execution_progress response.
struct ProgressTotals {
  std::int64_t stages_done = 0;
  std::int64_t stages_total = 0;
  std::int64_t tasks_done = 0;
  std::int64_t tasks_total = 0;
  std::int64_t input_bytes_read = 0;
  std::int64_t inflight_tasks = 0;

  bool operator==(const ProgressTotals&) const = default;
};

ProgressTotals TotalsOf(const std::vector<spark_connect::StageProgress>& stages, std::int64_t inflight_tasks);

struct ProgressSample {
  std::chrono::steady_clock::time_point at;
  ProgressTotals totals;

  bool operator==(const ProgressSample&) const = default;
};

class OperationProgress {
 public:
  using Clock = std::chrono::steady_clock;

  // One execution_progress response, at `at` (not before the previous one's).
  void Update(const spark_connect::ResponseInfo& response, Clock::time_point at,
              const ProgressOptions& options);

  // Whether a live snapshot is due at `at`, marking it sent when it is: the first update's, then
  // at most one per snapshot_interval.
  bool TakeSnapshotTurn(Clock::time_point at, const ProgressOptions& options);

  bool any() const { return updates_ > 0; }
  std::uint64_t updates() const { return updates_; }
  const ProgressTotals& latest() const { return latest_; }
  const std::vector<spark_connect::StageProgress>& stages() const { return stages_; }
  // Stages the decoder left out of the latest response (beyond kMaxDecodedStages).
  std::uint32_t stages_dropped() const { return stages_dropped_; }

  // The samples to show as events, oldest first: at most options.max_events.
  std::vector<ProgressSample> Samples() const;
  // Updates that are not among Samples(): thinned out by the interval or the count.
  std::uint64_t thinned() const { return updates_ - Samples().size(); }

 private:
  void HalveKept();

  std::vector<spark_connect::StageProgress> stages_;
  std::uint32_t stages_dropped_ = 0;
  ProgressTotals latest_;
  std::uint64_t updates_ = 0;
  // Kept samples (at most max_events - 1, leaving room for the last) and the latest update since
  // the last kept one, which is the last sample if no other comes.
  std::vector<ProgressSample> kept_;
  std::optional<ProgressSample> pending_;
  std::chrono::milliseconds interval_{0};  // options.event_interval, doubled at each HalveKept()
  std::optional<Clock::time_point> last_snapshot_;
};

}  // namespace sparktrace::tracing::connect
