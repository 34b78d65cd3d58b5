#pragma once
// TaskStatistics: what the tasks of one stage attempt add up to, aggregated one TaskEnd at a time
// so that a stage of a million tasks costs bounded memory.
//
// Duration quantiles (p50/p95) come from a DurationSample: every duration is kept exactly up to
// kExactDurationLimit (100,000) durations per stage attempt, so quantiles are exact for all but
// the largest stages; beyond that the sample becomes a uniform reservoir (Vitter's algorithm R,
// fixed seed, so the same log gives the same figures) of kExactDurationLimit durations, and the
// quantiles are estimates with a rank error of about 1/sqrt(100,000) ≈ 0.3%. The maximum is always
// exact. Memory per stage attempt: at most 800 KB for the sample.
//
// Which tasks count where (as Spark's own stage summary does): durations, for quantiles, are those
// of successful tasks with a recorded finish time; the metric sums include every task that carried
// metrics, failed ones too (their work used the executors).
//
// For diagnosis (diagnose/): the bytes each successful task read (input + shuffle read) go into a
// second sample of the same kind (max and median for skew); failed and killed tasks are grouped
// by reason (at most kMaxFailureGroups groups, one sample message each, out-of-memory flagged);
// task_time_ms sums what the tasks occupied their executors.
//
// Threads: plain values, not synchronised.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "listener/events/spark_event.h"

namespace sparktrace::listener::correlate {

inline constexpr std::size_t kExactDurationLimit = 100'000;
// Distinct failure reasons kept per stage attempt; later ones are counted in the last group.
inline constexpr std::size_t kMaxFailureGroups = 8;

// Also used for per-task byte counts (then max_ms() is the largest count): the sampling does not
// care about the unit.
class DurationSample {
 public:
  void Add(std::int64_t duration_ms);

  // Durations seen, including those the reservoir no longer holds.
  std::int64_t count() const { return count_; }
  bool exact() const { return count_ <= static_cast<std::int64_t>(kExactDurationLimit); }
  std::int64_t max_ms() const { return max_ms_; }
  // Nearest-rank quantile (q in [0, 1]) of the kept durations; nullopt when there are none.
  std::optional<std::int64_t> Quantile(double q) const;
  // `points` nearest-rank quantiles at q = i / (points − 1), i = 0 … points − 1 (the minimum
  // first, the maximum of the kept durations last), with one sort; empty when none is kept or
  // points < 2. The stage span's duration profile (spark.stage.task_duration_ms.profile).
  std::vector<std::int64_t> Profile(std::size_t points) const;
  // The durations kept: all of them in the order they were added while exact(), else the
  // reservoir (the what-if simulator, diagnose/what_if, replays them).
  const std::vector<std::int64_t>& kept() const { return kept_; }

 private:
  std::uint64_t NextRandom();

  std::vector<std::int64_t> kept_;
  std::int64_t count_ = 0;
  std::int64_t max_ms_ = 0;
  std::uint64_t random_state_ = 0x9e3779b97f4a7c15ULL;  // splitmix64; fixed for reproducible figures
};

// True when a failure message says the task or its executor ran out of memory: a JVM
// OutOfMemoryError (or a GPU "OutOfMemory"/"...OOM" exception), a container killed for its memory
// ("Container killed", "OOMKilled"), or an exit code 137 (SIGKILL) or 143 (SIGTERM) of a container.
bool LooksLikeOutOfMemory(std::string_view message);

// How a task attempt ended, as Spark's own status store counts it (AppStatusListener.onTaskEnd): a
// Resubmitted end re-runs a task that had succeeded and is no failure; a denied commit is a kill,
// and so is any end flagged Killed.
enum class TaskEndOutcome : std::uint8_t { kSucceeded, kResubmitted, kKilled, kFailed };
TaskEndOutcome OutcomeOf(const events::TaskEnd& task);

// Failed or killed task attempts of one reason: the end reason's name, plus for an
// ExceptionFailure the exception's class ("ExceptionFailure java.lang.OutOfMemoryError").
struct TaskFailureGroup {
  std::string reason;
  std::int64_t count = 0;
  bool killed = false;            // TaskKilled / TaskCommitDenied (not failures)
  bool out_of_memory = false;     // LooksLikeOutOfMemory of some message of the group
  std::int64_t task_time_ms = 0;  // launch → finish of these attempts: executor time lost
  std::string sample_message;     // the first message of the group (already cut by the parser)
};

struct TaskStatistics {
  std::int64_t tasks_ended = 0;  // every TaskEnd, of any outcome
  // Ended with a failure reason (ExceptionFailure, FetchFailed, ExecutorLostFailure, ...).
  std::int64_t failed_tasks = 0;
  // TaskKilled and TaskCommitDenied (speculative copies, cancelled jobs); not in failed_tasks.
  std::int64_t killed_tasks = 0;
  // Resubmitted ends: finished map tasks re-run because their output was lost (neither failed
  // nor killed).
  std::int64_t resubmitted_tasks = 0;
  std::int64_t out_of_memory_tasks = 0;  // failed tasks whose message LooksLikeOutOfMemory
  std::vector<TaskFailureGroup> failure_groups;
  DurationSample successful_durations;
  // Input bytes + shuffle read bytes of each successful task that carried metrics.
  DurationSample successful_task_bytes;
  // Σ (finish − launch) over every task with both times: the executor time the tasks occupied.
  std::int64_t task_time_ms = 0;
  std::optional<events::EpochMillis> first_launch_ms;
  std::optional<events::EpochMillis> last_finish_ms;
  // Sums over the tasks that carried metrics.
  std::int64_t executor_run_time_ms = 0;
  std::int64_t executor_cpu_time_ns = 0;
  bool cpu_time_known = false;  // some task reported a CPU time (Spark 2.1+)
  std::int64_t jvm_gc_time_ms = 0;
  std::int64_t memory_bytes_spilled = 0;
  std::int64_t disk_bytes_spilled = 0;
  std::int64_t max_task_disk_bytes_spilled = 0;  // the most one task spilled to disk
  std::int64_t shuffle_read_bytes = 0;           // remote + local
  std::int64_t shuffle_fetch_wait_ms = 0;
  std::int64_t shuffle_write_bytes = 0;
  std::int64_t shuffle_write_time_ns = 0;
  std::int64_t input_bytes = 0;
  std::int64_t input_records = 0;
  std::int64_t output_bytes = 0;
  std::int64_t output_records = 0;
  std::optional<std::int64_t> max_peak_execution_memory_bytes;

  void Add(const events::TaskEnd& task);
  std::int64_t FailedOrKilledTimeMs() const;  // Σ task_time_ms of the failure groups

  // The stage wrote output (files, tables): the io_write phase's criterion (see phases.h).
  bool WritesOutput() const { return output_bytes > 0 || output_records > 0; }

 private:
  void AddFailure(const events::TaskEnd& task, bool killed, std::int64_t duration_ms);
};

}  // namespace sparktrace::listener::correlate
