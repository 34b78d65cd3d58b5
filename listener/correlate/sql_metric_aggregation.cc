#include "listener/correlate/sql_metric_aggregation.h"

#include <algorithm>

namespace sparktrace::listener::correlate {

SqlMetricType SqlMetricTypeFromName(std::string_view name) {
  if (name == "sum") return SqlMetricType::kSum;
  if (name == "size") return SqlMetricType::kSize;
  if (name == "timing") return SqlMetricType::kTiming;
  if (name == "nsTiming") return SqlMetricType::kNsTiming;
  if (name == "average") return SqlMetricType::kAverage;
  return SqlMetricType::kOther;
}

std::string_view SqlMetricUnit(SqlMetricType type) {
  switch (type) {
    case SqlMetricType::kSum:
      return "count";
    case SqlMetricType::kSize:
      return "bytes";
    case SqlMetricType::kTiming:
      return "ms";
    case SqlMetricType::kNsTiming:
      return "ns";
    case SqlMetricType::kAverage:
      return "average";
    case SqlMetricType::kOther:
      return "";
  }
  return "";
}

bool SqlMetricValueCounted(SqlMetricType type, std::int64_t value) {
  switch (type) {
    case SqlMetricType::kSize:
    case SqlMetricType::kTiming:
    case SqlMetricType::kNsTiming:
      return value >= 0;
    case SqlMetricType::kAverage:
      return value > 0;
    case SqlMetricType::kSum:
    case SqlMetricType::kOther:
      return true;
  }
  return true;
}

namespace {

bool HasDistribution(SqlMetricType type) {
  return type == SqlMetricType::kSize || type == SqlMetricType::kTiming || type == SqlMetricType::kNsTiming ||
         type == SqlMetricType::kAverage;
}

// The value at 0-based `rank` of `values`, each standing for `weight` copies of `value`: the value
// sorted(rank) of the expanded list, or `fallback` when the weights do not reach that rank. A
// selection (expected linear time), not a sort: a stage of 100,000 tasks has as many values per
// metric, and every metric of an execution is aggregated at its end.
std::int64_t WeightedValueAtRank(std::vector<std::pair<std::int64_t, std::int64_t>>& values, std::int64_t rank,
                                 std::int64_t fallback) {
  auto first = values.begin();
  auto last = values.end();
  while (first != last) {
    const auto middle = first + (last - first) / 2;
    std::nth_element(first, middle, last);
    std::int64_t below = 0;  // the weight of the values before `middle`, all <= it
    for (auto value = first; value != middle; ++value) below += value->second;
    if (rank < below) {
      last = middle;
    } else if (rank < below + middle->second) {
      return middle->first;
    } else {
      rank -= below + middle->second;
      first = middle + 1;
    }
  }
  return fallback;
}

}  // namespace

void SqlMetricValues::Reserve(std::size_t count) {
  if (HasDistribution(type_)) kept_.reserve(count);
}

void SqlMetricValues::Add(std::int64_t value, std::size_t max_kept) {
  ++reported_;
  sum_all_ = WrappingAdd(sum_all_, value);
  if (!HasDistribution(type_) || !SqlMetricValueCounted(type_, value)) return;
  valid_sum_ = WrappingAdd(valid_sum_, value);
  if (valid_count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++valid_count_;
  // Keep one value in `stride_`; when the kept ones reach the bound, drop every other one and
  // halve the rate, so a stage's values never take more than max_kept slots.
  if (++since_kept_ < stride_) return;
  since_kept_ = 0;
  if (max_kept == 0) return;
  if (kept_.size() >= max_kept) {
    std::size_t out = 0;
    for (std::size_t in = 0; in < kept_.size(); in += 2) kept_[out++] = kept_[in];
    kept_.resize(out);
    stride_ *= 2;
  }
  kept_.push_back(value);
}

void SqlMetricAggregator::Count(std::int64_t value, std::int64_t weight) {
  if (summary_.values == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  weighted_.emplace_back(value, weight);
}

void SqlMetricAggregator::AddStage(std::int32_t stage_id, const SqlMetricValues& values) {
  if (values.reported() > 0) summary_.stage_ids.push_back(stage_id);
  if (!HasDistribution(type_)) {
    summary_.total = WrappingAdd(summary_.total, values.sum_all());
    summary_.values += values.reported();
    return;
  }
  if (values.valid_count() == 0) return;
  summary_.total = WrappingAdd(summary_.total, values.valid_sum());
  // min and max are exact whatever was kept.
  if (summary_.values == 0) {
    min_ = values.min();
    max_ = values.max();
  } else {
    min_ = std::min(min_, values.min());
    max_ = std::max(max_, values.max());
  }
  summary_.values += values.valid_count();
  if (values.stride() > 1) summary_.approximate = true;
  for (std::int64_t value : values.kept()) weighted_.emplace_back(value, values.stride());
}

void SqlMetricAggregator::AddValue(std::int64_t value) {
  if (!HasDistribution(type_)) {
    summary_.total = WrappingAdd(summary_.total, value);
    ++summary_.values;
    return;
  }
  if (!SqlMetricValueCounted(type_, value)) return;
  summary_.total = WrappingAdd(summary_.total, value);
  Count(value, 1);
  ++summary_.values;
}

void SqlMetricAggregator::AddZeros(std::int64_t count) {
  if (count <= 0) return;
  if (!HasDistribution(type_)) {
    summary_.values += count;
    return;
  }
  if (!SqlMetricValueCounted(type_, 0)) return;  // average: zeros are not counted
  Count(0, count);
  summary_.values += count;
}

SqlMetricSummary SqlMetricAggregator::Finish() {
  std::sort(summary_.stage_ids.begin(), summary_.stage_ids.end());
  summary_.stage_ids.erase(std::unique(summary_.stage_ids.begin(), summary_.stage_ids.end()),
                           summary_.stage_ids.end());
  if (!HasDistribution(type_) || summary_.values == 0) {
    if (type_ == SqlMetricType::kAverage) summary_.divisor = 10;
    if (HasDistribution(type_)) summary_.total = 0;
    return std::move(summary_);
  }
  // Spark sorts the values and takes sorted(n / 2): the upper middle of an even count. With weights
  // (zero-filled indexes, thinned values), the value at that rank.
  std::int64_t weight_total = 0;
  for (const auto& entry : weighted_) weight_total += entry.second;
  const std::int64_t rank = (summary_.approximate ? weight_total : summary_.values) / 2;
  const std::int64_t median = WeightedValueAtRank(weighted_, rank, max_);
  summary_.min = min_;
  summary_.median = median;
  summary_.max = max_;
  if (type_ == SqlMetricType::kAverage) {
    summary_.divisor = 10;
    summary_.total = median;  // Spark shows no total for averages; the median stands for it
  }
  return std::move(summary_);
}

}  // namespace sparktrace::listener::correlate
