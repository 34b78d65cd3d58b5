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
// Threads: plain values, not synchronised.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "listener/events/spark_event.h"

namespace sparktrace::listener {

inline constexpr std::size_t kExactDurationLimit = 100'000;

class DurationSample {
 public:
  void Add(std::int64_t duration_ms);

  // Durations seen, including those the reservoir no longer holds.
  std::int64_t count() const { return count_; }
  bool exact() const { return count_ <= static_cast<std::int64_t>(kExactDurationLimit); }
  std::int64_t max_ms() const { return max_ms_; }
  // Nearest-rank quantile (q in [0, 1]) of the kept durations; nullopt when there are none.
  std::optional<std::int64_t> Quantile(double q) const;

 private:
  std::uint64_t NextRandom();

  std::vector<std::int64_t> kept_;
  std::int64_t count_ = 0;
  std::int64_t max_ms_ = 0;
  std::uint64_t random_state_ = 0x9e3779b97f4a7c15ULL;  // splitmix64; fixed for reproducible figures
};

struct TaskStatistics {
  std::int64_t tasks_ended = 0;  // every TaskEnd, of any outcome
  // Ended with a failure reason (ExceptionFailure, FetchFailed, ExecutorLostFailure, ...).
  std::int64_t failed_tasks = 0;
  // TaskKilled and TaskCommitDenied (speculative copies, cancelled jobs); not in failed_tasks.
  std::int64_t killed_tasks = 0;
  DurationSample successful_durations;
  std::optional<EpochMillis> first_launch_ms;
  std::optional<EpochMillis> last_finish_ms;
  // Sums over the tasks that carried metrics.
  std::int64_t executor_run_time_ms = 0;
  std::int64_t executor_cpu_time_ns = 0;
  bool cpu_time_known = false;  // some task reported a CPU time (Spark 2.1+)
  std::int64_t jvm_gc_time_ms = 0;
  std::int64_t memory_bytes_spilled = 0;
  std::int64_t disk_bytes_spilled = 0;
  std::int64_t shuffle_read_bytes = 0;  // remote + local
  std::int64_t shuffle_fetch_wait_ms = 0;
  std::int64_t shuffle_write_bytes = 0;
  std::int64_t input_bytes = 0;
  std::int64_t input_records = 0;
  std::int64_t output_bytes = 0;
  std::int64_t output_records = 0;
  std::optional<std::int64_t> max_peak_execution_memory_bytes;

  void Add(const TaskEnd& task);
  // The stage wrote output (files, tables): the io_write phase's criterion (see phases.h).
  bool WritesOutput() const { return output_bytes > 0 || output_records > 0; }
};

}  // namespace sparktrace::listener
