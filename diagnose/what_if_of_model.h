#pragma once
// The what-if simulator's input (diagnose/what_if/what_if_input.h) from the listener's model:
// an application's, or one Spark Connect operation's, jobs with the stage attempts they ran
// (attempts of one stage merged: their successful tasks' durations together, the first
// submission, the last completion), and the task slots of the executors over time.
//
// Slots: every executor's cores from its ExecutorAdded to its ExecutorRemoved, over
// spark.task.cpus. A log without executor events (Spark 1.x local mode) has no slots, and then no
// estimate is made.
//
// Pure functions over a model that must outlive nothing (the input copies what it needs);
// thread-safe for concurrent readers of one model.

#include <cstdint>
#include <vector>

#include "diagnose/what_if/what_if_input.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"

namespace sparktrace::diagnose {

// The jobs `job_ids` of `model` in `window`. A job still running at the window's end ends there.
what_if::AttemptInput WhatIfInputOf(const listener::correlate::ApplicationModel& model,
                                    listener::correlate::TimeWindow window,
                                    const std::vector<std::int32_t>& job_ids);
// Every job of the application in its window; empty input when its start is unknown.
what_if::AttemptInput WhatIfInputOfApplication(const listener::correlate::ApplicationModel& model);
// The operation's jobs in its window (phases.h: OperationWindow).
what_if::AttemptInput WhatIfInputOfOperation(const listener::correlate::ApplicationModel& model,
                                             const listener::correlate::ConnectOperationRecord& operation);

}  // namespace sparktrace::diagnose
