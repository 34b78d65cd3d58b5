#include "tracing/connect/operation_progress.h"

#include <algorithm>

namespace sparktrace::tracing::connect {

ProgressTotals TotalsOf(const std::vector<spark_connect::StageProgress>& stages,
                        std::int64_t inflight_tasks) {
  ProgressTotals totals;
  totals.stages_total = static_cast<std::int64_t>(stages.size());
  for (const spark_connect::StageProgress& stage : stages) {
    if (stage.done) ++totals.stages_done;
    totals.tasks_total += stage.num_tasks;
    totals.tasks_done += stage.num_completed_tasks;
    totals.input_bytes_read += stage.input_bytes_read;
  }
  totals.inflight_tasks = inflight_tasks;
  return totals;
}

void OperationProgress::Update(const spark_connect::ResponseInfo& response, Clock::time_point at,
                               const ProgressOptions& options) {
  // Spark lists every stage of the operation in each response: the latest replaces what was kept.
  stages_ = response.stages;
  stages_dropped_ = response.dropped_stages;
  latest_ = TotalsOf(stages_, response.num_inflight_tasks);
  ++updates_;
  const ProgressSample sample{at, latest_};
  if (kept_.empty()) {
    interval_ = options.event_interval;
    kept_.push_back(sample);
    return;
  }
  // One slot stays free for the last update, whenever it comes.
  const std::size_t keep_at_most = std::max<std::size_t>(options.max_events, 2) - 1;
  const bool interval_passed = at - kept_.back().at >= interval_;
  if (interval_passed && kept_.size() >= keep_at_most) HalveKept();
  if (at - kept_.back().at >= interval_ && kept_.size() < keep_at_most) {
    kept_.push_back(sample);
    pending_.reset();
  } else {
    pending_ = sample;
  }
}

// Full: every second kept sample goes (the first stays) and the interval doubles, so that a long
// operation's events spread over all of it rather than its first minutes. Amortised O(1): it
// happens once per max_events / 2 kept samples at most.
void OperationProgress::HalveKept() {
  std::size_t out = 0;
  for (std::size_t in = 0; in < kept_.size(); in += 2) kept_[out++] = kept_[in];
  kept_.resize(out);
  interval_ *= 2;
}

bool OperationProgress::TakeSnapshotTurn(Clock::time_point at, const ProgressOptions& options) {
  if (last_snapshot_ && at - *last_snapshot_ < options.snapshot_interval) return false;
  last_snapshot_ = at;
  return true;
}

std::vector<ProgressSample> OperationProgress::Samples() const {
  std::vector<ProgressSample> samples = kept_;
  if (pending_) samples.push_back(*pending_);
  return samples;
}

}  // namespace sparktrace::tracing::connect
