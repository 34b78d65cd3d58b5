#pragma once
// Waiting, in `sparktrace demo`, for the proxy's spans of the workload to reach the store. The
// proxy exports finished spans in batches (at least every --span-batch-delay), from one queue in
// the order they ended, and an operation span ends after all of its calls. So once every
// operation the workload started has its spark_connect.operation span in the store, so has every
// span of the workload.
//
// Threads: runs on the calling thread, which it blocks between polls (through `pause`).

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/store_location.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::cli::demo {

inline constexpr std::string_view kOperationSpanName = tracing::kSparkConnectOperationSpanName;

// Waits up to `pause(interval)` between polls; returns false to give up (e.g. on Ctrl-C).
using PauseFunction = std::function<bool(std::chrono::milliseconds)>;

inline constexpr std::string_view kLifecycleSpanName = tracing::kSparkConnectLifecycleSpanName;

// Polls the store at `store_path` (read-only; it may not exist yet) until trace `trace_id` holds
// an operation span for each of `operation_ids`, then returns all spans of the trace. With
// `driver_spans`, also until each operation has the driver's side of it: its lifecycle span
// (spark.connect.operation.lifecycle, from the event log) with the driver's "closed" event,
// which Spark writes last for an operation. With `task_span_id`, also until the Airflow task's span
// of that id holds its final state (the report after "running"). Fails (kUnavailable) when `timeout`
// passes or `pause` gives up first, naming what is missing.
Result<std::vector<tracing::Span>> WaitForOperationSpans(const tracing::store::StoreLocation& store_location,
                                                         const tracing::TraceId& trace_id,
                                                         std::span<const std::string> operation_ids,
                                                         bool driver_spans,
                                                         const std::optional<tracing::SpanId>& task_span_id,
                                                         std::chrono::milliseconds timeout,
                                                         const PauseFunction& pause);

// Polls the store until the attempt `key`'s task-index row holds settled figures (the proxy's settler
// computed its cost: traceview/attempt_settler.h; /api/v1/tasks shows them as the row's `cost`), then
// returns the row. Fails (kUnavailable) as WaitForOperationSpans does.
Result<tracing::store::TaskAttemptRow> WaitForSettledAttempt(
    const tracing::store::StoreLocation& store_location, const tracing::store::TaskAttemptKey& key,
    std::chrono::milliseconds timeout, const PauseFunction& pause);

// The operation span of `operation_id` among `spans`, or nullptr.
const tracing::Span* FindOperationSpan(std::span<const tracing::Span> spans, std::string_view operation_id);

// The first span among `spans` named `name` whose parent is `parent`, or nullptr.
const tracing::Span* FindChildSpan(std::span<const tracing::Span> spans, const tracing::Span& parent,
                                   std::string_view name);

// The string attribute `key` of `span`, or "" when absent or not a string.
std::string StringAttribute(const tracing::Span& span, std::string_view key);

}  // namespace sparktrace::cli::demo
