#pragma once
// The spark.sql.execution span of one SQL execution (docs/tracing.md, "SQL executions"): built by
// span_builder.h under its Connect operation's span, or under the application's root for an
// execution of no operation.
//
//   attributes  spark.sql.execution_id, spark.sql.description (cut), spark.sql.job_ids (at most
//               kMaxJobIds) and spark.sql.job_count, spark.sql.plan_version,
//               spark.sql.operator_count, spark.sql.operator_time_ms, spark.sql.plan_truncated, and
//               spark.sql.plan: the plan document of sql_plan_json.h within `max_plan_bytes`
//   events      spark.sql.operator: the top operators by time (TopOperatorsByTime, at most
//               tracing::kSparkSqlTopOperators), at the execution's end
//   status      error with the execution's error message when it failed
//
// Its id is derived from the execution id and parent (span_ids.h): a running execution ends at
// the log's latest event time and is rebuilt, with the same id, as events arrive.
//
// Threads: pure functions of the model.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "listener/correlate/application_model.h"
#include "tracing/span.h"

namespace sparktrace::listener::correlate {

struct SqlSpanLimits {
  static constexpr std::size_t kMaxJobIds = 64;
  static constexpr std::size_t kMaxDescriptionBytes = 512;
  // The spark.sql.plan attribute (--sql-plan-max-bytes): 2 MiB holds a 2,000-operator plan with
  // five metrics per operator (about 1.1 MiB, some 570 bytes an operator).
  std::size_t max_plan_bytes = std::size_t{2} << 20;
};

struct SqlExecutionSpan {
  tracing::Span span;
  bool ended = false;         // its SQLExecutionEnd was seen
  bool plan_reduced = false;  // the plan attribute lost metrics or nodes to max_plan_bytes
};

// Where the span goes: its trace and parent, the application key its id derives from, and the
// end of anything still running.
struct SqlSpanPlace {
  tracing::TraceId trace{};
  tracing::SpanId parent{};
  std::string application_key;
  events::EpochMillis now_ms = 0;
};

// The executions the model holds that ran for `operation_id` (ApplicationModel::
// OperationOfSqlExecution), or, with nullopt, those of no operation; ascending ids.
std::vector<std::int64_t> SqlExecutionsOfOperation(const ApplicationModel& model,
                                                   std::optional<std::string_view> operation_id);

// nullopt when the model has no start time for the execution (nothing to place in time).
std::optional<SqlExecutionSpan> BuildSqlExecutionSpan(const ApplicationModel& model, std::int64_t execution_id,
                                                      const SqlSpanPlace& place, const SqlSpanLimits& limits);

}  // namespace sparktrace::listener::correlate
