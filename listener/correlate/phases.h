#pragma once
// The phase model: where the wall-clock time of an application, or of one Spark Connect
// operation, went. Every millisecond of a window is in exactly one phase, decided by what the
// driver's events say was true at that instant, in this order of precedence:
//
//   resource_wait  the application had no executor yet (application start → first ExecutorAdded),
//                  or at least one stage attempt of the window was running (submitted, not
//                  completed) while no executor was alive (all removed, none added yet): work
//                  was waiting for resources.
//   io_write       at least one running stage attempt writes output: its tasks reported output
//                  bytes or records (Output Metrics: files, tables, JDBC), or, for an operation
//                  the caller knows to be a write command (the proxy sees the plan's command),
//                  it is the result stage of one of the operation's jobs (the job's highest stage
//                  id: Spark creates parent stages first), where Spark runs the write tasks; this
//                  covers writers that report no Output Metrics (many DataSource V2 writers).
//                  Shuffle writes are compute, not io_write.
//   compute        at least one stage attempt was running (and none of the above).
//   idle           no stage attempt was running: driver work (analysis, planning, commit of a
//                  write, result streaming) or no work at all.
//
// A stage attempt runs from its submission time (else its first task's launch) to its completion
// time; one that has not completed runs to the end of the window. "Executors" are those of
// ExecutorAdded/ExecutorRemoved; a log without any ExecutorAdded (Spark 1.x local mode) has no
// executor information, and then nothing is resource_wait.
//
// Windows: for an application, [ApplicationStart, ApplicationEnd] (or the latest event time while
// the log is still being written), with every stage attempt. For an operation, [start, end]: start
// is its Started event (else its first job's submission); end is the first of Finished/Failed/
// Canceled, else Closed, else the latest time of its jobs, and at least the end of its last job
// (jobs can outlive a cancellation). Only the stage attempts of that operation's
// jobs (a concurrent operation's stages are its own business: two interleaved sessions do not
// count each other's stages).
//
// Pure functions over an ApplicationModel; thread-safe for concurrent readers of one model.

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "listener/correlate/application_model.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::listener::correlate {

// The vocabulary's one phase enum (tracing/span_vocabulary.h), under the model's name.
using Phase = tracing::SparkPhase;
inline constexpr std::size_t kPhaseCount = tracing::kSparkPhaseCount;
// "resource_wait", "compute", "io_write", "idle" (span names add the prefix "spark.phase.").
constexpr std::string_view PhaseName(Phase phase) { return tracing::SparkPhaseName(phase); }

struct TimeWindow {
  events::EpochMillis start_ms = 0;
  events::EpochMillis end_ms = 0;
};

// A maximal run of one phase: adjacent intervals of the same phase are merged.
struct PhaseInterval {
  Phase phase = Phase::kIdle;
  events::EpochMillis start_ms = 0;
  events::EpochMillis end_ms = 0;
};

struct PhaseBreakdown {
  TimeWindow window;
  std::array<std::int64_t, kPhaseCount> total_ms{};  // indexed by Phase; sums to the window length
  std::vector<PhaseInterval> intervals;              // in time order, covering the window

  std::int64_t TotalMs(Phase phase) const { return total_ms[static_cast<std::size_t>(phase)]; }
};

// nullopt when the application's start is unknown (no ApplicationStart yet).
std::optional<TimeWindow> ApplicationWindow(const ApplicationModel& model);
// nullopt when neither the operation's Started event nor any of its jobs gives a start.
std::optional<TimeWindow> OperationWindow(const ApplicationModel& model,
                                          const ConnectOperationRecord& operation);

// The breakdown of `window` over the given stage attempts (see the definitions above). Stage
// attempts and executor changes outside the window are clipped to it.
// Attempts in `also_writing` count as writing whatever their Output Metrics say.
PhaseBreakdown ComputePhases(const ApplicationModel& model, TimeWindow window,
                             const std::vector<const StageAttemptRecord*>& stages,
                             const std::set<StageAttemptKey>& also_writing = {});

// The application's phases over ApplicationWindow with every stage attempt.
std::optional<PhaseBreakdown> ApplicationPhases(const ApplicationModel& model);
// An operation's phases over OperationWindow with the stage attempts of its jobs; with
// `write_command`, the result stages of its jobs count as io_write (see above).
std::optional<PhaseBreakdown> OperationPhases(const ApplicationModel& model,
                                              const ConnectOperationRecord& operation,
                                              bool write_command = false);

}  // namespace sparktrace::listener::correlate
