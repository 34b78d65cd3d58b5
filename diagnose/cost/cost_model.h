#pragma once
// What an attempt cost in cluster resources: the cores and memory its Spark application had
// allocated over the attempt's window, how much of the cores its tasks used, and — with prices —
// what that comes to. docs/trace-view-api.md ("Cost") states the definitions; in short:
//
//   core_seconds      ∫ (cores of the executors alive + the driver's cores) dt over the window(s)
//   gib_seconds       ∫ (executors alive × (heap + overhead) + the driver's heap + overhead) dt, in GiB
//   used_core_seconds Σ executor run time of the attempt's stages (spark.stage.executor_run_time_ms)
//   idle_fraction     1 − used / the executors' core-seconds (the driver runs no tasks)
//
// A dedicated application is the attempt's for its whole window. On a shared Spark Connect server
// (other operations' tasks ran while one of the attempt's ran) the attempt is charged, for each of
// its operations, that operation's window times its tasks' share of the task time in it.
//
// ComputeCost takes plain inputs; two adapters fill them: from an attempt's spans for the page
// (traceview/cost_of_spans.h) and from the listener's model for `sparktrace diagnose`
// (diagnose/cost_of_model.h), so that both give the same figures for the same events.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/cost/executor_series.h"

namespace sparktrace::diagnose::cost {

// Prices per hour (the flags --cost-core-hour and --cost-gib-hour); unset: no money.
struct CostPrices {
  std::optional<double> core_hour;
  std::optional<double> gib_hour;
  bool any() const { return core_hour.has_value() || gib_hour.has_value(); }
};

// A stretch of time the attempt is charged for, and the part of the application's allocation in it
// that is the attempt's (1: all of it).
struct CostWindow {
  double start_ms = 0;
  double end_ms = 0;
  double share = 1;
};

struct CostInputs {
  ExecutorSeries executors;                           // needs cores_known
  std::optional<std::int64_t> executor_memory_bytes;  // heap + overhead of one executor
  std::int64_t driver_cores = 0;                      // 0: not known, or the driver is the executor
  std::int64_t driver_memory_bytes = 0;               // heap + overhead
  std::vector<CostWindow> windows;
  double used_core_ms = 0;
  bool shared = false;
  std::int64_t other_operations = 0;  // the most that ran beside one of the attempt's operations
};

struct Money {
  double total = 0;
  double cores = 0;   // core_seconds at core_hour (0 without that price)
  double memory = 0;  // gib_seconds at gib_hour (0 without that price)
};

struct AttemptCost {
  bool known = false;  // the executors' cores are known (else every figure below is 0 or absent)
  double core_seconds = 0;
  double executor_core_seconds = 0;
  double driver_core_seconds = 0;
  std::optional<double> gib_seconds;  // nullopt without the application's memory settings
  double used_core_seconds = 0;
  std::optional<double> idle_fraction;  // nullopt when no executor core was allocated
  bool shared = false;
  std::int64_t other_operations = 0;
  double share = 1;            // the attempt's part of the allocation over its windows, time-weighted
  std::optional<Money> money;  // with a price, and every priced figure known
};

AttemptCost ComputeCost(const CostInputs& inputs, const CostPrices& prices);

// For the adapters, which read the same facts from spans and from the model:
// a stage's run time inside [start_ms, end_ms], its tasks taken as spread evenly over the stage
// [stage_start_ms, stage_end_ms] (an end before the start is the start; a stage of no length counts
// whole when it lies in the window);
double RunTimeWithin(double run_ms, double stage_start_ms, double stage_end_ms, double start_ms,
                     double end_ms);
// and an operation's part of a shared server's executors over a window: its tasks' share of all the
// task time in it, or, when nobody's tasks ran, an equal part with the other operations present.
double SharedWindowShare(double own_run_ms, double others_run_ms, std::int64_t other_operations);

// How the attempt was charged, in words: "the application's executors over the attempt's window" or
// "shared with 3 other operations: split by task time (41% of the executors' time)".
std::string CostBasis(const AttemptCost& cost);

}  // namespace sparktrace::diagnose::cost
