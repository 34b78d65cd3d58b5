#pragma once
// The executor lane: how many executors the application had alive over the view's window, as a
// step function, from the facts the span builder puts on spark.connect.operation.lifecycle and
// spark.application spans (read from any span that has them):
//
//   attribute spark.executors.active_at_start   int, alive at the span's start
//   attribute spark.executors.cores_at_start    int, their cores
//   events spark.executor.added / spark.executor.removed, with spark.executors.active (int, alive
//   right after the change), spark.executors.cores_active (their cores), spark.executor.id,
//   spark.executor.cores
//
// The cores (for the cost model, diagnose/cost/cost_model.h) are known only when every fact carries them:
// spans stored before sparktrace wrote them have counts only.
//
// Every span describes the same application-wide count, so the facts of all spans are merged into
// one series (concurrent operations repeat the same executor events).
//
// Pure functions; thread-safe.

#include <cstdint>
#include <span>
#include <vector>

#include "diagnose/cost/executor_series.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// The series type is the cost model's (the lane and the cost read one series).
using diagnose::cost::ExecutorPoint;
using diagnose::cost::ExecutorSeries;

// The series of the spans' facts over [start_ms, end_ms] (diagnose::cost::ExecutorSeriesOfFacts says
// how facts make points).
ExecutorSeries ComputeExecutorSeries(std::span<const tracing::Span> spans, double start_ms, double end_ms);

}  // namespace sparktrace::traceview
