#pragma once
// The cost model's inputs (diagnose/cost/cost_model.h) read from an attempt's spans: the executors
// over time (executor_series.h), the executors' and the driver's resources, the task time of its
// stages and, on a shared Spark Connect server, the windows it is charged for (the facts the span
// builder puts on lifecycle spans: tracing/span_vocabulary.h). docs/trace-view-api.md ("Cost").
//
// Pure function; thread-safe.

#include <span>

#include "diagnose/cost/cost_model.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// The inputs of an attempt made of `spans`, over its window [start_ms, end_ms].
diagnose::cost::CostInputs CostInputsOfSpans(std::span<const tracing::Span> spans, double start_ms,
                                             double end_ms);

}  // namespace sparktrace::traceview
