#include "traceview/what_if_of_spans.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "diagnose/what_if/what_if_json.h"
#include "traceview/executor_series.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

double StartMs(const tracing::Span& span) { return static_cast<double>(span.start_time_unix_nano) / 1e6; }
double EndMs(const tracing::Span& span) { return static_cast<double>(span.end_time_unix_nano) / 1e6; }

std::int64_t Int(const tracing::Span& span, std::string_view key) {
  const auto* value = tracing::AttributeValueOf<std::int64_t>(span.attributes, key);
  return value != nullptr ? *value : 0;
}

std::vector<std::int64_t> Integers(const tracing::Span& span, std::string_view key) {
  std::vector<std::int64_t> out;
  if (const auto* texts = tracing::AttributeValueOf<std::vector<std::string>>(span.attributes, key)) {
    for (const std::string& text : *texts) {
      char* end = nullptr;
      const long long value = std::strtoll(text.c_str(), &end, 10);
      if (end != text.c_str()) out.push_back(value);
    }
  }
  return out;
}

// The stage's duration quantiles: its profile, else p50/p95/max as a coarse one (q = 0 … 1 evenly:
// min ≈ p50 / 2 is a guess that keeps the median where it was).
std::vector<std::int64_t> ProfileOf(const tracing::Span& stage) {
  std::vector<std::int64_t> profile = Integers(stage, tracing::kStageTaskDurationProfile);
  if (profile.size() >= 2) return profile;
  const std::int64_t p50 = Int(stage, tracing::kSparkStageTaskDurationP50Key);
  const std::int64_t p95 = Int(stage, tracing::kSparkStageTaskDurationP95Key);
  const std::int64_t max = Int(stage, tracing::kSparkStageTaskDurationMaxKey);
  if (max <= 0) return {};
  return {p50 / 2, p50, p50, (p50 + p95) / 2, p95, max};
}

double ProfileMean(const std::vector<std::int64_t>& profile) {
  if (profile.size() < 2) return 0;
  double sum = 0;  // the quantile function's integral, trapezoids between the points
  for (std::size_t i = 1; i < profile.size(); ++i)
    sum += static_cast<double>(profile[i - 1] + profile[i]) / 2;
  return sum / static_cast<double>(profile.size() - 1);
}

void MergeStage(const tracing::Span& span, diagnose::what_if::StageInput& stage, bool first) {
  const std::int64_t successful = std::max<std::int64_t>(
      0, Int(span, tracing::kSparkStageTasksEndedKey) - Int(span, tracing::kSparkStageFailedTasksKey) -
             Int(span, tracing::kSparkStageKilledTasksKey));
  const std::vector<std::int64_t> profile = ProfileOf(span);
  if (first) {
    stage.stage_id = static_cast<std::int32_t>(Int(span, tracing::kSparkStageIdKey));
    for (const std::int64_t parent : Integers(span, tracing::kSparkStageParentIdsKey))
      stage.parent_ids.push_back(static_cast<std::int32_t>(parent));
    stage.submission_ms = StartMs(span);
    stage.completion_ms = EndMs(span);
  }
  // Attempts of one stage: the profile of the attempt that ran the most tasks stands for all.
  if (successful > 0 && (profile.size() >= 2 || stage.duration_profile.empty())) {
    if (stage.task_count < successful) stage.duration_profile = profile;
    stage.task_count += successful;
    stage.task_time_ms += static_cast<std::int64_t>(ProfileMean(profile) * static_cast<double>(successful));
  }
  stage.submission_ms = std::min(stage.submission_ms, StartMs(span));
  stage.completion_ms = std::max(stage.completion_ms, EndMs(span));
  stage.read_bytes +=
      Int(span, tracing::kSparkStageInputBytesKey) + Int(span, tracing::kSparkStageShuffleReadBytesKey);
  stage.writes_output = stage.writes_output || Int(span, tracing::kSparkStageOutputBytesKey) > 0 ||
                        Int(span, tracing::kSparkStageOutputRecordsKey) > 0;
}

void AddSlots(std::span<const tracing::Span> spans, double start_ms, double end_ms,
              diagnose::what_if::AttemptInput& input) {
  const ExecutorSeries series = ComputeExecutorSeries(spans, start_ms, end_ms);
  if (!series.known || !series.cores_known) return;
  input.peak_executors = series.max;
  for (const ExecutorPoint& point : series.points) {
    if (!input.slots.empty() && input.slots.back().slots == point.cores) continue;
    input.slots.push_back({point.t_ms, point.cores});
    if (point.count == series.max && point.count > 0) {
      input.slots_per_executor = std::max<std::int64_t>(
          1, std::llround(static_cast<double>(point.cores) / static_cast<double>(point.count)));
    }
  }
}

}  // namespace

diagnose::what_if::AttemptInput WhatIfInputOfSpans(std::span<const tracing::Span> spans, double start_ms,
                                                   double end_ms) {
  diagnose::what_if::AttemptInput input;
  input.start_ms = start_ms;
  input.end_ms = end_ms;
  std::map<tracing::SpanId, std::size_t> job_of_span;
  for (const tracing::Span& span : spans) {
    if (span.name != tracing::kSparkJobSpanName) continue;
    diagnose::what_if::JobInput job;
    job.job_id = static_cast<std::int32_t>(Int(span, tracing::kSparkJobIdKey));
    job.submission_ms = StartMs(span);
    job.completion_ms = EndMs(span);
    job_of_span[span.span_id] = input.jobs.size();
    input.jobs.push_back(std::move(job));
  }
  std::vector<std::map<std::int32_t, diagnose::what_if::StageInput>> stages(input.jobs.size());
  for (const tracing::Span& span : spans) {
    if (span.name != tracing::kSparkStageSpanName) continue;
    const auto job = job_of_span.find(span.parent_span_id);
    if (job == job_of_span.end()) continue;
    const auto stage_id = static_cast<std::int32_t>(Int(span, tracing::kSparkStageIdKey));
    auto& by_id = stages[job->second];
    const bool first = !by_id.contains(stage_id);
    MergeStage(span, by_id[stage_id], first);
  }
  for (std::size_t j = 0; j < input.jobs.size(); ++j) {
    for (auto& [stage_id, stage] : stages[j]) input.jobs[j].stages.push_back(std::move(stage));
  }
  AddSlots(spans, start_ms, end_ms, input);
  return input;
}

std::vector<diagnose::what_if::WhatIfEstimate> EstimatesOfSpans(std::span<const tracing::Span> spans,
                                                                double start_ms, double end_ms) {
  return diagnose::what_if::EstimateWhatIf(WhatIfInputOfSpans(spans, start_ms, end_ms));
}

nlohmann::ordered_json WhatIfJsonOfSpans(std::span<const tracing::Span> spans, double start_ms,
                                         double end_ms) {
  const diagnose::what_if::AttemptInput input = WhatIfInputOfSpans(spans, start_ms, end_ms);
  return diagnose::what_if::WhatIfToJson(diagnose::what_if::EstimateWhatIf(input),
                                         diagnose::what_if::CheckAgainstSettledJobs(input));
}

}  // namespace sparktrace::traceview
