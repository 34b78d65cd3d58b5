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
// The cores (for the cost model, attempt_cost.h) are known only when every fact carries them:
// spans stored before sparktrace wrote them have counts only.
//
// Every span describes the same application-wide count, so the facts of all spans are merged into
// one series (concurrent operations repeat the same executor events).
//
// Pure functions; thread-safe.

#include <cstdint>
#include <span>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::traceview {

struct ExecutorPoint {
  double t_ms = 0;  // epoch milliseconds; the count holds from here to the next point
  int count = 0;
  std::int64_t cores = 0;  // 0 unless the series' cores_known
};

struct ExecutorSeries {
  bool known = false;        // false when no span carries any of the facts (then no points)
  bool cores_known = false;  // every fact carries the cores
  int max = 0;               // the largest count within the window
  std::vector<ExecutorPoint> points;
};

// Points in strictly increasing time, none with the count and cores of the point before, except the last,
// which is always at end_ms. The first is at start_ms, with the count known then (the latest fact
// at or before start_ms), else the count the earliest fact implies before it (a start count
// itself; one fewer than after an add, one more than after a removal). Facts after end_ms are
// left out; an end before the start is taken as the start (one point).
ExecutorSeries ComputeExecutorSeries(std::span<const tracing::Span> spans, double start_ms, double end_ms);

}  // namespace sparktrace::traceview
