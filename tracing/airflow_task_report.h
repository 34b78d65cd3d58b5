#pragma once
// Airflow's own task attempt as the Airflow plugin reports it (POST /api/v1/airflow/task-attempts,
// docs/tracing.md "Airflow's own task"): read from the report's JSON, checked field by field, and
// turned into the attempt's "airflow.task" span, the root that the attempt's operation spans hang
// under. With it the attempt's wall time is Airflow's, not only the Spark part, and the time
// outside Spark (before the first call, between calls, after the last) becomes visible.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "tracing/airflow_identity.h"
#include "tracing/span.h"
#include "tracing/span_vocabulary.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing {

// A report is a few hundred bytes; the route refuses larger bodies before reading them.
inline constexpr std::size_t kMaxAirflowTaskReportBytes = std::size_t{64} * 1024;
// Airflow's TaskInstanceState values are short lower-case words ("up_for_reschedule" is the longest).
inline constexpr std::size_t kMaxAirflowStateLength = 32;
// A Python class name, a host name (RFC 1123: 253), a version string.
inline constexpr std::size_t kMaxOperatorLength = 250;
inline constexpr std::size_t kMaxHostnameLength = 253;
inline constexpr std::size_t kMaxAirflowVersionLength = 64;
// The latest time a report may name: the last nanosecond a signed 64-bit count holds (2262-04-11).
// Spans keep their times as int64 in the stores; a later one would wrap negative there, and the next
// retention pass would take the attempt for ancient and delete it.
inline constexpr std::uint64_t kMaxReportUnixNano = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
// How far past the receiving proxy's clock a report's end may lie (clocks of different hosts
// disagree a little; a task does not end tomorrow). The route checks it (ReportEndIsPlausible).
inline constexpr std::uint64_t kMaxReportClockSkewNanos = std::uint64_t{24} * 3600 * 1'000'000'000;

struct AirflowTaskReport {
  AirflowIdentity identity;
  std::string state;           // Airflow's TaskInstanceState value: "running", "success", "failed", ...
  std::string operator_class;  // e.g. "SparkSubmitOperator"; "" when not reported
  std::string hostname;        // the worker; "" when not reported
  std::string airflow_version;
  std::uint64_t start_unix_nano = 0;
  std::uint64_t end_unix_nano = 0;  // for "running": when the report was made
  // The span context the plugin sent on the task's calls (Airflow's task span, or the derived one).
  std::optional<Traceparent> traceparent;
  std::string tracestate;

  bool running() const { return state == "running"; }
};

// The JSON object of one report. Unknown fields are ignored (a newer plugin may send more); a missing
// or malformed known field is an error whose message names the field and never echoes its value.
Result<AirflowTaskReport> ParseAirflowTaskReport(std::string_view json);
// An error naming end_time_unix_nano when the report ends more than kMaxReportClockSkewNanos after
// `now_unix_nano` (the receiving proxy's clock).
Result<void> CheckReportEndIsPlausible(const AirflowTaskReport& report, std::uint64_t now_unix_nano);

// The report as the plugin sends it (what ParseAirflowTaskReport reads back): for `sparktrace demo`,
// which plays the plugin, and tests.
std::string AirflowTaskReportJson(const AirflowTaskReport& report);

// The ids the report's span takes, and how its trace is sampled: the traceparent's trace, its parent
// id as the span id (the task's own span, which the proxy's operations already name as their
// parent) and its flag; without one, the attempt's derived ids (DeriveTraceId, DeriveTaskSpanId),
// sampled as the proxy samples the attempt's calls.
// A mapped instance (map_index >= 0) with a traceparent takes the traceparent's trace but a span id
// of its own, DeriveTaskSpanId of its identity, as a child of the traceparent's span: Airflow 2.10
// gives every mapped instance of a task one span id (its gen_span_id leaves the map index out), so
// that id cannot be each instance's task span; a report taking it would speak for its siblings.
struct TaskSpanContext {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};             // all zeros: a root
  bool own_span_id = false;            // the span id is sparktrace's (derived), not Airflow's
  std::optional<bool> parent_sampled;  // set when the report carried a traceparent
  std::string tracestate;
};
TaskSpanContext TaskSpanContextOf(const AirflowTaskReport& report);

// Named "airflow.task", kind INTERNAL, a root; the airflow.* identity attributes the store indexes,
// airflow.task.state / .operator / .hostname and airflow.version. A task that ended failed or up for
// retry has status ERROR (what tracing backends show as a failed span); the attempt's Spark state is
// decided by its operations, not by this span.
Span MakeAirflowTaskSpan(const AirflowTaskReport& report, const TaskSpanContext& context);

}  // namespace sparktrace::tracing
