#pragma once
// What `sparktrace diagnose` found in its inputs, and its two renderings: aligned text for people
// and the `sparktrace.diagnose/1` JSON document (schema: the comment atop diagnose_command.cc and
// docs/diagnose-rules.md for the findings).
// Pure functions of already-read logs: no file access here.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json_writer.h"
#include "diagnose/finding.h"
#include "diagnose/what_if_report.h"
#include "listener/correlate/application_model.h"
#include "listener/eventlog/feed_counters.h"
#include "diagnose/cost/cost_model.h"

namespace sparktrace::cli::diagnose {

// One application log (single file or rolling directory), read to its end.
struct DiagnosedLog {
  std::string path;   // the log's id: its path without ".inprogress", or the eventlog_v2_ directory
  std::string state;  // listener::eventlog::LogStateName: complete, in_progress, failed, unsupported
  listener::eventlog::LogCounters counters;
  // The last line delivered was not an event: a log whose writer stopped mid-line (once the file
  // is complete, its cut-off last line is delivered and fails to parse).
  bool last_line_malformed = false;
  // Lines that are not a Spark event (bad JSON, missing fields): counted and skipped.
  std::int64_t malformed_lines = 0;
  std::string first_malformed;  // "line N: <parser message>" of the first one; empty when none
  // Valid events of types the model does not use (or does not know), by their "Event" value.
  std::map<std::string, std::int64_t> ignored_event_types;
  listener::correlate::ApplicationModel model;
  // The parser's bound on a plan's operators (--sql-max-plan-nodes) the log was read with.
  std::size_t sql_max_plan_nodes = 0;
  // What the diagnosis rules found (diagnose/diagnose.h), most impactful first: for the
  // application, and per Connect operation id.
  std::vector<sparktrace::diagnose::Finding> findings;
  std::map<std::string, std::vector<sparktrace::diagnose::Finding>> operation_findings;
  // What the application and each operation cost (cli/diagnose/cost.h), priced with `prices`.
  std::optional<sparktrace::diagnose::cost::AttemptCost> cost;
  std::map<std::string, sparktrace::diagnose::cost::AttemptCost> operation_costs;
  sparktrace::diagnose::cost::CostPrices prices;
  // What-if estimates (diagnose/what_if_report.h): the application's, and per operation id.
  sparktrace::diagnose::WhatIfReport what_if;
  std::map<std::string, sparktrace::diagnose::WhatIfReport> operation_what_if;
};

// An input that could not be read (whole or in part). `path` is the argument or log it concerns.
struct DiagnoseError {
  std::string path;
  std::string message;
};

// What the log says of its application, as opposed to the file's state: "ended" (it has the
// ApplicationEnd), "in_progress" (no ApplicationEnd yet, and the driver may still be writing: the
// file is .inprogress) or "truncated" (no ApplicationEnd, and nothing more will come: the file is
// complete, or cannot be read further). Jobs and stages without their end event are "running"
// only in_progress; otherwise their status is "unknown".
std::string_view ApplicationStatus(const DiagnosedLog& log);

std::string RenderDiagnoseText(const std::vector<DiagnosedLog>& logs);
// The application's "sql_executions" and "sql_limits" (sql_report.cc), as keys of the object open.
void WriteSqlExecutionsJson(JsonWriter& json, const DiagnosedLog& log);
// Its SQL executions with their top operators, indented by `indent`; nothing without any.
void RenderSqlExecutionsText(const DiagnosedLog& log, const std::string& indent, std::string& out);
std::string RenderDiagnoseJson(const std::vector<DiagnosedLog>& logs,
                               const std::vector<DiagnoseError>& errors);

}  // namespace sparktrace::cli::diagnose
