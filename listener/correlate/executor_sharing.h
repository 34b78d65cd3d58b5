#pragma once
// ExecutorSharing: how much of the application's task time during one Connect operation belonged
// to others — the other operations running on the same (shared) Spark Connect server, and jobs of
// no operation — so that the cost model can split the executors by each one's share of the task
// time (diagnose/cost/cost_model.h).
//
// Each stage attempt's executor run time is prorated to the part of the stage inside the window
// (tasks are assumed spread evenly over the stage); a stage still running counts what its ended
// tasks ran. Stages the model has forgotten (retention) are not counted.
//
// Pure function of the model; thread-safe for concurrent readers of one model.

#include <cstdint>
#include <string_view>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"

namespace sparktrace::listener::correlate {

struct ExecutorSharing {
  std::int64_t others_run_time_ms = 0;  // executor run time of the other stages, inside the window
  std::int64_t other_operations = 0;    // distinct other operations among them
};

// `now_ms`: the end of a stage still running.
ExecutorSharing SharingDuring(const ApplicationModel& model, std::string_view operation_id, TimeWindow window,
                              events::EpochMillis now_ms);

}  // namespace sparktrace::listener::correlate
