#pragma once
// What an application, and each of its Spark Connect operations, cost in `sparktrace diagnose`:
// the model's spans are built as the live feed builds them (listener/correlate/span_builder.h) and
// costed by the trace view's model (traceview/attempt_cost.h), so that the figures are the ones the
// attempt page would show for the same events.
//
//   application  the application's executors and driver over its whole window (share 1)
//   operation    as a task attempt made of that one operation: on a shared Spark Connect server,
//                charged at its tasks' share of the task time in its window
//
// Pure functions of the model; thread-safe for concurrent readers of one model.

#include <optional>
#include <string>
#include <string_view>

#include "listener/correlate/application_model.h"
#include "traceview/attempt_cost.h"

namespace sparktrace::cli::diagnose {

// nullopt without a window (no ApplicationStart, or an operation that never ran).
std::optional<traceview::AttemptCost> ApplicationCost(const listener::correlate::ApplicationModel& model,
                                                      const traceview::CostPrices& prices,
                                                      bool application_over);
std::optional<traceview::AttemptCost> OperationCost(const listener::correlate::ApplicationModel& model,
                                                    std::string_view operation_id,
                                                    const traceview::CostPrices& prices,
                                                    bool application_over);

// One line for the text report: "1,234 core-s allocated (812 used, 34% idle), 2,048 GiB-s; 0.0512 in
// money (cores 0.0412, memory 0.0100)", with the basis when shared.
std::string CostLine(const traceview::AttemptCost& cost);

}  // namespace sparktrace::cli::diagnose
