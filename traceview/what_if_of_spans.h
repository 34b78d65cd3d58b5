#pragma once
// What-if estimates (diagnose/what_if) for one task attempt, from its stored spans, for the trace
// view: the simulator's input is rebuilt from
//
//   spark.job spans     spark.job.id; submission and completion = the span's start and end
//   spark.stage spans   children of a job span: spark.stage.id, .parent_ids, .tasks_ended,
//                       .failed_tasks, .killed_tasks, .task_duration_ms.profile (21 quantiles;
//                       tasks are synthesised from it), .input_bytes, .shuffle_read_bytes,
//                       .output_bytes, .output_records; attempts of one stage id are merged
//   executor facts      the executor lane's series (executor_series.h): slots = the cores alive
//                       (spark.task.cpus is not on the spans: one core per task is assumed)
//
// A stage span without a profile (stored before sparktrace wrote one) falls back to its p50/p95/
// max as a coarse profile. No estimate without the executors' cores, or without a job that ran a
// stage.
//
// Pure functions; thread-safe.

#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "diagnose/what_if/what_if_estimates.h"
#include "diagnose/what_if/what_if_input.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// The attempt's window is [start_ms, end_ms] (epoch milliseconds).
diagnose::what_if::AttemptInput WhatIfInputOfSpans(std::span<const tracing::Span> spans, double start_ms,
                                                   double end_ms);

// EstimateWhatIf(WhatIfInputOfSpans(...)): empty when none can be made.
std::vector<diagnose::what_if::WhatIfEstimate> EstimatesOfSpans(std::span<const tracing::Span> spans,
                                                                double start_ms, double end_ms);

// The `what_if` JSON object (diagnose/what_if/what_if_json.h) with the replay check, or null.
nlohmann::ordered_json WhatIfJsonOfSpans(std::span<const tracing::Span> spans, double start_ms,
                                         double end_ms);

}  // namespace sparktrace::traceview
