#include "traceview/airflow_task_view.h"

#include <algorithm>

#include "traceview/view_time.h"
#include "tracing/airflow_task_report.h"

namespace sparktrace::traceview {
namespace {

double Overlap(const PhaseInterval& interval, double start_ms, double end_ms) {
  return std::max(0.0, std::min(interval.end_ms, end_ms) - std::max(interval.start_ms, start_ms));
}

std::string TextAttribute(const tracing::Span& span, std::string_view key) {
  const auto* value = tracing::AttributeValueOf<std::string>(span.attributes, key);
  return value != nullptr ? *value : std::string();
}

}  // namespace

OutsideSpark ComputeOutsideSpark(const Breakdown& breakdown, double start_ms, double end_ms) {
  OutsideSpark outside;
  const auto is_spark = [](const PhaseInterval& interval) { return interval.phase != ViewPhase::kClient; };
  const auto first_spark = std::find_if(breakdown.intervals.begin(), breakdown.intervals.end(), is_spark);
  const auto last_spark = std::find_if(breakdown.intervals.rbegin(), breakdown.intervals.rend(), is_spark);
  // Outside the breakdown's range nothing is in flight either (a task span always lies inside it;
  // clipping keeps the parts honest if it does not).
  const double range_start = breakdown.intervals.empty() ? start_ms : breakdown.start_ms;
  const double range_end = breakdown.intervals.empty() ? end_ms : breakdown.end_ms;
  outside.before_first_call_ms += std::max(0.0, std::min(range_start, end_ms) - start_ms);
  outside.after_last_call_ms += std::max(0.0, end_ms - std::max(range_end, start_ms));
  if (first_spark == breakdown.intervals.end()) {
    for (const PhaseInterval& interval : breakdown.intervals) {
      outside.before_first_call_ms += Overlap(interval, start_ms, end_ms);
    }
    return outside;
  }
  const double first_call_ms = first_spark->start_ms;
  const double last_call_end_ms = last_spark->end_ms;
  for (const PhaseInterval& interval : breakdown.intervals) {
    if (interval.phase != ViewPhase::kClient) continue;
    const double ms = Overlap(interval, start_ms, end_ms);
    if (interval.end_ms <= first_call_ms) {
      outside.before_first_call_ms += ms;
    } else if (interval.start_ms >= last_call_end_ms) {
      outside.after_last_call_ms += ms;
    } else {
      outside.between_calls_ms += ms;
    }
  }
  return outside;
}

std::optional<AirflowTaskView> FindAirflowTask(std::span<const tracing::Span> spans,
                                               const std::vector<std::optional<std::size_t>>& parent,
                                               const Breakdown& breakdown) {
  const tracing::Span* task = nullptr;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const tracing::Span& span = spans[i];
    if (parent[i] || span.name != tracing::kAirflowTaskSpanName) continue;
    if (tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowTaskStateKey) == nullptr)
      continue;
    if (task == nullptr || span.start_time_unix_nano < task->start_time_unix_nano) task = &span;
  }
  if (task == nullptr) return std::nullopt;
  AirflowTaskView view;
  view.span_id = tracing::ToHex(task->span_id);
  view.state = TextAttribute(*task, tracing::kAirflowTaskStateKey);
  view.operator_class = TextAttribute(*task, tracing::kAirflowTaskOperatorKey);
  view.hostname = TextAttribute(*task, tracing::kAirflowTaskHostnameKey);
  view.start_ms = SpanStartMs(*task);
  view.end_ms = SpanEndMs(*task);
  view.running = view.state == "running";
  view.outside_spark = ComputeOutsideSpark(breakdown, view.start_ms, view.end_ms);
  view.spark_ms = std::max(0.0, view.wall_ms() - view.outside_spark.ms());
  return view;
}

}  // namespace sparktrace::traceview
