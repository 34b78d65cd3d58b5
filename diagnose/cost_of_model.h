#pragma once
// The cost model's inputs (diagnose/cost/cost_model.h) read from the listener's model, for
// `sparktrace diagnose`: the same facts the trace view reads from the spans the live feed builds of
// the same events (traceview/cost_of_spans.h), taken where the span builder takes them, so that
// the page and the report give equal figures (tests/unit/diagnose/cost_of_model_test.cc checks it
// on every real log). No spans are built.
//
//   application  the application's executors and driver over its whole window (share 1)
//   operation    as a task attempt made of that one operation: on a shared Spark Connect server,
//                charged at its tasks' share of the task time in its window
//
// Pure functions of the model; thread-safe for concurrent readers of one model.

#include <optional>
#include <string_view>

#include "diagnose/cost/cost_model.h"
#include "listener/correlate/application_model.h"

namespace sparktrace::diagnose {

// nullopt without a window (no ApplicationStart).
std::optional<cost::CostInputs> ApplicationCostInputs(const listener::correlate::ApplicationModel& model);

// nullopt for an operation the model does not know or that never ran (no window).
std::optional<cost::CostInputs> OperationCostInputs(const listener::correlate::ApplicationModel& model,
                                                    std::string_view operation_id);

}  // namespace sparktrace::diagnose
