#pragma once
// What the settler (attempt_settler.h) counts, on /metrics (docs/metrics.md, "Settling"):
//
//   sparktrace_attempts_settled_total            attempts whose figures this process recorded
//   sparktrace_attempts_settle_conflicts_total   attempts another settler recorded first, or that
//                                                changed between listing and recording (not counted)
//   sparktrace_attempts_settle_errors_total      passes or attempts that failed on the store
//   sparktrace_attempts_unsettled                attempts ended but not (or no longer) settled, left
//                                                after the last pass: the backlog
//   sparktrace_task_core_seconds_total{dag,task}  core-seconds of settled attempts
//   sparktrace_task_gib_seconds_total{dag,task}   GiB-seconds of settled attempts
//   sparktrace_task_cost_total{dag,task}          their money, only with prices (--cost-*)
//   sparktrace_task_regressions_total{dag,task}   settled attempts with the regression finding
//   sparktrace_task_metric_series_overflow_total  settled attempts counted under the overflow series
//
// Only the settler that claimed an attempt counts it, so the sums over several proxies sharing one
// store count each attempt once. An attempt settled again (a late span) adds what its figures grew by.
//
// Labels are bounded: at most `max_series` (dag, task) pairs (--task-metric-series); once that many are
// in use, a new pair's attempts are added to one more series, {dag="(other)",task="(other)"}
// (parentheses cannot be in Airflow ids), and counted in the overflow counter. No series is ever
// dropped: an evicted counter would come back from zero and read as a reset.
//
// Threads: Add*() from the settler's thread, Collect() from the admin thread; one mutex.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::traceview {

inline constexpr std::string_view kOverflowLabel = "(other)";

// What one settled attempt adds to its task's counters.
struct TaskIncrement {
  double core_seconds = 0;
  double gib_seconds = 0;
  double money = 0;
  bool regression = false;
};

class SettlerMetrics final : public prometheus::Collectable {
 public:
  // `priced`: the cost family has samples (with no price it stays empty, HELP and TYPE only).
  SettlerMetrics(std::size_t max_series, bool priced);

  void AddSettled(const std::string& dag_id, const std::string& task_id, const TaskIncrement& increment);
  // A settled attempt without Airflow identity: counted, no task series.
  void AddSettledTrace();
  void AddConflict();
  void AddError();
  void SetBacklog(std::int64_t backlog);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  struct Totals {
    double core_seconds = 0;
    double gib_seconds = 0;
    double money = 0;
    std::uint64_t regressions = 0;
  };

  const std::size_t max_series_;
  const bool priced_;
  mutable std::mutex mu_;
  std::uint64_t settled_ = 0;
  std::uint64_t conflicts_ = 0;
  std::uint64_t errors_ = 0;
  std::uint64_t overflowed_ = 0;
  std::int64_t backlog_ = 0;
  std::size_t named_series_ = 0;  // the pairs in tasks_ other than the overflow one
  std::map<std::pair<std::string, std::string>, Totals> tasks_;  // by (dag, task); the overflow pair too
};

}  // namespace sparktrace::traceview
