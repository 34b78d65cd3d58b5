#include "listener/correlate/sql_execution_span.h"

#include <algorithm>
#include <utility>

#include "common/utf8.h"
#include "listener/correlate/span_builder.h"
#include "listener/correlate/span_ids.h"
#include "listener/correlate/sql_plan.h"
#include "listener/correlate/sql_plan_json.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::listener::correlate {
namespace {

using tracing::Attribute;
using tracing::Span;

void Add(Span& span, std::string_view key, tracing::AttributeValue value) {
  span.attributes.push_back(Attribute{std::string(key), std::move(value)});
}

void AddOperatorEvents(Span& span, const events::SqlPlan& plan, const SqlMetricSummaries& summaries) {
  std::int64_t rank = 0;
  for (const SqlOperatorFacts& facts : TopOperatorsByTime(plan, summaries, tracing::kSparkSqlTopOperators)) {
    tracing::SpanEvent event{std::string(tracing::kSparkSqlOperatorEvent), span.end_time_unix_nano, {}};
    event.attributes.push_back({std::string(tracing::kSparkSqlOperatorRankKey), ++rank});
    event.attributes.push_back({std::string(tracing::kSparkSqlOperatorNodeIdKey), std::int64_t{facts.node}});
    event.attributes.push_back({std::string(tracing::kSparkSqlOperatorNameKey), plan.nodes[facts.node].name});
    event.attributes.push_back({std::string(tracing::kSparkSqlOperatorTimeMsKey), facts.time_ms});
    if (facts.output_rows)
      event.attributes.push_back({std::string(tracing::kSparkSqlOperatorRowsKey), *facts.output_rows});
    if (facts.spill_bytes)
      event.attributes.push_back({std::string(tracing::kSparkSqlOperatorSpillBytesKey), *facts.spill_bytes});
    if (facts.peak_memory_bytes) {
      event.attributes.push_back(
          {std::string(tracing::kSparkSqlOperatorPeakMemoryKey), *facts.peak_memory_bytes});
    }
    span.events.push_back(std::move(event));
  }
}

}  // namespace

std::vector<std::int64_t> SqlExecutionsOfOperation(const ApplicationModel& model,
                                                   std::optional<std::string_view> operation_id) {
  std::vector<std::int64_t> ids;
  for (const auto& [execution_id, record] : model.sql_executions()) {
    const std::optional<std::string> operation = model.OperationOfSqlExecution(execution_id);
    const bool matches = operation_id ? (operation && *operation == *operation_id) : !operation;
    if (matches) ids.push_back(execution_id);
  }
  return ids;
}

std::optional<SqlExecutionSpan> BuildSqlExecutionSpan(const ApplicationModel& model, std::int64_t execution_id,
                                                      const SqlSpanPlace& place, const SqlSpanLimits& limits) {
  const auto record = model.sql_executions().find(execution_id);
  if (record == model.sql_executions().end() || !record->second.start_ms) return std::nullopt;
  const SqlExecutionRecord& times = record->second;
  SqlExecutionSpan built;
  built.ended = times.end_ms.has_value();
  Span& span = built.span;
  span.trace_id = place.trace;
  span.span_id = DerivedSpanId(place.application_key, place.parent, "sql/" + std::to_string(execution_id));
  span.parent_span_id = place.parent;
  span.name = std::string(tracing::kSparkSqlExecutionSpanName);
  span.kind = tracing::SpanKind::kInternal;
  span.start_time_unix_nano = MillisToUnixNanos(*times.start_ms);
  span.end_time_unix_nano = MillisToUnixNanos(std::max(*times.start_ms, times.end_ms.value_or(place.now_ms)));
  Add(span, tracing::kSparkSqlExecutionIdKey, execution_id);

  const std::vector<std::int32_t> job_ids = model.JobsOfSqlExecution(execution_id);
  std::vector<std::string> listed;
  for (std::size_t i = 0; i < job_ids.size() && i < SqlSpanLimits::kMaxJobIds; ++i)
    listed.push_back(std::to_string(job_ids[i]));
  Add(span, tracing::kSparkSqlJobIdsKey, std::move(listed));
  Add(span, tracing::kSparkSqlJobCountKey, static_cast<std::int64_t>(job_ids.size()));
  // An empty message is a success (Spark 3.5 writes "" then).
  if (times.error_message && !times.error_message->empty()) {
    span.status_code = tracing::StatusCode::kError;
    span.status_message = *times.error_message;
  }

  const SqlExecutionDetail* detail = model.sql().Find(execution_id);
  if (detail == nullptr) {
    Add(span, tracing::kSparkSqlPlanVersionKey, std::string(SqlPlanVersionName(SqlPlanVersion::kNone)));
    return built;
  }
  Add(span, tracing::kSparkSqlDescriptionKey, std::string(Utf8Prefix(detail->description, SqlSpanLimits::kMaxDescriptionBytes)));
  Add(span, tracing::kSparkSqlPlanVersionKey, std::string(SqlPlanVersionName(detail->plan_version)));
  Add(span, tracing::kSparkSqlOperatorCountKey, static_cast<std::int64_t>(detail->plan.nodes.size()));
  const SqlMetricSummaries summaries = model.sql().MetricSummaries(execution_id);
  Add(span, tracing::kSparkSqlTotalOperatorTimeMsKey, TotalOperatorTimeMs(detail->plan, summaries));
  // A bound of 0 is the operator's choice to leave plans off, not a plan reduced.
  BoundedSqlPlanJson plan;
  if (limits.max_plan_bytes > 0) plan = SqlPlanJsonWithin(detail->plan, summaries, limits.max_plan_bytes);
  built.plan_reduced = plan.Reduced();
  Add(span, tracing::kSparkSqlPlanTruncatedKey, detail->plan.dropped_nodes > 0 || plan.Reduced());
  if (!plan.json.empty()) Add(span, tracing::kSparkSqlPlanKey, std::move(plan.json));
  AddOperatorEvents(span, detail->plan, summaries);
  return built;
}

}  // namespace sparktrace::listener::correlate
