#pragma once
// The first half of planning a stage (operation_planner.h): drafting what each of its tasks' attempts
// would do, with metrics and duration, if its executor survives, shaped by the scenario's knobs (GC,
// spill, skew, fetch waits, slow writes, failing attempts). Scheduling the drafts onto executors is
// stage_scheduler.h's; the operation's timeline is the planner's.
//
// Deterministic: the same random source and knobs give the same drafts; every draw is made whatever
// the knobs' strength, so that strength 0 reproduces the clean plan.
//
// Threads: pure functions of their arguments, except for the random source they draw from.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/eventlog/operation_plan.h"
#include "sim/eventlog/random_source.h"
#include "sim/eventlog/scenario.h"
#include "sim/eventlog/whole_number.h"

namespace sparktrace::sim::eventlog {

// The tasks of an operation of this size (OperationSize) and the input each map task reads.
struct SizeShape {
  int map_tasks;
  int result_tasks;
  double input_bytes_per_map_task;
};

SizeShape ShapeOf(OperationSize size);

// One attempt as drafted before scheduling: what it would do if its executor survives.
struct AttemptDraft {
  TaskOutcome outcome = TaskOutcome::kSuccess;
  double duration_ms = 0;  // launch → finish
  TaskMetricsPlan metrics;
  std::string exception_class;
  std::string exception_message;
};

struct StageDraft {
  std::vector<std::vector<AttemptDraft>> attempts;  // per task index, in attempt order
};

// The failing first attempt of a task (or all attempts of a task failing for good): `success` cut
// short at `fraction` of its duration, its writes not committed, failing with an IOException or, when
// `out_of_memory`, an OutOfMemoryError.
AttemptDraft FailedAttempt(const AttemptDraft& success, double fraction, bool out_of_memory);

// The shuffle-map stage: scan, partial aggregation and shuffle write, one task per input split.
StageDraft DraftMapStage(RandomSource& random, const ScenarioKnobs& knobs, const SizeShape& shape);
// The result stage: reads `shuffle_bytes_total` (a share of it remote across `executors`), skewed on
// a few tasks when the scenario injects skew, and writes output when `writes`.
StageDraft DraftResultStage(RandomSource& random, const ScenarioKnobs& knobs, const SizeShape& shape,
                            double shuffle_bytes_total, bool writes, int executors);

}  // namespace sparktrace::sim::eventlog
