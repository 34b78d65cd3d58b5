#pragma once
// Which lane of the trace view a span belongs to, and its short label: what the page, the Chrome
// trace and the critical path use to tell the span kinds of docs/tracing.md apart.
//
//   task         airflow.task, the Airflow task's own span
//   rpc          spark.connect.SparkConnectService/<Method> (any SERVER span with rpc.method)
//   operation    spark_connect.operation, the proxy's span of one execution
//   lifecycle    spark.connect.operation.lifecycle, the driver's side of an operation
//   job, stage   spark.job, spark.stage
//   phase        spark.phase.<resource_wait|compute|io_write|idle>
//   application  spark.application, the root of a plain application's trace
//   other        anything else (a client's own spans)
//
// Pure functions; thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracing/span.h"

namespace sparktrace::traceview {

// In display order (the Chrome trace sorts its tracks by it).
enum class Lane : std::uint8_t {
  kTask,
  kRpc,
  kOperation,
  kLifecycle,
  kJob,
  kStage,
  kPhase,
  kApplication,
  kOther,
};
inline constexpr std::size_t kLaneCount = 9;

// "task", "rpc", "operation", "lifecycle", "job", "stage", "phase", "application", "other".
std::string_view LaneName(Lane lane);
Lane LaneOf(const tracing::Span& span);

// Short human label: "ExecutePlan"; "query 0924ae17", "write 0924ae17", "command sql_command
// 0924ae17" (first 8 characters of the operation id); "lifecycle 0924ae17"; "job 12"; "stage 4
// (attempt 1)", with ": <name>" when the span has spark.stage.name; "resource wait", "compute",
// "I/O write", "idle"; "airflow task"; the application's name (else its id); "SQL 7" (a
// spark.sql.execution span, in the other lane); else the span name.
std::string SpanLabel(const tracing::Span& span);

// The driver phase of a phase span ("resource_wait", "compute", "io_write", "idle"; the name's
// suffix after "spark.phase."); empty for a span of another lane.
std::string_view PhaseNameOf(const tracing::Span& span);

// "ok", "error" or "unset": a span's status as the API and the downloads name it.
std::string_view StatusName(tracing::StatusCode code);

// Integer attributes the view reads, also when a producer wrote them as decimal strings.
std::optional<std::int64_t> IntAttribute(const tracing::Span& span, std::string_view key);

}  // namespace sparktrace::traceview
