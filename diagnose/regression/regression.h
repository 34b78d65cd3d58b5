#pragma once
// The `regression` finding (docs/diagnose-rules.md, "regression"): an attempt markedly slower than
// its baseline — the median of the earlier successful runs of the same task that the history panel
// computes (history.h) — named with the phase that grew most. The page finds it when it is asked
// for, from the store's history (only the store knows the earlier runs); `sparktrace diagnose
// --regressions` among the logs it reads, the logs of one application name being one job's runs.
//
// Pure functions; thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "diagnose/regression/history.h"

namespace sparktrace::diagnose::regression {

// Both must hold: slower by at least this share of the baseline, and by at least this much time
// (a 30 s task 40 % slower is noise; a 2 h task 3 % slower is not a regression either).
struct RegressionThresholds {
  double min_ratio = 0.25;
  double min_seconds = 60;
};

struct Regression {
  std::size_t baseline_runs = 0;
  double current_ms = 0;
  double median_ms = 0;
  double delta_ms = 0;            // current_ms - median_ms
  std::vector<PhaseDelta> grown;  // phases that took longer than their median, largest first
  bool critical = false;          // at least twice the baseline
};

// The regression of the current run of `history`, or nullopt: no baseline (no earlier successful
// run), the current run not finished (`finished` false), or under either threshold.
std::optional<Regression> DetectRegression(const History& history, bool finished,
                                           const RegressionThresholds& thresholds = {});

// "took 12m 05s, 58 % longer than its median of 7m 40s over 5 successful runs; resource wait grew
// most (+3m 10s)". Durations as the trace view writes them.
std::string RegressionTitle(const Regression& regression);

// One line per grown phase: "resource wait: 4m 10s against a median of 1m 00s (+3m 10s)".
std::vector<std::string> RegressionEvidence(const Regression& regression);

}  // namespace sparktrace::diagnose::regression
