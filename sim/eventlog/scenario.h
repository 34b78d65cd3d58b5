#pragma once
// Scenario: which performance problems the event-log simulator injects into the application it
// writes, and how strongly; ScenarioKnobs: the numbers that follow from it (waits, rates, shares),
// which the generator uses and which tests and corpus builders can read to know the truth.
//
// Every problem scales continuously with `strength` in [0, 1]: 0 gives exactly the clean
// application (same events, same jitter), 1 a severe case. A few effects switch on at a threshold
// because they are discrete events (an executor killed, a task failing for good); the thresholds
// are documented on the knobs.
//
// Pure values and functions; thread-safe.

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::sim::eventlog {

// Names (ProblemName) are stable: the CLI and labelled corpora use them.
enum class Problem : std::uint8_t {
  kSlowExecutorAllocation,  // "slow-executor-allocation"
  kSlowWrites,              // "slow-writes"
  kSkew,                    // "skew"
  kSpill,                   // "spill"
  kGcPressure,              // "gc-pressure"
  kFailingTasks,            // "failing-tasks"
  kShuffleBottleneck,       // "shuffle-bottleneck"
  kIdleExecutors,           // "idle-executors"
  // Plan problems: what the SQL plan's operators did (sql_plan_drafter.h); task metrics stay the
  // clean ones except where noted on the knobs.
  kExplodingJoin,      // "exploding-join"
  kNestedLoopJoin,     // "nested-loop-join"
  kScanDiscardsMost,   // "scan-discards-most"
  kBroadcastNearLimit  // "broadcast-near-limit"
};

inline constexpr std::array<Problem, 12> kAllProblems = {Problem::kSlowExecutorAllocation,
                                                         Problem::kSlowWrites,
                                                         Problem::kSkew,
                                                         Problem::kSpill,
                                                         Problem::kGcPressure,
                                                         Problem::kFailingTasks,
                                                         Problem::kShuffleBottleneck,
                                                         Problem::kIdleExecutors,
                                                         Problem::kExplodingJoin,
                                                         Problem::kNestedLoopJoin,
                                                         Problem::kScanDiscardsMost,
                                                         Problem::kBroadcastNearLimit};

std::string_view ProblemName(Problem problem);

struct Scenario {
  std::set<Problem> problems;  // empty: the clean scenario
  double strength = 1.0;       // [0, 1]
  std::uint64_t seed = 1;      // task-level jitter; same seed, same log
  // The cluster the application asks for (spark.executor.instances, spark.executor.cores). Not a
  // problem: the same workload and seed can be written at two sizes (the what-if evaluation,
  // bench/diagnose_eval.py). Operations, task counts and map stages' data do not depend on it;
  // the draws that schedule tasks onto slots do, so what is drawn after them in an operation (the
  // result stage's per-task jitter of bytes and time) differs between sizes, as two runs would.
  int executors = 4;
  int cores_per_executor = 4;

  bool Has(Problem problem) const { return problems.contains(problem); }
  // `strength` for an injected problem, 0 for any other.
  double StrengthOf(Problem problem) const { return Has(problem) ? strength : 0.0; }
  // "clean", or the problem names joined with ',' in kAllProblems order.
  std::string Name() const;
};

// Parses "clean" or a comma-separated list of problem names ("skew,spill"); strength must be in
// [0, 1]. Errors name the offending part.
Result<Scenario> ParseScenario(std::string_view names, double strength, std::uint64_t seed);
// The same from flag texts (--scenario, --strength, --seed); errors name the flag.
Result<Scenario> ParseScenarioFlags(std::string_view names, std::string_view strength, std::string_view seed);

// The numbers a scenario implies. Clean values describe a healthy job on 4 executors × 4 cores
// (Scenario::executors × cores_per_executor).
struct ScenarioKnobs {
  int executors = 4;
  int cores_per_executor = 4;
  // Application start → first ExecutorAdded (exactly: the application's resource_wait before its
  // first executor). Clean: 2–4 s (from the seed); slow-executor-allocation adds strength × 240 s.
  std::int64_t first_executor_wait_ms = 3000;
  // Between the arrivals of the first executors.
  std::int64_t executor_stagger_ms = 350;
  // slow-executor-allocation: dynamic allocation released every executor while the application
  // was idle before operation #1 (the second), and its first stage then waits this long, with
  // tasks pending and no executor, for new ones: strength × 90 s (0: no release).
  std::int64_t reacquire_wait_ms = 0;
  // Output written per second by one write task. Clean 64 MiB/s; slow-writes divides it by
  // (1 + 19 × strength): 3.2 MiB/s at 1 (an S3A job committing through renames).
  double write_bytes_per_second = 64.0 * 1024 * 1024;
  // Commit of a write job on the driver after its tasks (an idle phase): clean 0.3 s; slow-writes
  // adds strength × 5 s (renames of the classic file committer).
  std::int64_t commit_ms = 300;
  // skew: in each operation's shuffle-reading stage, this many tasks (1 per 25, at least 1) read
  // skew_factor × the median's shuffle bytes (1 + 24 × strength) and run that much longer.
  double skew_factor = 1.0;
  // spill: memory bytes spilled per byte of a task's data (strength × 3; disk bytes spilled are
  // a third of that), and tasks run 1 + 0.8 × strength times longer.
  double spill_ratio = 0.0;
  // Share of executor run time spent in JVM GC: clean about 3 %, gc-pressure adds strength × 50 %.
  double gc_share = 0.03;
  // failing-tasks: share of task indexes whose first attempt fails (strength × 20 %, rounded
  // randomly), half of them with java.lang.OutOfMemoryError; retried, succeeding.
  double failing_task_share = 0.0;
  // failing-tasks at strength ≥ 0.5: in each operation's first stage one executor is killed
  // ("Container killed ... exit code 137"); its running tasks fail (ExecutorLostFailure) and a
  // replacement executor arrives 8 s later.
  bool executor_killed = false;
  // failing-tasks at strength ≥ 0.8: operation #1 (the second) fails: one task of its last stage
  // fails 4 times (OutOfMemoryError), so the stage, job, SQL execution and operation fail.
  bool permanent_failure = false;
  // Share of a shuffle-reading task's run time spent waiting for fetches: clean about 2 %,
  // shuffle-bottleneck adds strength × 60 %.
  double fetch_wait_share = 0.02;
  // Driver-side gap between operations (executors alive, nothing running): clean 0.5–2.5 s,
  // idle-executors adds strength × 120 s. Only offline generation schedules operations.
  std::int64_t extra_gap_between_operations_ms = 0;
  // Driver-side gap between the jobs of an operation: clean 30–150 ms, idle-executors adds
  // strength × 30 s.
  std::int64_t extra_gap_between_jobs_ms = 0;

  // ---- The SQL plan (sql_plan_drafter.h): orders scanned, filtered, joined to a broadcast
  // dimension table, aggregated. The spill problem above also makes the final aggregation's
  // "spill size" (the result stage's memory bytes spilled), so it is the operator-spill problem.
  // Rows the join outputs per row it keeps of the orders: 1 clean (one customer per order);
  // exploding-join: 1 + 49 × strength (a key repeated on both sides).
  double join_rows_per_input_row = 1.0;
  // nested-loop-join: the join is a BroadcastNestedLoopJoin (a range condition) over a build side
  // of max(1, 50000 × strength²) rows; 0 (clean): a BroadcastHashJoin.
  std::int64_t nested_loop_build_rows = 0;
  // Share of the scanned rows the Filter above the scan keeps: 0.6 clean; scan-discards-most:
  // 0.6 × e^(−12 × strength) (0.5 % at 0.4: a predicate not pushed, no partition pruning).
  double filter_kept_share = 0.6;
  // What the plan problems cost the map stage (scan, filter, join, partial aggregation): its
  // tasks' compute time × this. Clean 1; exploding-join × (1 + 4.9 × strength) (the join and the
  // aggregation handle that many more rows), nested-loop-join × (1 + 6 × strength) (every row
  // compared with every band), scan-discards-most × (1 + 3 × strength) (every row group decoded,
  // none skipped).
  double map_compute_factor = 1.0;
  // broadcast-near-limit: the broadcast table grows by strength × 3.2 GiB and its collect, build and
  // broadcast take strength × 60 s more, before the map stage starts (executors wait idle); the
  // application then sets spark.sql.autoBroadcastJoinThreshold=4g (the user raised it).
  std::int64_t broadcast_extra_bytes = 0;
  std::int64_t broadcast_extra_ms = 0;
};

ScenarioKnobs KnobsFor(const Scenario& scenario);

}  // namespace sparktrace::sim::eventlog
