#pragma once
// A list-scheduler simulation of one attempt's jobs on a given cluster, in the manner of
// Sparklens' simulator (its idea, our own code): what the attempt's wall time would have been if
// its tasks, with the durations the event log measured, had been scheduled on other task slots.
//
// The model:
//   * Jobs keep their order. Jobs whose measured runs overlap (concurrent sessions or async
//     actions) form one group and are simulated together, sharing the slots, each starting at
//     its measured offset from the group's start. The driver's time between groups (and before
//     the first, after the last) is kept as measured: the simulator moves only executor work.
//   * Within a job a stage becomes runnable when its parents in the job have finished, plus the
//     driver's measured delay between the last parent's completion and its submission; a stage
//     without parents in the job, at the job's start plus its measured submission delay. A job
//     ends at its last stage's end plus its measured tail (the driver's commit, result handling).
//   * Tasks go to free slots one at a time, runnable stages served in Spark's FIFO order (job,
//     then stage id); a task runs on one slot for its measured duration; a slot lost while a task
//     runs lets it finish (no preemption, no retries: failed attempts are not replayed).
//   * Slots are a step function of wall-clock time (executors arrive at their own times). If
//     work is pending, nothing runs and no slot will ever come, one slot is assumed.
//
// Bounded work: a stage is simulated in at most UnitsPerStage(peak slots) units, each the sum of
// a share of its tasks (strided over the durations ranked, so units are alike). With more tasks
// than units (kMinUnitsPerStage 4096, or 4 × the scenario's peak slots if more) a unit stands
// for ⌈tasks / units⌉ tasks; a million-task stage on 400 slots is simulated as 4096 units, so time
// and memory grow with the units, not the tasks (synthesising durations is one pass over them).
//
// Pure functions; thread-safe.

#include <cstdint>
#include <vector>

#include "diagnose/what_if/what_if_input.h"

namespace sparktrace::diagnose::what_if {

inline constexpr std::int64_t kMinUnitsPerStage = 4096;
std::int64_t UnitsPerStage(std::int64_t task_count, std::int64_t peak_slots);

struct SimulationOptions {
  std::vector<SlotStep> slots;  // the cluster to simulate, as AttemptInput::slots
  // Task durations of writing stages are multiplied by their factor (stage id → factor in (0, 1]);
  // stages not listed keep theirs.
  std::vector<std::pair<std::int32_t, double>> stage_scale;
  // Driver time before the first job to leave out: the scenarios "from the start" remove the wait
  // for the first executor that held the first job back (LeadWithoutSlots).
  double skip_lead_ms = 0;
};

// The time from the start to the first slot when that came before the first job (0 when slots
// were there from the start, or came only after the first job was submitted: then the driver was
// not waiting, and the simulated stages wait instead). Spark's driver holds the first
// job back until executors register (spark.scheduler.minRegisteredResourcesRatio), so this wait
// is resource wait (as the phase model counts it) though no stage is pending.
double LeadWithoutSlots(const AttemptInput& input);

struct SimulationResult {
  double wall_ms = 0;             // the attempt's window length with the simulated job groups
  double job_groups_ms = 0;       // Σ simulated spans of the job groups (the part simulated)
  double measured_groups_ms = 0;  // Σ measured spans of the same groups
  std::int64_t units = 0;         // task units scheduled
};

SimulationResult Simulate(const AttemptInput& input, const SimulationOptions& options);

// The units a stage is simulated in: durations of `units` groups of its tasks (see above).
std::vector<double> StageUnits(const StageInput& stage, std::int64_t units);

}  // namespace sparktrace::diagnose::what_if
