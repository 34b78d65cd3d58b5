// `sparktrace diagnose`'s SQL executions (report.h): each execution's final plan with its operators'
// metrics in the JSON document (schema atop cli/diagnose_command.cc, rules in docs/diagnose-sql.md),
// and a few lines per execution with its top operators by time in the text report.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/diagnose/json_fields.h"
#include "cli/diagnose/report.h"
#include "cli/diagnose/report_facts.h"
#include "common/units.h"
#include "listener/correlate/sql_plan.h"
#include "listener/correlate/sql_plan_json.h"

namespace sparktrace::cli::diagnose {
namespace {

using listener::correlate::SqlExecutionDetail;
using listener::correlate::SqlMetricSummary;
using Summaries = std::map<std::int64_t, SqlMetricSummary>;

// Text lists at most this many executions (the JSON has them all), each with its top operators.
constexpr std::size_t kTextExecutions = 50;
constexpr std::size_t kTextOperators = 5;
constexpr std::size_t kTextDescriptionBytes = 80;

bool AnyApproximate(const Summaries& summaries) {
  return std::any_of(summaries.begin(), summaries.end(),
                     [](const auto& entry) { return entry.second.approximate; });
}

void WriteExecution(JsonWriter& json, const DiagnosedLog& log, const SqlExecutionDetail& execution) {
  const listener::correlate::ApplicationModel& model = log.model;
  const auto record = model.sql_executions().find(execution.execution_id);
  const listener::correlate::SqlExecutionRecord* times =
      record != model.sql_executions().end() ? &record->second : nullptr;
  const Summaries summaries = model.sql().MetricSummaries(execution.execution_id);
  json.BeginObject().Key("execution_id").Int(execution.execution_id);
  OptionalInt(json.Key("root_execution_id"), times != nullptr ? times->root_execution_id : std::nullopt);
  json.Key("description").String(execution.description);
  OptionalString(json.Key("operation_id"), model.OperationOfSqlExecution(execution.execution_id));
  json.Key("job_ids").BeginArray();
  for (std::int32_t job_id : model.JobsOfSqlExecution(execution.execution_id)) json.Int(job_id);
  json.EndArray();
  OptionalInt(json.Key("start_ms"), times != nullptr ? times->start_ms : std::nullopt);
  OptionalInt(json.Key("end_ms"), times != nullptr ? times->end_ms : std::nullopt);
  // An empty message is a success (Spark 3.5 writes "" then).
  NonEmptyOrNull(json.Key("error_message"),
                 times != nullptr && times->error_message ? *times->error_message : std::string());
  json.Key("plan_version").String(listener::correlate::SqlPlanVersionName(execution.plan_version));
  json.Key("plan_updates").Int(execution.plan_updates);
  json.Key("truncated").Bool(execution.plan.dropped_nodes > 0);
  json.Key("dropped_nodes").Int(execution.plan.dropped_nodes);
  json.Key("limits_hit").BeginArray();
  if (execution.plan.dropped_nodes > 0) json.String("max_plan_nodes");
  if (AnyApproximate(summaries)) json.String("max_task_values");
  json.EndArray().Key("plan");
  if (execution.plan.nodes.empty()) {
    json.Null();
  } else {
    listener::correlate::WriteSqlPlanNode(json, execution.plan, 0,
                                          listener::correlate::CodegenStageIds(execution.plan), summaries);
  }
  json.EndObject();
}

std::string SecondsText(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fs", ms / 1000.0);
  return text;
}

std::string JobList(const std::vector<std::int32_t>& job_ids) {
  if (job_ids.empty()) return "-";
  std::string text;
  for (std::size_t i = 0; i < job_ids.size() && i < 8; ++i)
    text += (i ? "," : "") + std::to_string(job_ids[i]);
  if (job_ids.size() > 8) text += ",… (" + std::to_string(job_ids.size()) + ")";
  return text;
}

}  // namespace

void WriteSqlExecutionsJson(JsonWriter& json, const DiagnosedLog& log) {
  const listener::correlate::SqlExecutionModel& sql = log.model.sql();
  json.Key("sql_executions").BeginArray();
  for (const auto& [id, execution] : sql.executions()) WriteExecution(json, log, execution);
  json.EndArray();
  json.Key("sql_limits").BeginObject();
  json.Key("max_plan_nodes").Int(static_cast<std::int64_t>(log.sql_max_plan_nodes));
  json.Key("max_executions").Int(static_cast<std::int64_t>(sql.limits().max_executions));
  json.Key("max_task_values").Int(static_cast<std::int64_t>(sql.limits().max_task_values));
  json.Key("executions_dropped").Int(sql.counters().executions_dropped);
  json.Key("task_updates_out_of_range").Int(sql.counters().task_updates_out_of_range);
  json.Key("driver_updates_dropped").Int(sql.counters().driver_updates_dropped);
  json.EndObject();
}

void RenderSqlExecutionsText(const DiagnosedLog& log, const std::string& indent, std::string& out) {
  const listener::correlate::ApplicationModel& model = log.model;
  const auto& executions = model.sql().executions();
  if (executions.empty()) return;
  out += indent + "sql executions (" + std::to_string(executions.size()) + ")";
  if (model.sql().counters().executions_dropped > 0)
    out +=
        ", " + std::to_string(model.sql().counters().executions_dropped) + " not kept (--sql-max-executions)";
  out += "\n";
  std::size_t listed = 0;
  for (const auto& [id, execution] : executions) {
    if (listed++ == kTextExecutions) {
      out += indent + "  … " + std::to_string(executions.size() - kTextExecutions) +
             " more (--json has them all)\n";
      break;
    }
    const auto record = model.sql_executions().find(id);
    std::string line = indent + "  sql " + std::to_string(id) + "  ";
    if (record != model.sql_executions().end() && record->second.start_ms && record->second.end_ms) {
      line += SecondsText(static_cast<double>(*record->second.end_ms - *record->second.start_ms));
      if (record->second.error_message && !record->second.error_message->empty()) line += " failed";
    } else {
      line += execution.ended ? "ended" : "no end";
    }
    line += "  jobs " + JobList(model.JobsOfSqlExecution(id));
    if (auto operation = model.OperationOfSqlExecution(id)) line += "  operation " + *operation;
    if (execution.plan_version == listener::correlate::SqlPlanVersion::kAdaptive) line += "  AQE";
    if (execution.plan.dropped_nodes > 0)
      line += "  plan truncated (" + std::to_string(execution.plan.dropped_nodes) + " operators not kept)";
    std::string description = execution.description.substr(0, kTextDescriptionBytes);
    std::replace(description.begin(), description.end(), '\n', ' ');
    if (!description.empty()) line += "  \"" + description + "\"";
    out += line + "\n";
    const Summaries summaries = model.sql().MetricSummaries(id);
    for (const auto& facts :
         listener::correlate::TopOperatorsByTime(execution.plan, summaries, kTextOperators)) {
      const std::string& name = execution.plan.nodes[facts.node].name;
      std::string row =
          fmt::format("{}    #{} {}  task time {}", indent, facts.node, name, SecondsText(facts.time_ms));
      if (facts.output_rows) row += "  rows " + std::to_string(*facts.output_rows);
      if (facts.spill_bytes && *facts.spill_bytes > 0)
        row += "  spill " + FormatByteSize(static_cast<std::uint64_t>(*facts.spill_bytes));
      if (facts.peak_memory_bytes && *facts.peak_memory_bytes > 0)
        row += "  peak " + FormatByteSize(static_cast<std::uint64_t>(*facts.peak_memory_bytes));
      out += row + "\n";
    }
  }
}

}  // namespace sparktrace::cli::diagnose
