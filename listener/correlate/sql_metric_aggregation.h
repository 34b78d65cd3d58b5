#pragma once
// How Spark's SQL UI turns the per-task values of one SQL metric into what it shows: the total and,
// for size and timing metrics, the min, median and max over tasks (SQLMetrics.stringValue, fed by
// SQLAppStatusListener.aggregateMetrics; docs/diagnose-sql.md states the rules with references).
//
//   type      values counted                 total                 min / median / max
//   sum       every value                    their sum             none
//   size      values >= 0                    sum of those          sorted[0] / sorted[n/2] / sorted[n-1]
//   timing    values >= 0 (ms)               sum of those          same
//   nsTiming  values >= 0 (ns)               sum of those          same
//   average   values > 0 (Spark stores x10)  the median (Spark     same, divided by 10
//                                            shows no total)
//   other     (v2Custom_*): every value      their sum             none
// "values" are, per stage attempt Spark kept, one per task index of the stage (the last update of
// that index before a task of it succeeded; 0 for an index that reported none), plus one per
// SparkListenerDriverAccumUpdates entry. With no counted value: total 0 and no min/median/max.
//
// Memory: a stage's values of one metric are kept for the median up to `max_kept`; past that the
// kept values are thinned (every other one dropped, then one in 2^k kept) and the median becomes
// approximate (weighted by the thinning). Totals, min and max stay exact.
//
// Threads: plain values, no synchronisation.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace sparktrace::listener::correlate {

enum class SqlMetricType : std::uint8_t { kSum, kSize, kTiming, kNsTiming, kAverage, kOther };

// "sum", "size", "timing", "nsTiming", "average"; anything else (v2Custom_<class>) is kOther.
SqlMetricType SqlMetricTypeFromName(std::string_view name);
// The unit of a metric's values as reported: "count" (sum), "bytes", "ms", "ns", "average" (Spark's
// value / 10), "" (other).
std::string_view SqlMetricUnit(SqlMetricType type);

// Spark adds Longs, which wrap; so do we (never undefined behaviour on a hostile log).
inline std::int64_t WrappingAdd(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// The final values of one metric in one stage attempt: one Add per task index.
class SqlMetricValues {
 public:
  explicit SqlMetricValues(SqlMetricType type) : type_(type) {}

  void Add(std::int64_t value, std::size_t max_kept);
  // Room for `count` kept values up front (a stage's task count, at most max_kept), so that a
  // metric of a big stage does not grow its buffer a value at a time.
  void Reserve(std::size_t count);

  SqlMetricType type() const { return type_; }
  std::int64_t reported() const { return reported_; }    // task indexes with a value
  std::int64_t sum_all() const { return sum_all_; }      // every value (sum, other)
  std::int64_t valid_sum() const { return valid_sum_; }  // the counted values (size, timing, average)
  std::int64_t valid_count() const { return valid_count_; }
  std::int64_t min() const { return min_; }  // of the counted values; meaningless when none
  std::int64_t max() const { return max_; }
  const std::vector<std::int64_t>& kept() const { return kept_; }
  // Each kept value stands for this many counted values (1: exact).
  std::int64_t stride() const { return stride_; }

 private:
  SqlMetricType type_;
  std::int64_t reported_ = 0;
  std::int64_t sum_all_ = 0;
  std::int64_t valid_sum_ = 0;
  std::int64_t valid_count_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  std::vector<std::int64_t> kept_;
  std::int64_t stride_ = 1;
  std::int64_t since_kept_ = 0;
};

// Whether Spark counts `value` of a metric of `type` in min/median/max (and in the total of size and
// timing metrics): >= 0 for size and timing (-1 is "never set"), > 0 for average.
bool SqlMetricValueCounted(SqlMetricType type, std::int64_t value);

// One metric of an execution as Spark's SQL UI shows it. Raw units (SqlMetricUnit): bytes, ms, ns;
// average metrics are Spark's stored value / 10 (`divisor`).
struct SqlMetricSummary {
  std::int64_t total = 0;  // exact; for average, the median (see the table above)
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> median;
  std::optional<std::int64_t> max;
  std::int64_t divisor = 1;             // 10 for average metrics: report value / divisor
  std::int64_t values = 0;              // how many values were counted (zero-filled task indexes included)
  bool approximate = false;             // the median comes from thinned values (min, max, total stay exact)
  std::vector<std::int32_t> stage_ids;  // stages whose tasks reported it, ascending
};

// Merges a metric's stage values, zero-filled task indexes and driver values into its summary.
class SqlMetricAggregator {
 public:
  explicit SqlMetricAggregator(SqlMetricType type) : type_(type) {}

  void AddStage(std::int32_t stage_id, const SqlMetricValues& values);
  // Pending values (failed task attempts whose index never succeeded) count like final ones.
  void AddValue(std::int64_t value);
  // Task indexes of a stage that reported nothing for this metric: Spark counts a 0 for each.
  void AddZeros(std::int64_t count);
  void AddDriverValue(std::int64_t value) { AddValue(value); }
  // A stage that reported the metric only through pending values.
  void AddStageId(std::int32_t stage_id) { summary_.stage_ids.push_back(stage_id); }
  SqlMetricSummary Finish();

 private:
  void Count(std::int64_t value, std::int64_t weight);

  SqlMetricType type_;
  SqlMetricSummary summary_;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> weighted_;  // (value, weight)
};

}  // namespace sparktrace::listener::correlate
