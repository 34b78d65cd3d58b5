#pragma once
// The exclusive breakdown of one attempt's wall time (docs/trace-view-api.md, "The breakdown"):
// every instant from the earliest span start to the latest span end gets exactly one phase, the
// first of these that holds:
//
//   resource_wait, io_write, compute   a spark.phase.* span covers it (the driver's phase model;
//                                      spark.phase.idle spans decide nothing themselves)
//   result_transfer   an operation that returns rows (spark.connect.result.rows > 0, or plan kind
//                     "root" with the rows unknown) has ended its last spark.job child and has not
//                     ended itself: the results stream to the client
//   idle              Spark work is in flight: an operation, lifecycle, RPC, job, stage or
//                     application span (the driver analyses, plans, commits or waits)
//   client            nothing in flight: the task's own code between calls, before the first and
//                     after the last
//
// Pure functions; thread-safe. O(n log n) in the number of spans.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tracing/span.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {

// The phases, their names and labels are the vocabulary's (tracing/span_vocabulary.h), in the API's
// order (docs/trace-view-api.md); Breakdown::ms is indexed by them.
using tracing::kViewPhaseCount;
using tracing::ViewPhase;
using tracing::ViewPhaseLabel;
using tracing::ViewPhaseName;

struct PhaseInterval {
  ViewPhase phase = ViewPhase::kClient;
  double start_ms = 0;  // epoch milliseconds
  double end_ms = 0;
};

struct Breakdown {
  double start_ms = 0;                       // the earliest span start, epoch milliseconds
  double end_ms = 0;                         // the latest span end
  std::array<double, kViewPhaseCount> ms{};  // indexed by ViewPhase; sums to wall_ms()
  // Time order, contiguous, covering [start_ms, end_ms]; adjacent intervals differ in phase.
  std::vector<PhaseInterval> intervals;

  double wall_ms() const { return end_ms - start_ms; }
};

// Spans of one attempt, in any order. No spans: an empty breakdown (all zero).
Breakdown ComputeBreakdown(std::span<const tracing::Span> spans);

}  // namespace sparktrace::traceview
