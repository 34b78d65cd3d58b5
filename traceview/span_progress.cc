#include "traceview/span_progress.h"

#include <string>

#include "traceview/span_lanes.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {

std::optional<SpanProgress> ProgressOf(const tracing::Span& span) {
  // Every progress update writes all of them: the tasks total stands for the set.
  const auto tasks_total = IntAttribute(span, tracing::kSparkConnectProgressTasksTotalKey);
  if (!tasks_total) return std::nullopt;
  const auto value = [&span](std::string_view key) { return IntAttribute(span, key).value_or(0); };
  SpanProgress progress;
  progress.stages_done = value(tracing::kSparkConnectProgressStagesDoneKey);
  progress.stages_total = value(tracing::kSparkConnectProgressStagesTotalKey);
  progress.tasks_done = value(tracing::kSparkConnectProgressTasksDoneKey);
  progress.tasks_total = *tasks_total;
  progress.input_bytes_read = value(tracing::kSparkConnectProgressInputBytesKey);
  progress.inflight_tasks = value(tracing::kSparkConnectProgressInflightTasksKey);
  progress.updates = value(tracing::kSparkConnectProgressUpdatesKey);
  return progress;
}

bool IsRunningOperationSnapshot(const tracing::Span& span) {
  if (span.name != tracing::kSparkConnectOperationSpanName) return false;
  const auto* state =
      tracing::AttributeValueOf<std::string>(span.attributes, tracing::kSparkConnectOperationStateKey);
  return state != nullptr && *state == tracing::kSparkConnectOperationRunning;
}

}  // namespace sparktrace::traceview
