#include "traceview/sql_executions_json.h"

#include <algorithm>

#include "traceview/attempt_url.h"
#include "traceview/span_lanes.h"
#include "traceview/view_time.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

using tracing::Attribute;
using tracing::AttributeValueOf;
using tracing::Span;

void WriteOptionalInt(JsonWriter& out, const std::vector<Attribute>& attributes, std::string_view key) {
  if (const auto* value = AttributeValueOf<std::int64_t>(attributes, key)) {
    out.Int(*value);
  } else {
    out.Null();
  }
}

double DoubleOf(const std::vector<Attribute>& attributes, std::string_view key) {
  if (const auto* value = AttributeValueOf<double>(attributes, key)) return *value;
  if (const auto* value = AttributeValueOf<std::int64_t>(attributes, key)) return static_cast<double>(*value);
  return 0;
}

std::string StringOf(const std::vector<Attribute>& attributes, std::string_view key) {
  const auto* value = AttributeValueOf<std::string>(attributes, key);
  return value != nullptr ? *value : std::string();
}

void WriteTopOperators(JsonWriter& out, const Span& span) {
  out.Key("top_operators").BeginArray();
  for (const tracing::SpanEvent& event : span.events) {
    if (event.name != tracing::kSparkSqlOperatorEvent) continue;
    out.BeginObject();
    out.Key("node_id");
    WriteOptionalInt(out, event.attributes, tracing::kSparkSqlOperatorNodeIdKey);
    out.Key("name").String(StringOf(event.attributes, tracing::kSparkSqlOperatorNameKey));
    out.Key("time_ms").Double(DoubleOf(event.attributes, tracing::kSparkSqlOperatorTimeMsKey));
    out.Key("rows");
    WriteOptionalInt(out, event.attributes, tracing::kSparkSqlOperatorRowsKey);
    out.Key("spill_bytes");
    WriteOptionalInt(out, event.attributes, tracing::kSparkSqlOperatorSpillBytesKey);
    out.Key("peak_memory_bytes");
    WriteOptionalInt(out, event.attributes, tracing::kSparkSqlOperatorPeakMemoryKey);
    out.EndObject();
  }
  out.EndArray();
}

}  // namespace

void WriteSqlExecutions(JsonWriter& out, std::span<const Span> spans, const std::vector<std::string>& hex_ids,
                        const std::vector<std::optional<std::size_t>>& parent) {
  std::vector<std::size_t> executions;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].name == tracing::kSparkSqlExecutionSpanName) executions.push_back(i);
  }
  std::stable_sort(executions.begin(), executions.end(), [&spans](std::size_t a, std::size_t b) {
    return spans[a].start_time_unix_nano < spans[b].start_time_unix_nano;
  });
  out.BeginArray();
  for (std::size_t index : executions) {
    const Span& span = spans[index];
    const std::vector<Attribute>& attributes = span.attributes;
    const std::string trace_hex = tracing::ToHex(span.trace_id);
    out.BeginObject();
    out.Key("span_id").String(hex_ids[index]);
    out.Key("trace_id").String(trace_hex);
    out.Key("parent_id").String(parent[index] ? std::string_view(hex_ids[*parent[index]]) : std::string_view());
    out.Key("execution_id");
    WriteOptionalInt(out, attributes, tracing::kSparkSqlExecutionIdKey);
    out.Key("description").String(StringOf(attributes, tracing::kSparkSqlDescriptionKey));
    out.Key("status").String(StatusName(span.status_code));
    out.Key("status_message").String(span.status_message);
    out.Key("start_ms").Double(SpanStartMs(span));
    out.Key("end_ms").Double(SpanEndMs(span));
    out.Key("job_ids").BeginArray();
    if (const auto* jobs = AttributeValueOf<std::vector<std::string>>(attributes, tracing::kSparkSqlJobIdsKey)) {
      for (const std::string& job : *jobs) out.String(job);
    }
    out.EndArray();
    out.Key("plan_version").String(StringOf(attributes, tracing::kSparkSqlPlanVersionKey));
    out.Key("operator_count");
    WriteOptionalInt(out, attributes, tracing::kSparkSqlOperatorCountKey);
    out.Key("operator_time_ms").Double(DoubleOf(attributes, tracing::kSparkSqlTotalOperatorTimeMsKey));
    const auto* truncated = AttributeValueOf<bool>(attributes, tracing::kSparkSqlPlanTruncatedKey);
    out.Key("plan_truncated").Bool(truncated != nullptr && *truncated);
    if (AttributeValueOf<std::string>(attributes, tracing::kSparkSqlPlanKey) != nullptr) {
      out.Key("plan_href").String(SqlPlanApiHref(trace_hex, hex_ids[index]));
    } else {
      out.Key("plan_href").Null();
    }
    WriteTopOperators(out, span);
    out.EndObject();
  }
  out.EndArray();
}

}  // namespace sparktrace::traceview
