#pragma once
// The small sections of the attempt JSON (attempt_json.h), built as nlohmann trees: the links to other
// tries and runs, the Airflow task, the breakdown, the cost and the history. Apart from AttemptJson,
// which writes the large parts (the spans, the critical path) straight to text and puts these in.
//
// Pure functions; thread-safe.

#include <nlohmann/json.hpp>
#include <optional>
#include <span>

#include "diagnose/regression/history.h"
#include "traceview/airflow_task_view.h"
#include "traceview/attempt_json.h"
#include "traceview/breakdown.h"
#include "traceview/cost_of_spans.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

nlohmann::ordered_json LinkJson(const AttemptLink& link);
// The runs, the baseline with the current run's wall-time delta, and the phase comparison.
nlohmann::ordered_json HistoryJson(const diagnose::regression::History& history);
// Null when the attempt has no Airflow task span.
nlohmann::ordered_json AirflowTaskJson(const std::optional<AirflowTaskView>& task);
nlohmann::ordered_json BreakdownJson(const Breakdown& breakdown);
// The attempt's cost (diagnose/cost/cost_model.h); null when the spans cannot tell the executors' cores.
nlohmann::ordered_json CostJson(std::span<const tracing::Span> spans, const Breakdown& breakdown,
                                const diagnose::cost::CostPrices& prices);

}  // namespace sparktrace::traceview
