#include "tracing/connect/operation_span.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/units.h"
#include "tracing/connect/span_values.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::connect {
namespace {

// The same keys on the span (the latest figures) and on each progress event (the figures then).
void AddProgressTotals(std::vector<Attribute>& attributes, const ProgressTotals& totals) {
  AddInt(attributes, kSparkConnectProgressStagesDoneKey, totals.stages_done);
  AddInt(attributes, kSparkConnectProgressStagesTotalKey, totals.stages_total);
  AddInt(attributes, kSparkConnectProgressTasksDoneKey, totals.tasks_done);
  AddInt(attributes, kSparkConnectProgressTasksTotalKey, totals.tasks_total);
  AddInt(attributes, kSparkConnectProgressInputBytesKey, totals.input_bytes_read);
  AddInt(attributes, kSparkConnectProgressInflightTasksKey, totals.inflight_tasks);
}

void AddProgress(Span& span, const OperationProgress& progress, const WallClock& clock) {
  if (!progress.any()) return;  // Spark before 4.0: no progress, no keys
  AddProgressTotals(span.attributes, progress.latest());
  AddInt(span.attributes, kSparkConnectProgressUpdatesKey, static_cast<std::int64_t>(progress.updates()));
  if (progress.stages_dropped() > 0)
    AddInt(span.attributes, kSparkConnectProgressStagesDroppedKey, progress.stages_dropped());
  for (const ProgressSample& sample : progress.Samples()) {
    SpanEvent event{std::string(kSparkConnectProgressEventName), clock.UnixNanos(sample.at), {}};
    AddProgressTotals(event.attributes, sample.totals);
    span.events.push_back(std::move(event));
  }
}

// What the final span and a live snapshot share: identity, the request's attributes, the result
// so far, the events and the progress.
Span BuildCommon(const Operation& operation, const WallClock& clock, SteadyTime end) {
  Span span;
  span.trace_id = operation.trace_id;
  span.span_id = operation.span_id;
  span.parent_span_id = operation.parent_span_id;
  span.trace_state = operation.trace_state;
  span.name = std::string(kSparkConnectOperationSpanName);
  span.kind = SpanKind::kInternal;
  span.start_time_unix_nano = clock.UnixNanos(operation.started_at);
  span.end_time_unix_nano = clock.UnixNanos(end);

  auto& attributes = span.attributes;
  if (!operation.operation_id.empty())
    attributes.push_back({std::string(kSparkConnectOperationIdKey), operation.operation_id});
  attributes.insert(attributes.end(), operation.attributes.begin(), operation.attributes.end());
  if (!operation.server_side_session_id.empty()) {
    attributes.push_back(
        {std::string(kSparkConnectServerSideSessionIdKey), operation.server_side_session_id});
  }
  return span;
}

void AddResultAndEvents(Span& span, const Operation& operation, const WallClock& clock) {
  auto& attributes = span.attributes;
  AddInt(attributes, kSparkConnectResultRowsKey, operation.rows);
  AddInt(attributes, kSparkConnectResultArrowBytesKey, static_cast<std::int64_t>(operation.arrow_bytes));
  AddInt(attributes, kSparkConnectResultBatchesKey, static_cast<std::int64_t>(operation.batches));
  AddInt(attributes, kSparkConnectReattachCountKey, static_cast<std::int64_t>(operation.reattaches));
  if (operation.first_batch_at) {
    attributes.push_back({std::string(kSparkConnectTimeToFirstBatchMsKey),
                          FractionalMilliseconds(*operation.first_batch_at - operation.started_at)});
  }
  if (operation.dropped_events > 0) AddInt(attributes, kDroppedEventsKey, operation.dropped_events);
  for (const OperationEvent& event : operation.events) {
    span.events.push_back({event.name, clock.UnixNanos(event.at), event.attributes});
  }
  AddProgress(span, operation.progress, clock);
  // In time order, as a reader of any span expects: the milestones (first response, first batch)
  // and the progress samples interleave. Stable: events of one instant keep their recorded order.
  std::stable_sort(span.events.begin(), span.events.end(), [](const SpanEvent& a, const SpanEvent& b) {
    return a.time_unix_nano < b.time_unix_nano;
  });
}

}  // namespace

Span BuildOperationSpan(const Operation& operation, const WallClock& clock) {
  Span span = BuildCommon(operation, clock, operation.end_time());
  const OperationEnding& ending = *operation.ending;
  span.attributes.push_back(
      {std::string(kSparkConnectOperationOutcomeKey), std::string(OperationOutcomeName(ending.outcome))});
  AddResultAndEvents(span, operation, clock);
  if (ending.outcome == OperationOutcome::kFailed) {
    span.status_code = StatusCode::kError;
    span.status_message = ending.status_message;
  }
  return span;
}

Span BuildRunningOperationSpan(const Operation& operation, const WallClock& clock, SteadyTime now) {
  Span span = BuildCommon(operation, clock, std::max(now, operation.started_at));
  span.attributes.push_back(
      {std::string(kSparkConnectOperationStateKey), std::string(kSparkConnectOperationRunning)});
  // The result counts of a stream go over when its call ends: so far, those of ended calls.
  AddResultAndEvents(span, operation, clock);
  return span;
}

}  // namespace sparktrace::tracing::connect
