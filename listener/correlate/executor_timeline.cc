#include "listener/correlate/executor_timeline.h"

#include <algorithm>
#include <tuple>

namespace sparktrace::listener::correlate {

ExecutorTimeline ExecutorsDuring(const ApplicationModel& model, TimeWindow window, std::size_t max_changes) {
  ExecutorTimeline timeline;
  std::vector<ExecutorChange> changes;
  for (const ExecutorRecord& executor : model.executors()) {
    const bool alive_at_start = executor.added_ms <= window.start_ms &&
                                (!executor.removed_ms || *executor.removed_ms > window.start_ms);
    if (alive_at_start) {
      ++timeline.active_at_start;
      timeline.cores_at_start += executor.total_cores;
    }
    if (executor.added_ms > window.start_ms && executor.added_ms <= window.end_ms) {
      changes.push_back({executor.added_ms, true, executor.executor_id, executor.total_cores, 0, 0});
    }
    if (executor.removed_ms && *executor.removed_ms > window.start_ms &&
        *executor.removed_ms <= window.end_ms && executor.added_ms <= *executor.removed_ms) {
      changes.push_back({*executor.removed_ms, false, executor.executor_id, executor.total_cores, 0, 0});
    }
  }
  // Adds first at a tie: an executor replaced at the same millisecond never shows a dip to zero.
  std::sort(changes.begin(), changes.end(), [](const ExecutorChange& a, const ExecutorChange& b) {
    return std::tuple(a.time_ms, !a.added, a.executor_id) < std::tuple(b.time_ms, !b.added, b.executor_id);
  });
  std::int64_t active = timeline.active_at_start;
  std::int64_t cores = timeline.cores_at_start;
  for (ExecutorChange& change : changes) {
    active += change.added ? 1 : -1;
    cores += change.added ? change.cores : -change.cores;
    change.active_after = std::max<std::int64_t>(active, 0);
    change.cores_after = std::max<std::int64_t>(cores, 0);
    if (timeline.changes.size() < max_changes) {
      timeline.changes.push_back(std::move(change));
    } else {
      ++timeline.dropped_changes;
    }
  }
  return timeline;
}

}  // namespace sparktrace::listener::correlate
