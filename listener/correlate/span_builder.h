#pragma once
// Span building: turns an ApplicationModel into tracing::Spans, with the driver's own timestamps.
//
// For a Spark Connect operation (BuildOperationSpans), under the proxy's operation span, which the
// caller names by OperationSpanRef:
//
//   <operation span, the proxy's>
//   ├── spark.connect.operation.lifecycle   Started → Closed (or the terminal event), with span
//   │                                        events started/analyzed/ready/finished/failed/
//   │                                        canceled/closed at the driver's times
//   ├── spark.sql.execution                  one per SQL execution of the operation, its plan and
//   │                                        top operators on it (sql_execution_span.h)
//   ├── spark.job                            one per job of the operation (tag or SQL execution)
//   │   └── spark.stage                      one per stage attempt run for that job
//   └── spark.phase.<name>                   one per contiguous phase interval of the operation
//
// For an application (BuildApplicationSpans), a trace of its own (ApplicationTraceId):
//
//   spark.application                        root; phase totals as spark.phase.<name>.ms
//   ├── spark.sql.execution                  SQL executions of no Connect operation
//   ├── spark.job → spark.stage              jobs of no Connect operation (those are in their
//   │                                        operation's trace), and stage attempts no job lists
//   └── spark.phase.<name>                   one per contiguous phase interval of the application
//
// Phase spans are one span per contiguous interval (the timeline shows when, not only how much),
// each with its phase's total over the window as spark.phase.total_ms, at most
// SpanBuildOptions::max_phase_spans per window; intervals beyond are not emitted and are counted
// in BuiltSpans::dropped_phase_intervals (the totals still include them).
//
// Ids are deterministic (span_ids.h): building again after more events arrived (a job that ends
// after the operation span was exported) gives the same ids and parents, so a store replacing by
// (trace id, span id) keeps the latest. Something still running ends at the latest event time of
// the log, has spark.job.status "running", and is listed in BuiltSpans::open: such a version is
// for the store only (the feed submits it live), never for OTLP, whose spans are immutable once
// sent. A span is open until its own end event: a stage or job until its StageCompleted / JobEnd,
// the lifecycle until Closed, the application root until ApplicationEnd, and phase intervals
// until their window (the operation, the application) is over. Once the application is over
// (ApplicationEnd, or SpanBuildOptions::application_over: its log completed or was abandoned),
// nothing is open any more: what never got its end event ends at the last event time with
// sparktrace.incomplete=true (a job's status is then "unknown"). A limit: when the number of
// phase intervals shrinks between two live builds, spans of the vanished indices stay in the store.
//
// Pure functions of the model; thread-safe for concurrent readers of one model.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/sql_execution_span.h"
#include "tracing/span.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::listener::correlate {

// The proxy's span for the operation: the trace it is in and its span id, the parent of the
// driver-side spans.
struct OperationSpanRef {
  tracing::TraceId trace{};
  tracing::SpanId parent{};
};

struct SpanBuildOptions {
  std::size_t max_phase_spans = 256;  // per window (operation or application)
  // BuildOperationSpans: the operation is a write command (the proxy's spark.connect.command is
  // write_operation, write_operation_v2, ...), so its jobs' result stages are io_write (phases.h).
  bool write_command = false;
  // The application is over although the model has no ApplicationEnd (its log completed without
  // one, or was abandoned for a rewritten one): end whatever is still open.
  bool application_over = false;
  // The spark.sql.execution spans' bounds (the plan attribute's size).
  SqlSpanLimits sql{};
};

// The attribute on a span that was still open when its application ended or its log was abandoned.
inline constexpr std::string_view kIncompleteAttribute = tracing::kIncompleteKey;

struct BuiltSpans {
  std::vector<tracing::Span> spans;
  std::vector<tracing::SpanId> open;  // ids of the spans above that have not ended yet
  std::int64_t dropped_phase_intervals = 0;
  // spark.sql.execution spans whose plan attribute lost metrics or nodes to SqlSpanLimits.
  std::int64_t sql_plans_reduced = 0;

  bool IsOpen(const tracing::SpanId& id) const;
};

// Spans of one Connect operation (by operation id). Empty when the model knows nothing of it.
BuiltSpans BuildOperationSpans(const ApplicationModel& model, std::string_view operation_id,
                               const OperationSpanRef& operation_span, const SpanBuildOptions& options = {});

// The application's own trace. Empty before its ApplicationStart.
BuiltSpans BuildApplicationSpans(const ApplicationModel& model, const SpanBuildOptions& options = {});

// Where the spans of what has not ended end: the application's end, else its last event.
events::EpochMillis SpanNowMs(const ApplicationModel& model);

// The window of an operation's lifecycle span: its first lifecycle event to its last, or to `now_ms`
// while it has not ended (no terminal event). nullopt without lifecycle events (an operation known
// from job tags only has no lifecycle span).
std::optional<TimeWindow> LifecycleWindow(const ConnectOperationRecord& operation,
                                          events::EpochMillis now_ms);

// Epoch milliseconds → OTLP nanoseconds (negative times, which Spark never writes, become 0).
std::uint64_t MillisToUnixNanos(events::EpochMillis time_ms);

}  // namespace sparktrace::listener::correlate
