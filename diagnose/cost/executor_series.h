#pragma once
// The executors an application had alive over a window, as a step function: the cost model's input
// (cost_model.h) and the trace view's executor lane. Built from facts, each a count known at an
// instant; the adapters read the facts from spans (traceview/executor_series.h) or from the
// listener's model (diagnose/cost_of_model.h).
//
// Every fact describes the same application-wide count, so facts of several sources (concurrent
// operations repeat the same executor changes) merge into one series.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <vector>

namespace sparktrace::diagnose::cost {

struct ExecutorPoint {
  double t_ms = 0;  // epoch milliseconds; the count holds from here to the next point
  int count = 0;
  std::int64_t cores = 0;  // 0 unless the series' cores_known
};

struct ExecutorSeries {
  bool known = false;        // false when there was no fact (then no points)
  bool cores_known = false;  // every fact carries the cores
  int max = 0;               // the largest count within the window
  std::vector<ExecutorPoint> points;
};

// One known count. At one instant a start count comes before the changes made then.
struct ExecutorFact {
  double t_ms = 0;
  bool is_change = false;  // false: the count alive at the start of a source's window
  int count = 0;
  int count_before = 0;               // just before t_ms, as far as this fact tells
  std::optional<std::int64_t> cores;  // likewise for the cores, when the fact carries them
  std::optional<std::int64_t> cores_before;
};

// Points in strictly increasing time, none with the count and cores of the point before, except the
// last, which is always at end_ms. The first is at start_ms, with the count known then (the latest
// fact at or before start_ms), else the count the earliest fact implies before it (its
// count_before). Facts after end_ms are left out; an end before the start is taken as the start
// (one point). `facts` in any order: sorted here, stable, so changes at one instant keep the order
// their source listed them in.
ExecutorSeries ExecutorSeriesOfFacts(std::vector<ExecutorFact> facts, double start_ms, double end_ms);

// A count read from a log or a span, clamped into an int (negative: 0).
int ClampedExecutorCount(std::int64_t count);

}  // namespace sparktrace::diagnose::cost
