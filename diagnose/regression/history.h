#pragma once
// History and the baseline (docs/trace-view-api.md, "History and the baseline"): the recent runs
// of one job with their wall time in the six phases of the trace view's breakdown, and how the
// current run compares with the median of the earlier successful ones. The runs come from two
// adapters: the attempts of the same dag, task and map index, from their spans, for the page
// (traceview/regression_of_spans.h); the logs of one application name, from the listener's model,
// for `sparktrace diagnose --regressions` (diagnose/regression_of_model.h).
//
// Pure functions; thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracing/span_vocabulary.h"

namespace sparktrace::diagnose::regression {

using tracing::kViewPhaseCount;
using tracing::ViewPhase;

struct RunSummary {
  std::string run_id;
  std::int64_t try_number = 1;
  std::string state;    // "running", "success", "failed"
  double start_ms = 0;  // epoch milliseconds
  double wall_ms = 0;
  std::array<double, kViewPhaseCount> phases{};  // indexed by ViewPhase
  std::string href;
  bool current = false;  // the attempt being viewed
};

struct Baseline {
  std::size_t runs = 0;  // how many runs the medians are over
  double median_wall_ms = 0;
  std::array<double, kViewPhaseCount> phases{};  // each phase's median, indexed by ViewPhase
};

struct PhaseDelta {
  ViewPhase phase = ViewPhase::kClient;
  double current_ms = 0;
  double median_ms = 0;
  double delta_ms = 0;  // current_ms - median_ms
};

struct History {
  std::vector<RunSummary> runs;  // oldest first
  std::optional<Baseline> baseline;
  std::vector<PhaseDelta> comparison;  // all six phases in ViewPhase order, only with a baseline
};

// `runs` in any order, the current attempt among them (current = true; the first such counts).
// Keeps the latest max_runs by start (ties by run id, then try), and the current one always, in
// place of the oldest kept. The baseline is over the kept runs with state "success" that started
// before the current one, the current one left out; none without a current run or such a run.
// Medians of an even count are the mean of the two middle values.
History ComputeHistory(std::vector<RunSummary> runs, std::size_t max_runs = 30);

}  // namespace sparktrace::diagnose::regression
