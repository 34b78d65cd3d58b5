#pragma once
// The `what_if` object, one shape wherever estimates are written: `sparktrace diagnose --json`
// (per application and per Spark Connect operation) and the trace view's attempt JSON.
//
//   {"anchoring": "ratio",
//    "estimates": [{"name": "executors-8", "label": "with 8 executors from the start",
//                   "sentence": "with 8 executors from the start: ~1 min 52 s instead of 5 min 4 s",
//                   "executors": 8 | null, "slots": 32,
//                   "estimated_ms": 112000, "measured_ms": 304000, "saving_ms": 192000,
//                   "simulated_ms": ..., "simulated_today_ms": ...,
//                   "answers": ["slow-spark-jobs"]}...],
//    "replay": {"settled_at_ms", "jobs", "measured_ms", "simulated_ms"} | null}
//
// Milliseconds are rounded to whole numbers. Pure functions; thread-safe.

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "diagnose/what_if/what_if_estimates.h"

namespace sparktrace::diagnose::what_if {

nlohmann::ordered_json EstimateToJson(const WhatIfEstimate& estimate);
// null when there is no estimate (no job with a stage, or no executor ever).
nlohmann::ordered_json WhatIfToJson(const std::vector<WhatIfEstimate>& estimates,
                                    const std::optional<ReplayCheck>& replay,
                                    Anchoring anchoring = Anchoring::kRatio);

}  // namespace sparktrace::diagnose::what_if
