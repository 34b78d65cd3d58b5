// The JSON rendering of `sparktrace diagnose` (report.h): the `sparktrace.diagnose/1` document whose
// schema the comment atop cli/diagnose_command.cc states, written with common/json_writer.h.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/diagnose/json_fields.h"
#include "cli/diagnose/report.h"
#include "cli/diagnose/report_facts.h"
#include "common/json_writer.h"
#include "diagnose/cost/cost_json.h"
#include "diagnose/finding.h"
#include "diagnose/finding_words.h"
#include "listener/correlate/connect_server_phases.h"
#include "listener/correlate/phases.h"

namespace diagnosis = sparktrace::diagnose;  // the diagnose module, not cli::diagnose

namespace sparktrace::cli::diagnose {
namespace {

using listener::correlate::ApplicationModel;
using listener::correlate::ConnectOperationRecord;
using listener::correlate::JobRecord;
using listener::correlate::Phase;
using listener::correlate::PhaseBreakdown;
using listener::correlate::StageAttemptRecord;

// A figure as the text report writes it (integers whole, 4 significant digits), or null.
void WriteFigure(JsonWriter& json, std::optional<double> value) {
  if (value && std::isfinite(*value)) {
    json.Raw(diagnosis::NumberWords(*value));
  } else {
    json.Null();
  }
}

void WriteWindow(JsonWriter& json, const std::optional<PhaseBreakdown>& phases) {
  if (!phases) {
    json.Key("window").Null().Key("phases").Null();
    return;
  }
  json.Key("window").BeginObject();
  json.Key("start_ms").Int(phases->window.start_ms).Key("end_ms").Int(phases->window.end_ms);
  json.Key("duration_ms").Int(phases->window.end_ms - phases->window.start_ms).EndObject();
  json.Key("phases").BeginObject();
  for (Phase phase : kReportPhases)
    json.Key(std::string(listener::correlate::PhaseName(phase)) + "_ms").Int(phases->TotalMs(phase));
  json.EndObject();
}

// The attempt page's cost object (diagnose/cost/cost_json.h), or null when the log cannot tell it.
void WriteCost(JsonWriter& json, const sparktrace::diagnose::cost::AttemptCost* cost,
               const sparktrace::diagnose::cost::CostPrices& prices) {
  json.Key("cost");
  if (cost != nullptr) {
    json.Raw(sparktrace::diagnose::cost::CostToJson(*cost, prices).dump());
  } else {
    json.Null();
  }
}

void WriteEvidence(JsonWriter& json, const diagnosis::Evidence& item) {
  json.BeginObject().Key("name").String(item.name).Key("value");
  if (item.text) {
    json.String(*item.text);
  } else {
    WriteFigure(json, item.value);
  }
  json.Key("unit").String(item.unit).Key("threshold");
  WriteFigure(json, item.threshold);
  json.Key("comparison");
  if (item.comparison == diagnosis::Comparison::kNone) {
    json.Null();
  } else {
    json.String(diagnosis::ComparisonSymbol(item.comparison));
  }
  json.EndObject();
}

void WriteFinding(JsonWriter& json, const diagnosis::Finding& finding) {
  json.BeginObject();
  json.Key("id").String(finding.id).Key("key").String(finding.Key());
  json.Key("severity").String(diagnosis::SeverityName(finding.severity));
  json.Key("scope").BeginObject().Key("kind").String(diagnosis::ScopeKindName(finding.scope.kind));
  json.Key("app_id").String(finding.scope.app_id);
  OptionalString(json.Key("operation_id"), finding.scope.operation_id);
  OptionalInt(json.Key("job_id"), finding.scope.job_id);
  OptionalInt(json.Key("stage_id"), finding.scope.stage_id);
  OptionalInt(json.Key("stage_attempt"), finding.scope.stage_attempt);
  NonEmptyOrNull(json.Key("stage_name"), finding.scope.stage_name);
  // Only for plan findings, so that the other scopes keep their shape.
  if (finding.scope.kind == diagnosis::ScopeKind::kSqlOperator) {
    OptionalInt(json.Key("sql_execution_id"), finding.scope.sql_execution_id);
    OptionalInt(json.Key("plan_node_id"), finding.scope.plan_node_id);
    json.Key("plan_node_name").String(finding.scope.plan_node_name);
  }
  json.EndObject();
  json.Key("title").String(finding.title);
  json.Key("evidence").BeginArray();
  for (const diagnosis::Evidence& item : finding.evidence) WriteEvidence(json, item);
  json.EndArray();
  char impact[32];
  std::snprintf(impact, sizeof impact, "%.3f", finding.impact_seconds);
  json.Key("impact_seconds").Raw(impact);
  json.Key("fix").BeginArray();
  for (const std::string& fix : finding.fix) json.String(fix);
  json.EndArray().Key("recipe").String(finding.recipe).Key("related").BeginArray();
  for (const diagnosis::RelatedFinding& link : finding.related) {
    json.BeginObject().Key("key").String(link.key).Key("relation").String(link.relation).EndObject();
  }
  json.EndArray().Key("suppressed");
  if (finding.suppressed) {
    json.BeginObject().Key("reason").String(finding.suppressed->reason);
    json.Key("until").String(finding.suppressed->until).EndObject();
  } else {
    json.Null();
  }
  json.EndObject();
}

void WriteFindings(JsonWriter& json, const std::vector<diagnosis::Finding>& findings) {
  json.Key("findings").BeginArray();
  for (const diagnosis::Finding& finding : findings) WriteFinding(json, finding);
  json.EndArray();
}

void WriteStage(JsonWriter& json, const StageAttemptRecord& stage, std::string_view application_status) {
  const listener::correlate::TaskStatistics& tasks = stage.tasks;
  json.BeginObject();
  json.Key("stage_id").Int(stage.key.stage_id).Key("attempt_id").Int(stage.key.attempt_id);
  json.Key("status").String(StageStatus(stage, application_status));
  OptionalInt(json.Key("start_ms"), stage.StartMs());
  OptionalInt(json.Key("completion_ms"), stage.completion_ms);
  OptionalInt(json.Key("duration_ms"), StageDurationMs(stage));
  json.Key("num_tasks").Int(stage.num_tasks).Key("tasks_ended").Int(tasks.tasks_ended);
  json.Key("failed_tasks").Int(tasks.failed_tasks).Key("killed_tasks").Int(tasks.killed_tasks);
  json.Key("task_duration_ms");
  if (tasks.successful_durations.count() > 0) {
    json.BeginObject();
    OptionalInt(json.Key("p50"), tasks.successful_durations.Quantile(0.5));
    OptionalInt(json.Key("p95"), tasks.successful_durations.Quantile(0.95));
    json.Key("max").Int(tasks.successful_durations.max_ms()).EndObject();
  } else {
    json.Null();
  }
  json.Key("input_bytes").Int(tasks.input_bytes).Key("shuffle_read_bytes").Int(tasks.shuffle_read_bytes);
  json.Key("shuffle_write_bytes").Int(tasks.shuffle_write_bytes).Key("output_bytes").Int(tasks.output_bytes);
  json.Key("memory_spilled_bytes").Int(tasks.memory_bytes_spilled);
  json.Key("disk_spilled_bytes").Int(tasks.disk_bytes_spilled).EndObject();
}

void WriteJob(JsonWriter& json, const ApplicationModel& model, const JobRecord& job,
              std::string_view application_status) {
  json.BeginObject();
  json.Key("job_id").Int(job.job_id).Key("status").String(JobStatus(job, application_status));
  OptionalInt(json.Key("submission_ms"), job.submission_ms);
  OptionalInt(json.Key("completion_ms"), job.completion_ms);
  OptionalInt(json.Key("duration_ms"), JobDurationMs(job));
  OptionalString(json.Key("operation_id"), model.OperationOfJob(job));
  OptionalInt(json.Key("sql_execution_id"), job.sql_execution_id);
  NonEmptyOrNull(json.Key("failure_message"), job.failure_message);
  json.Key("stages").BeginArray();
  for (const StageAttemptRecord* stage : model.StagesOfJob(job.job_id))
    WriteStage(json, *stage, application_status);
  json.EndArray().EndObject();
}

// The Connect server's own split of the operation (connect_server_phases.h); null without any of its
// events.
void WriteServerPhases(JsonWriter& json, const listener::correlate::ConnectServerPhases& phases) {
  json.Key("server_phases");
  if (!phases.any()) {
    json.Null();
    return;
  }
  json.BeginObject();
  OptionalInt(json.Key("analysis_ms"), phases.analysis_ms);
  OptionalInt(json.Key("planning_ms"), phases.planning_ms);
  OptionalInt(json.Key("execution_ms"), phases.execution_ms);
  OptionalInt(json.Key("results_ms"), phases.results_ms);
  json.EndObject();
}

void WriteOperation(JsonWriter& json, const DiagnosedLog& log, const ConnectOperationRecord& operation) {
  const ApplicationModel& model = log.model;
  json.BeginObject();
  json.Key("operation_id").String(operation.operation_id).Key("session_id").String(operation.session_id);
  json.Key("user_id").String(operation.user_id).Key("status").String(OperationStatus(operation));
  WriteWindow(json, listener::correlate::OperationPhases(model, operation));
  WriteServerPhases(json, listener::correlate::ServerPhasesOf(operation));
  json.Key("job_ids").BeginArray();
  for (std::int32_t job_id : model.JobsOfOperation(operation.operation_id)) json.Int(job_id);
  json.EndArray();
  NonEmptyOrNull(json.Key("error_message"), operation.error_message);
  const auto cost = log.operation_costs.find(operation.operation_id);
  WriteCost(json, cost != log.operation_costs.end() ? &cost->second : nullptr, log.prices);
  const auto what_if = log.operation_what_if.find(operation.operation_id);
  json.Key("what_if").Raw(what_if != log.operation_what_if.end() ? diagnosis::WhatIfJsonText(what_if->second)
                                                                 : "null");
  const auto found = log.operation_findings.find(operation.operation_id);
  WriteFindings(json,
                found != log.operation_findings.end() ? found->second : std::vector<diagnosis::Finding>{});
  json.EndObject();
}

void WriteApplication(JsonWriter& json, const DiagnosedLog& log) {
  const ApplicationModel& model = log.model;
  const listener::correlate::ApplicationRecord& app = model.application();
  json.BeginObject();
  json.Key("status").String(ApplicationStatus(log));
  json.Key("log").BeginObject().Key("path").String(log.path).Key("state").String(log.state);
  json.Key("last_line_malformed").Bool(log.last_line_malformed);
  json.Key("lines").Int(static_cast<std::int64_t>(log.counters.lines));
  json.Key("malformed_lines").Int(log.malformed_lines);
  NonEmptyOrNull(json.Key("first_malformed"), log.first_malformed);
  json.Key("dropped_lines").Int(DroppedLines(log));
  json.Key("ignored_events").Int(IgnoredEvents(log)).Key("ignored_event_types").BeginObject();
  for (const auto& [type, count] : log.ignored_event_types) json.Key(type).Int(count);
  json.EndObject().EndObject();
  json.Key("app_id").String(app.app_id);
  OptionalString(json.Key("attempt_id"), app.attempt_id);
  json.Key("app_name").String(app.app_name).Key("spark_user").String(app.spark_user);
  NonEmptyOrNull(json.Key("spark_version"), app.spark_version);
  WriteWindow(json, listener::correlate::ApplicationPhases(model));
  json.Key("executors").BeginObject().Key("added").Int(static_cast<std::int64_t>(model.executors().size()));
  json.Key("removed").Int(ExecutorsRemoved(model)).EndObject();
  WriteCost(json, log.cost ? &*log.cost : nullptr, log.prices);
  json.Key("what_if").Raw(diagnosis::WhatIfJsonText(log.what_if));
  json.Key("jobs").BeginArray();
  for (const auto& [id, job] : model.jobs()) WriteJob(json, model, job, ApplicationStatus(log));
  json.EndArray().Key("operations").BeginArray();
  for (const auto& [id, operation] : model.operations()) WriteOperation(json, log, operation);
  json.EndArray();
  WriteSqlExecutionsJson(json, log);
  WriteFindings(json, log.findings);
  json.EndObject();
}

}  // namespace

std::string RenderDiagnoseJson(const std::vector<DiagnosedLog>& logs,
                               const std::vector<DiagnoseError>& errors) {
  JsonWriter json;
  json.BeginObject().Key("schema").String("sparktrace.diagnose/1").Key("applications").BeginArray();
  for (const DiagnosedLog& log : logs) WriteApplication(json, log);
  json.EndArray().Key("errors").BeginArray();
  for (const DiagnoseError& error : errors)
    json.BeginObject().Key("path").String(error.path).Key("message").String(error.message).EndObject();
  json.EndArray().EndObject();
  return json.Take() + "\n";
}

}  // namespace sparktrace::cli::diagnose
