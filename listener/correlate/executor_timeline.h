#pragma once
// ExecutorTimeline: how many executors the application had during a time window, as the trace view's
// executor lane draws it under the stages (the lane that makes resource wait visible). Derived from
// ExecutorAdded/ExecutorRemoved; an executor counts from its added time until its removed time.
//
// Pure functions of the model; thread-safe for concurrent readers of one model.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"

namespace sparktrace::listener::correlate {

struct ExecutorChange {
  events::EpochMillis time_ms = 0;
  bool added = true;  // else removed
  std::string executor_id;
  std::int32_t cores = 0;
  std::int64_t active_after = 0;  // executors alive right after this change
  std::int64_t cores_after = 0;   // and their cores
};

struct ExecutorTimeline {
  std::int64_t active_at_start = 0;
  std::int64_t cores_at_start = 0;      // of the executors alive at the start
  std::vector<ExecutorChange> changes;  // inside the window, in time order (adds before removes at a tie)
  std::int64_t dropped_changes = 0;     // beyond max_changes: not listed, still counted in active_after
};

// The executors alive at `window.start_ms` and every change inside (start, end]. At most
// `max_changes` are listed: a dynamic-allocation application can add and remove thousands.
ExecutorTimeline ExecutorsDuring(const ApplicationModel& model, TimeWindow window,
                                 std::size_t max_changes = 512);

}  // namespace sparktrace::listener::correlate
