#pragma once
// Where the proxy recorded a Spark Connect operation's span, as the feed's owner looks it up
// (cli/tracing_stack.cc asks the tracer): the parent of that operation's job, stage and phase spans.
//
// Plain values; FindOperationSpan is called on the feed thread.

#include <functional>
#include <optional>
#include <string_view>

#include "feed/application_figures.h"
#include "tracing/span.h"

namespace sparktrace::feed {

// Where the proxy's span of an operation is; nullopt when the proxy never saw that operation.
// With the Airflow task its ExecutePlan named, if any (spark_application_airflow_info).
struct OperationSpanTarget {
  tracing::TraceId trace_id{};
  tracing::SpanId span_id{};
  bool sampled = false;
  std::optional<AirflowTask> airflow_task;
};
using FindOperationSpan = std::function<std::optional<OperationSpanTarget>(std::string_view operation_id)>;

}  // namespace sparktrace::feed
