#pragma once
// What-if estimates (issue 22): the attempt's wall time on another cluster, each scenario
// simulated (schedule_simulator.h) and anchored to what was measured.
//
// Scenarios:
//   executors-ready        the attempt's peak slots available from its start (no resource wait,
//                          no ramp-up), and the driver's wait for its first executor before the
//                          first job left out (LeadWithoutSlots). Answers resource-wait-long.
//   executors-N            N executors (of the most common size) from the start, for N in ½×, 1×,
//                          2×, 4× today's peak executors (at least 1, deduplicated), the first
//                          executor's wait left out as above. Fewer answer
//                          idle-executors (what giving executors back would cost), more answer
//                          slow-spark-jobs (what buying them would save); 1× is in neither list
//                          beyond resource-wait-long.
//   write-at-compute-pace  only when a stage wrote output: each writing stage's tasks take, per
//                          byte they read (input + shuffle read), the task time per byte read of
//                          the attempt's non-writing stages, pooled (its compute pace), when that
//                          is shorter than they took; on today's slots. The driver's commit after
//                          the write (the job's tail) is kept as measured: a log does not say what
//                          a faster committer would take. Needs ≥ 1 non-writing stage that read
//                          ≥ 1 MiB, and a writing stage that read bytes. Answers s3-write-slow.
//
// Anchoring (kRatio, the default; bench/diagnose_eval.py measures all three on the same estimates):
//   ratio       (measured − lead) × simulated scenario / (simulated today − lead), lead being the
//               driver's wait for its first executor that the scenario leaves out (LeadWithoutSlots;
//               0 for the write scenario): the simulator's bias (its tasks have no scheduling delay,
//               no stage overhead, no locality) scales with the simulated work and cancels in the
//               ratio, while a removed wait, which is not simulated, is subtracted exactly (the
//               saving of executors-ready is then the resource-wait-long finding's wait whenever the
//               executors, once there, were already the peak).
//   difference  measured − (simulated today − simulated scenario): the estimate moves by exactly the
//               simulated saving.
//   raw         the simulated scenario itself.
// On the evaluation's simulator pairs (bench/results/what_if.json, 144 estimates) ratio had the
// smallest errors: median 0.7 %, p90 4.3 %, against 1.0 % / 5.1 % for difference and 1.2 % / 5.2 %
// for raw; the stragglers of skewed stages (whose order the simulator cannot know) account for
// most of the larger ones.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/what_if/what_if_input.h"

namespace sparktrace::diagnose::what_if {

enum class Anchoring : std::uint8_t { kRatio, kDifference, kRaw };

struct WhatIfEstimate {
  std::string name;   // "executors-ready", "executors-8", "write-at-compute-pace"
  std::string label;  // "with executors ready at the start", "with 8 executors from the start", ...
  std::optional<std::int64_t> executors;  // executors-N: N
  std::int64_t slots = 0;                 // the scenario's peak task slots
  double estimated_ms = 0;
  double measured_ms = 0;            // today's wall time of the attempt (its window)
  double saving_ms = 0;              // measured − estimated (negative: it would take longer)
  double simulated_ms = 0;           // raw simulation of the scenario
  double simulated_today_ms = 0;     // raw simulation of today's cluster
  std::vector<std::string> answers;  // ids of the findings it answers
};

// A check of the simulator against the log itself: the job groups that started after the
// executors had all arrived (the slots first reached their peak) ran as "executors ready at the
// start" supposes; the simulation of just those groups on the peak slots, raw, against their
// measured spans. nullopt when the slots never grew after the start, or no group started after.
struct ReplayCheck {
  double settled_at_ms = 0;  // when the slots first reached their peak
  std::int64_t jobs = 0;
  double measured_ms = 0;  // Σ measured spans of those job groups
  double simulated_ms = 0;
};

struct WhatIfOptions {
  Anchoring anchoring = Anchoring::kRatio;
};

// Empty when the attempt has no job with a stage, or no slot was ever alive.
std::vector<WhatIfEstimate> EstimateWhatIf(const AttemptInput& input, const WhatIfOptions& options = {});
std::optional<ReplayCheck> CheckAgainstSettledJobs(const AttemptInput& input);

// The write scenario's per-stage factors (stage id → factor < 1); empty when it does not apply.
std::vector<std::pair<std::int32_t, double>> WriteAtComputePace(const AttemptInput& input);

// "~1 min 52 s", "~45 s", "~2 h 5 min": a rounded duration for the report's sentences.
std::string RoughDuration(double ms);
// "with 8 executors from the start: ~1 min 52 s instead of 5 min 4 s"
std::string EstimateSentence(const WhatIfEstimate& estimate);

}  // namespace sparktrace::diagnose::what_if
