#pragma once
// What an application, and each of its Spark Connect operations, cost in `sparktrace diagnose`: the
// cost model (diagnose/cost/cost_model.h) over the inputs read from the listener's model
// (diagnose/cost_of_model.h), the figures the attempt page shows for the same events.
//
//   application  the application's executors and driver over its whole window (share 1)
//   operation    as a task attempt made of that one operation: on a shared Spark Connect server,
//                charged at its tasks' share of the task time in its window
//
// Pure functions of the model; thread-safe for concurrent readers of one model.

#include <optional>
#include <string>
#include <string_view>

#include "diagnose/cost/cost_model.h"
#include "listener/correlate/application_model.h"

namespace sparktrace::cli::diagnose {

// nullopt without a window (no ApplicationStart, or an operation that never ran).
std::optional<sparktrace::diagnose::cost::AttemptCost> ApplicationCost(
    const listener::correlate::ApplicationModel& model, const sparktrace::diagnose::cost::CostPrices& prices);
std::optional<sparktrace::diagnose::cost::AttemptCost> OperationCost(
    const listener::correlate::ApplicationModel& model, std::string_view operation_id,
    const sparktrace::diagnose::cost::CostPrices& prices);

// One line for the text report: "1,234 core-s allocated (812 used, 34% idle), 2,048 GiB-s; 0.0512 in
// money (cores 0.0412, memory 0.0100)", with the basis when shared.
std::string CostLine(const sparktrace::diagnose::cost::AttemptCost& cost);

}  // namespace sparktrace::cli::diagnose
