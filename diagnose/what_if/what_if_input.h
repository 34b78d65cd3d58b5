#pragma once
// The what-if simulator's input (issue 22): one attempt's own jobs, their stages and the
// durations of their tasks, and the cluster it ran on as task slots over time. Plain values, so
// that the diagnosis (from the listener's model, diagnose/what_if_of_model.h) and the trace view
// (from stored spans, traceview/what_if_of_spans.h) can both build one without this library
// knowing either.
//
// Times are epoch milliseconds as doubles (spans carry nanoseconds, the model milliseconds).

#include <cstdint>
#include <vector>

namespace sparktrace::diagnose::what_if {

struct StageInput {
  std::int32_t stage_id = 0;
  // The stages it reads from. Parents that are not stages of the same job (skipped, or computed by
  // an earlier job) count as done when the job starts.
  std::vector<std::int32_t> parent_ids;
  // Successful tasks the stage ran (every attempt of the stage together).
  std::int64_t task_count = 0;
  // Durations (launch → finish) of its successful tasks. Either all of them, in the order they
  // ended (then the simulator keeps that order), or fewer (a reservoir sample, a quantile
  // profile): then task_count durations are drawn by rank from them, in a fixed shuffled order.
  std::vector<std::int64_t> task_ms;
  // Instead of task_ms (when that is empty): quantiles of the durations at evenly spaced q from 0
  // (the minimum) to 1 (the maximum), as a stage span's spark.stage.task_duration_ms.profile; the
  // task of rank r takes the profile's value at q = (r + ½) / task_count, interpolated linearly.
  std::vector<std::int64_t> duration_profile;
  double submission_ms = 0;
  double completion_ms = 0;
  // For the write scenario: the stage wrote output (Output Metrics), the bytes its tasks read
  // (input + shuffle read) and the task time it took (Σ launch → finish of successful tasks).
  bool writes_output = false;
  std::int64_t read_bytes = 0;
  std::int64_t task_time_ms = 0;
};

struct JobInput {
  std::int32_t job_id = 0;
  double submission_ms = 0;
  double completion_ms = 0;
  std::vector<StageInput> stages;  // the stages that ran for it, by stage id; skipped ones are absent
};

// The task slots (executor cores / spark.task.cpus) alive from `at_ms` until the next step.
struct SlotStep {
  double at_ms = 0;
  std::int64_t slots = 0;
};

struct AttemptInput {
  double start_ms = 0;  // the attempt's window (an application, or one Spark Connect operation)
  double end_ms = 0;
  std::vector<JobInput> jobs;
  // Today's cluster: steps in time order; no slot before the first step.
  std::vector<SlotStep> slots;
  // Slots one executor gives (its cores / spark.task.cpus, the most common size), and the most
  // executors alive at once within the window: the unit and the reference of "N executors".
  std::int64_t slots_per_executor = 0;
  std::int64_t peak_executors = 0;
};

// The largest slot count of `slots`, and the first time it is reached (start_ms when empty).
std::int64_t PeakSlots(const std::vector<SlotStep>& slots);
double FirstPeakMs(const std::vector<SlotStep>& slots, double start_ms);

}  // namespace sparktrace::diagnose::what_if
