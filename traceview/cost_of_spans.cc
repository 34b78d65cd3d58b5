#include "traceview/cost_of_spans.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traceview/executor_series.h"
#include "traceview/span_lanes.h"
#include "traceview/span_parents.h"
#include "traceview/view_time.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

using diagnose::cost::CostInputs;
using diagnose::cost::CostWindow;
using tracing::Span;

std::optional<std::int64_t> IntFact(const Span& span, std::string_view key) {
  const auto* value = tracing::AttributeValueOf<std::int64_t>(span.attributes, key);
  if (value == nullptr) return std::nullopt;
  return std::max<std::int64_t>(*value, 0);
}

// The first span that states both parts: every span of an application states the same.
std::optional<std::int64_t> MemoryFact(std::span<const Span> spans, std::string_view heap_key,
                                       std::string_view overhead_key) {
  for (const Span& span : spans) {
    const std::optional<std::int64_t> heap = IntFact(span, heap_key);
    const std::optional<std::int64_t> overhead = IntFact(span, overhead_key);
    if (heap && overhead) return *heap + *overhead;
  }
  return std::nullopt;
}

// A stage span's run time inside [start_ms, end_ms].
double RunTimeWithin(const Span& stage, double start_ms, double end_ms) {
  const double run_ms = static_cast<double>(IntFact(stage, tracing::kStageExecutorRunTimeMs).value_or(0));
  return diagnose::cost::RunTimeWithin(run_ms, SpanStartMs(stage), SpanEndMs(stage), start_ms, end_ms);
}

// The Connect operation each stage ran for: its job's spark.connect.operation_id ("" when none).
std::vector<std::string> OperationOfStages(std::span<const Span> spans) {
  const std::vector<std::optional<std::size_t>> parent = ParentIndices(spans);
  std::vector<std::string> operation(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (LaneOf(spans[i]) != Lane::kStage || !parent[i]) continue;
    const auto* id = tracing::AttributeValueOf<std::string>(spans[*parent[i]].attributes,
                                                            tracing::kSparkConnectOperationIdKey);
    if (id != nullptr) operation[i] = *id;
  }
  return operation;
}

// On a shared server: one window per operation of the attempt, charged at its tasks' share of all the
// task time in it. Empty when no operation of the attempt had company.
std::vector<CostWindow> SharedWindows(std::span<const Span> spans, double start_ms, double end_ms,
                                      std::int64_t& other_operations) {
  const std::vector<std::string> stage_operation = OperationOfStages(spans);
  std::vector<CostWindow> windows;
  bool shared = false;
  for (const Span& lifecycle : spans) {
    if (LaneOf(lifecycle) != Lane::kLifecycle) continue;
    const std::optional<std::int64_t> others_ms = IntFact(lifecycle, tracing::kOthersRunTimeMs);
    const std::int64_t others = IntFact(lifecycle, tracing::kOtherOperations).value_or(0);
    const auto* operation_id =
        tracing::AttributeValueOf<std::string>(lifecycle.attributes, tracing::kSparkConnectOperationIdKey);
    if (!others_ms || operation_id == nullptr) continue;  // stored before the facts existed
    const double window_start = std::max(start_ms, SpanStartMs(lifecycle));
    const double window_end = std::min(end_ms, SpanEndMs(lifecycle));
    if (window_end < window_start) continue;
    double own_ms = 0;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (stage_operation[i] == *operation_id) own_ms += RunTimeWithin(spans[i], window_start, window_end);
    }
    shared = shared || *others_ms > 0 || others > 0;
    other_operations = std::max(other_operations, others);
    windows.push_back({window_start, window_end,
                       diagnose::cost::SharedWindowShare(own_ms, static_cast<double>(*others_ms), others)});
  }
  if (!shared) windows.clear();
  return windows;
}

}  // namespace

CostInputs CostInputsOfSpans(std::span<const Span> spans, double start_ms, double end_ms) {
  CostInputs inputs;
  end_ms = std::max(start_ms, end_ms);
  inputs.executors = ComputeExecutorSeries(spans, start_ms, end_ms);
  inputs.executor_memory_bytes =
      MemoryFact(spans, tracing::kExecutorMemoryBytes, tracing::kExecutorMemoryOverheadBytes);
  for (const Span& span : spans) {
    if (const std::optional<std::int64_t> cores = IntFact(span, tracing::kDriverCores)) {
      inputs.driver_cores = *cores;
      break;
    }
  }
  inputs.driver_memory_bytes =
      MemoryFact(spans, tracing::kDriverMemoryBytes, tracing::kDriverMemoryOverheadBytes).value_or(0);
  for (const Span& span : spans) {
    if (LaneOf(span) == Lane::kStage)
      inputs.used_core_ms += static_cast<double>(IntFact(span, tracing::kStageExecutorRunTimeMs).value_or(0));
  }
  inputs.windows = SharedWindows(spans, start_ms, end_ms, inputs.other_operations);
  inputs.shared = !inputs.windows.empty();
  if (!inputs.shared) inputs.windows = {CostWindow{start_ms, end_ms, 1.0}};
  return inputs;
}

}  // namespace sparktrace::traceview
