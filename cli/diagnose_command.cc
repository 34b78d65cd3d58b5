// `sparktrace diagnose`: offline reading of Spark event logs into phase breakdowns and job/stage
// timelines, with the listener's own feed (listener/eventlog), parser (listener/events) and model
// (listener/correlate), so that what it prints is what the live correlation would compute.
//
// JSON output (--json), schema "sparktrace.diagnose/1". One document:
//   {
//     "schema": "sparktrace.diagnose/1",
//     "applications": [Application...],   // one per application log, in argument order
//     "errors": [{"path": string, "message": string}...]  // inputs (or logs) that could not be read
//   }
// Times are epoch milliseconds, durations milliseconds, sizes bytes; null when the log does not say.
//   Application = {
//     "status": "ended"|"in_progress"|"truncated",  // the application, by its log: ApplicationEnd
//                                              // seen; none yet (.inprogress); none and no more to
//                                              // come. Not ended: jobs/stages without their end are
//                                              // "running" in_progress, "unknown" truncated.
//     "log": {"path": string, "state": "complete"|"in_progress"|"failed"|"unsupported",  // the file
//             "last_line_malformed": bool,     // e.g. cut off mid-JSON by a writer that stopped
//             "lines": int, "malformed_lines": int, "first_malformed": string|null,
//             "dropped_lines": int,            // blank, oversized or cut-off lines the feed skipped
//             "ignored_events": int,           // valid events of types not modelled (or unknown)
//             "ignored_event_types": {type: int...}},
//     "app_id": string, "attempt_id": string|null, "app_name": string, "spark_user": string,
//     "spark_version": string|null,
//     "window": Window|null,                   // null without an ApplicationStart
//     "phases": Phases|null,
//     "executors": {"added": int, "removed": int},
//     "cost": Cost|null,                       // the whole application (null: cores not logged)
//     "what_if": WhatIf|null,                  // simulated wall time on other clusters (null: no
//                                              // stage, or no executor in the log)
//     "jobs": [Job...],                         // by job id
//     "operations": [Operation...],             // Spark Connect operations, by operation id
//     "sql_executions": [SqlExecution...],      // by execution id; [] for a log without SQL events
//     "sql_limits": {"max_plan_nodes": int, "max_executions": int, "max_task_values": int,
//                    "executions_dropped": int, "task_updates_out_of_range": int,
//                    "driver_updates_dropped": int}
//   }
//   SqlExecution = {"execution_id": int, "root_execution_id": int|null, "description": string,
//          "operation_id": string|null, "job_ids": [int...], "start_ms": int|null, "end_ms": int|null,
//          "error_message": string|null, "plan_version": "initial"|"adaptive"|"none",
//          "plan_updates": int,                 // AQE plan updates seen
//          "truncated": bool, "dropped_nodes": int,   // operators past --sql-max-plan-nodes
//          "limits_hit": [string...],           // "max_plan_nodes", "max_task_values"
//          "plan": Node|null}                   // the final plan: last AQE update, else the start's
//   Node = {"id": int,                           // pre-order index in the plan
//           "name": string, "detail": string,    // nodeName; simpleString cut to 200 bytes
//           "codegen_stage": int|null,           // the WholeStageCodegen stage it runs in
//           "stage_ids": [int...],               // stages whose tasks reported its metrics
//           "metrics": [Metric...], "children": [Node...]}
//   Metric = {"name": string, "accumulator_id": int,
//             "type": "sum"|"size"|"timing"|"nsTiming"|"average"|string,
//             "unit": "count"|"bytes"|"ms"|"ns"|"average"|"",
//             "total": number, "min": number|null, "median": number|null, "max": number|null,
//             "values": int,                   // values aggregated (tasks, zero-filled ones, driver)
//             "approximate": bool}             // median from thinned values (--sql-max-task-values)
//   (aggregation exactly as Spark's SQL UI, units and bounds: docs/diagnose-sql.md)
//   Window = {"start_ms": int, "end_ms": int, "duration_ms": int}
//   Phases = {"resource_wait_ms": int, "compute_ms": int, "io_write_ms": int, "idle_ms": int}
//            (they sum to the window's duration; definitions in listener/correlate/phases.h)
//   Job = {"job_id": int, "status": "running"|"succeeded"|"failed"|"unknown",
//          "submission_ms": int|null, "completion_ms": int|null, "duration_ms": int|null,
//          "operation_id": string|null, "sql_execution_id": int|null, "failure_message": string|null,
//          "stages": [Stage...]}
//   Stage = {"stage_id": int, "attempt_id": int, "status": "complete"|"failed"|"running"|"unknown",
//            "start_ms": int|null, "completion_ms": int|null, "duration_ms": int|null,
//            "num_tasks": int, "tasks_ended": int, "failed_tasks": int, "killed_tasks": int,
//            "task_duration_ms": {"p50": int, "p95": int, "max": int}|null,   // successful tasks
//            "input_bytes": int, "shuffle_read_bytes": int, "shuffle_write_bytes": int,
//            "output_bytes": int, "memory_spilled_bytes": int, "disk_spilled_bytes": int}
//   Operation = {"operation_id": string, "session_id": string, "user_id": string,
//                "status": "running"|"finished"|"failed"|"canceled"|"closed",
//                "window": Window|null, "phases": Phases|null, "job_ids": [int...],
//                "server_phases": {"analysis_ms", "planning_ms", "execution_ms", "results_ms": int|null}|null,
//                                                // the Connect server's own split, from its operation
//                                                // events (listener/correlate/connect_server_phases.h)
//                "error_message": string|null,
//                "cost": Cost|null,              // as an attempt of this operation alone
//                "what_if": WhatIf|null,         // the operation's own jobs in its window
//                "findings": [Finding...]}      // the operation's own (diagnose/diagnose.h)
//   Cost = the attempt page's cost object (docs/trace-view-api.md, "Cost"): {"core_seconds",
//          "executor_core_seconds", "driver_core_seconds", "gib_seconds"|null, "used_core_seconds",
//          "idle_fraction"|null, "shared", "other_operations", "share", "basis",
//          "money": {"total", "cores", "memory", "core_hour", "gib_hour"}|null}
//   WhatIf = {"anchoring": "ratio", "estimates": [{"name", "label", "sentence",
//             "executors": int|null, "slots": int, "estimated_ms", "measured_ms", "saving_ms",
//             "simulated_ms", "simulated_today_ms", "answers": [finding id...]}...],
//             "replay": {"settled_at_ms", "jobs", "measured_ms", "simulated_ms"}|null}
//            (diagnose/what_if/what_if_json.h; scenarios and anchoring: docs/diagnose-rules.md)
//   Application also has "findings": [Finding...], most impactful first:
//   Finding = {"id": string, "key": string, "severity": "info"|"warning"|"critical",
//              "scope": {"kind": "application"|"operation"|"job"|"stage"|"sql-operator", "app_id": string,
//                        "operation_id": string|null, "job_id": int|null, "stage_id": int|null,
//                        "stage_attempt": int|null, "stage_name": string|null,
//                        and for "sql-operator" only: "sql_execution_id": int,
//                        "plan_node_id": int (the node's "id" in sql_executions[].plan),
//                        "plan_node_name": string},
//              "title": string,
//              "evidence": [{"name": string, "value": number|string|null, "unit": string,
//                            "threshold": number|null, "comparison": ">="|"<="|null}...],
//              "impact_seconds": number, "fix": [string...], "recipe": string,
//              "related": [{"key": string, "relation": "causes"|"caused-by"|"same-cause"|"summarises"}...],
//              "suppressed": {"reason": string, "until": "YYYY-MM-DD"}|null}
//   (rule ids, thresholds and the rules file: docs/diagnose-rules.md). With --regressions, logs of
//   one application name are the runs of one job: a run 25 % and 60 s slower than the median of the
//   earlier successful ones has a "regression" finding (cli/diagnose/regression.h).

#include "cli/diagnose_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "cli/cost_flags.h"
#include "cli/diagnose/cost.h"
#include "cli/diagnose/regression.h"
#include "cli/diagnose/report.h"
#include "common/flag_values.h"
#include "common/flags.h"
#include "common/logging.h"
#include "diagnose/diagnose.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/rules_file.h"
#include "diagnose/suppression.h"
#include "listener/eventlog/event_log_scanner.h"
#include "listener/eventlog/event_log_sink.h"
#include "listener/eventlog/log_file_name.h"
#include "listener/eventlog/single_file_follower.h"
#include "listener/events/event_parser.h"

namespace diagnosis = sparktrace::diagnose;  // the diagnose module, not cli::diagnose

namespace sparktrace::cli {
namespace {

constexpr const char* kDiagnoseUsage =
    "Usage: sparktrace diagnose [--json] [--rules FILE] [--regressions] [--cost-core-hour P]\n"
    "                           [--cost-gib-hour P] [--sql-max-plan-nodes N] [--sql-max-executions N]\n"
    "                           [--sql-max-task-values N] EVENTLOG_OR_DIR...\n"
    "\n"
    "Reads Spark event logs offline (plain, zstd, lz4, snappy, .inprogress, rolling eventlog_v2_\n"
    "directories; a directory is scanned for every application log in it) and prints, per\n"
    "application and per Spark Connect operation, where the time went (resource_wait, compute,\n"
    "io_write, idle), the findings of the diagnosis rules (most impactful first: id, severity,\n"
    "evidence, impact, fix, recipe), what it cost (core- and GiB-seconds allocated, the share idle;\n"
    "money with prices from the flags or the rules file's cost section), what-if estimates (the\n"
    "attempt's own tasks simulated with executors ready at the start, N executors, the write at the\n"
    "compute pace), the job/stage timeline and each SQL execution's final plan with its operators'\n"
    "metrics aggregated as Spark's SQL UI does (the top operators by time in text).\n"
    "With --regressions, logs of one application name are runs of one job, and a run much slower\n"
    "than the earlier ones has a regression finding. Corrupt lines are counted, not\n"
    "fatal. Exit 0 with or without findings; 1 when an input cannot be read (the others are still\n"
    "reported); 2 for bad arguments or a bad --rules file.\n"
    "\n"
    "--json prints one document {\"schema\":\"sparktrace.diagnose/1\",\"applications\":[...],\n"
    "\"errors\":[{\"path\",\"message\"}]}; an application has log{path,state,lines,malformed_lines,...},\n"
    "app_id, app_name, spark_version, window{start_ms,end_ms,duration_ms}, phases{resource_wait_ms,\n"
    "compute_ms,io_write_ms,idle_ms}, executors{added,removed}, cost, jobs[{job_id,status,duration_ms,\n"
    "stages[...]}], operations[{operation_id,session_id,user_id,window,phases,job_ids,cost,what_if,\n"
    "findings}], what_if{anchoring,estimates[{name,sentence,estimated_ms,measured_ms,saving_ms,answers}],\n"
    "replay}, findings[{id,severity,scope,title,evidence,impact_seconds,fix,recipe,related,suppressed}],\n"
    "sql_executions[{execution_id,description,operation_id,job_ids,start_ms,end_ms,plan{name,metrics[{name,\n"
    "accumulator_id,type,total,min,median,max}],children}}]\n"
    "(full schema: cli/diagnose_command.cc; rules and thresholds: docs/diagnose-rules.md; SQL metrics:\n"
    "docs/diagnose-sql.md).\n"
    "\n";

// Its own flags, then the price flags (cli/cost_flags.h).
const std::vector<FlagSpec>& Specs() {
  static const std::vector<FlagSpec> specs = [] {
    std::vector<FlagSpec> all = {
        {"json", "", "", "print one JSON document (schema sparktrace.diagnose/1) instead of text"},
        {"rules", "FILE", "",
         "rule thresholds, suppressions and prices (YAML or JSON); see docs/diagnose-rules.md"},
        {"regressions", "", "",
         "take logs of one application name as runs of one job: a run 25% and 60s slower than the "
         "median of the earlier successful ones gets a regression finding"},
    };
    all.push_back({"sql-max-plan-nodes", "N", "20000",
                   "operators kept per SQL plan (pre-order); a plan past it is marked truncated"});
    all.push_back({"sql-max-executions", "N", "1000",
                   "SQL executions kept per application (the oldest ended one makes room)"});
    all.push_back({"sql-max-task-values", "N", "100000",
                   "per-task values kept per stage and metric for the median; past it the median is "
                   "approximate (totals, min and max stay exact)"});
    all.insert(all.end(), CostFlagSpecs().begin(), CostFlagSpecs().end());
    all.push_back({"help", "", "", "show this help"});
    return all;
  }();
  return specs;
}

// The SQL model's bounds (--sql-max-*): the parser's plan bound and the model's.
struct SqlBounds {
  listener::events::EventParserOptions parser;
  listener::correlate::SqlLimits model;
};

// Collects every log's lines into its own ApplicationModel (one model per application log).
class DiagnoseSink final : public listener::eventlog::EventLogSink {
 public:
  explicit DiagnoseSink(const SqlBounds& bounds) : bounds_(bounds), parser_(bounds.parser) {}

  listener::eventlog::LineVerdict OnLine(const listener::eventlog::LogIdentity& log, std::string_view line,
                                         const listener::eventlog::LinePosition& position) override {
    ++lines_delivered_;
    diagnose::DiagnosedLog& diagnosed = LogFor(log);
    Result<listener::events::SparkEvent> event = parser_.Parse(line);
    diagnosed.last_line_malformed = !event.ok();
    if (!event.ok()) {
      if (diagnosed.malformed_lines++ == 0) {
        diagnosed.first_malformed =
            "line " + std::to_string(position.line_number) + ": " + event.error().message;
      }
      return listener::eventlog::LineVerdict::kCorrupt;
    }
    if (const auto* ignored = std::get_if<listener::events::IgnoredEvent>(&*event)) {
      ++diagnosed.ignored_event_types[ignored->type];
    }
    diagnosed.model.Apply(std::move(*event));  // it keeps the plans: moved, not copied
    return listener::eventlog::LineVerdict::kAccepted;
  }

  // Offline, a restart means the file was rewritten while we read it: what came before belongs to
  // an older run, so only the new generation is reported.
  void OnLogRestarted(const listener::eventlog::LogIdentity& log, std::uint64_t, std::string_view) override {
    diagnose::DiagnosedLog& diagnosed = LogFor(log);
    diagnosed = diagnose::DiagnosedLog{};
    diagnosed.path = log.id;
    diagnosed.model.SetSqlLimits(bounds_.model);
    diagnosed.sql_max_plan_nodes = bounds_.parser.max_plan_nodes;
  }

  void OnLogCompleted(const listener::eventlog::LogIdentity&) override {}

  std::uint64_t lines_delivered() const { return lines_delivered_; }

  // The log's results so far (an empty record when it delivered nothing), moved out.
  diagnose::DiagnosedLog Take(const listener::eventlog::LogStatus& status) {
    diagnose::DiagnosedLog diagnosed;
    if (auto found = logs_.find(status.identity.id); found != logs_.end()) {
      diagnosed = std::move(found->second);
      logs_.erase(found);
    }
    diagnosed.path = status.identity.id;
    diagnosed.state = std::string(listener::eventlog::LogStateName(status.state));
    diagnosed.counters = status.counters;
    return diagnosed;
  }

 private:
  diagnose::DiagnosedLog& LogFor(const listener::eventlog::LogIdentity& log) {
    auto [entry, inserted] = logs_.try_emplace(log.id);
    if (inserted) {
      entry->second.path = log.id;
      entry->second.model.SetSqlLimits(bounds_.model);
      entry->second.sql_max_plan_nodes = bounds_.parser.max_plan_nodes;
    }
    return entry->second;
  }

  SqlBounds bounds_;
  listener::events::EventParser parser_;
  std::map<std::string, diagnose::DiagnosedLog> logs_;  // by LogIdentity::id
  std::uint64_t lines_delivered_ = 0;
};

// Offline there is nothing to wait for: poll until a poll neither stops at its byte budget nor
// delivers a line (a rolling log may go on with its next file only on the following poll).
template <typename Source>
void ReadToEnd(Source& source, DiagnoseSink& sink) {
  for (;;) {
    const std::uint64_t before = sink.lines_delivered();
    const bool more_pending = source.Poll(sink);
    if (!more_pending && sink.lines_delivered() == before) return;
  }
}

// Problems of a log that was found but not (fully) read; empty when it was read cleanly.
std::optional<std::string> LogProblem(const diagnose::DiagnosedLog& log,
                                      const listener::eventlog::LogStatus& status) {
  const listener::eventlog::LogCounters& counters = status.counters;
  std::string problem;
  if (status.state == listener::eventlog::LogState::kFailed ||
      status.state == listener::eventlog::LogState::kUnsupported || counters.read_errors > 0 ||
      counters.decode_errors > 0) {
    problem = status.problem.empty() ? std::string("cannot be read (") +
                                           std::string(listener::eventlog::LogStateName(status.state)) + ")"
                                     : status.problem;
  } else if (log.model.application().app_id.empty() && !log.model.application().start_ms &&
             log.model.jobs().empty()) {
    problem = "no Spark application events in this log";
  }
  if (problem.empty()) return std::nullopt;
  return problem;
}

struct InputResult {
  std::vector<diagnose::DiagnosedLog> logs;
  std::vector<diagnose::DiagnoseError> errors;
};

// The feed's problems start with the file's name; the error already names the path.
std::string WithoutFileNamePrefix(const std::string& problem, const std::string& path) {
  const std::string prefix = std::filesystem::path(path).filename().string() + ": ";
  return problem.starts_with(prefix) ? problem.substr(prefix.size()) : problem;
}

// `argument_path`: the path the user gave for a single file (it may end in ".inprogress", which
// the log's id does not); empty for logs found in a directory, which are named by their id.
void Collect(DiagnoseSink& sink, const std::vector<listener::eventlog::LogStatus>& statuses,
             const std::string& argument_path, InputResult& result) {
  for (const listener::eventlog::LogStatus& status : statuses) {
    diagnose::DiagnosedLog log = sink.Take(status);
    if (auto problem = LogProblem(log, status)) {
      const std::string& path = argument_path.empty() ? status.identity.id : argument_path;
      result.errors.push_back({path, WithoutFileNamePrefix(*problem, path)});
    }
    // A log that delivered nothing has nothing to show; its error says why.
    if (log.counters.lines > 0) result.logs.push_back(std::move(log));
  }
}

void ReadDirectory(const std::string& path, const SqlBounds& bounds, InputResult& result) {
  listener::eventlog::ScannerOptions options;
  options.directories = {path};
  auto scanner = listener::eventlog::EventLogScanner::Create(std::move(options));
  if (!scanner.ok()) {
    result.errors.push_back({path, scanner.error().message});
    return;
  }
  DiagnoseSink sink(bounds);
  ReadToEnd(**scanner, sink);
  const listener::eventlog::FeedCounters counters = (*scanner)->counters();
  if (counters.directory_errors > 0) {
    result.errors.push_back({path, "cannot list the directory"});
    return;
  }
  const std::vector<listener::eventlog::LogStatus> statuses = (*scanner)->statuses();
  if (statuses.empty()) result.errors.push_back({path, "no Spark event logs in this directory"});
  Collect(sink, statuses, "", result);
}

void ReadFile(const std::string& path, const SqlBounds& bounds, InputResult& result) {
  // Checked here because the follower only counts read errors, and "Permission denied" is the
  // message the user needs.
  if (::access(path.c_str(), R_OK) != 0) {
    result.errors.push_back({path, std::strerror(errno)});
    return;
  }
  const std::filesystem::path file_path(path);
  const auto name = listener::eventlog::ParseSingleFileLogName(file_path.filename().string());
  if (!name) {
    result.errors.push_back({path, "not an event log file name"});
    return;
  }
  listener::eventlog::LogIdentity identity;
  identity.id = (file_path.parent_path() / name->final_name).string();
  identity.name = name->base;
  identity.directory = file_path.parent_path().string();
  identity.layout = listener::eventlog::LogLayout::kSingleFile;
  listener::eventlog::SingleFileFollower follower(identity, identity.id, name->codec,
                                                  listener::eventlog::FollowOptions{});
  DiagnoseSink sink(bounds);
  ReadToEnd(follower, sink);
  Collect(sink, {follower.status()}, path, result);
}

InputResult ReadInput(const std::string& path, const SqlBounds& bounds) {
  InputResult result;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    result.errors.push_back({path, std::strerror(errno)});
  } else if (S_ISDIR(info.st_mode)) {
    // The scanner takes an eventlog_v2_ directory as one rolling log, any other as a log directory.
    ReadDirectory(path, bounds, result);
  } else if (S_ISREG(info.st_mode)) {
    ReadFile(path, bounds, result);
  } else {
    result.errors.push_back({path, "not a file or directory"});
  }
  return result;
}

}  // namespace

int RunDiagnoseCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (args.empty() || WantsHelp(args)) {
    (args.empty() ? err : out) << kDiagnoseUsage << FormatFlagHelp(Specs());
    return args.empty() ? 2 : 0;
  }
  auto flags = ParseFlags(Specs(), args);
  if (!flags.ok()) {
    err << "sparktrace diagnose: " << flags.error().message << "\n";
    return 2;
  }
  if (flags->positional().empty()) {
    err << "sparktrace diagnose: no event log or directory given\n\n" << kDiagnoseUsage;
    return 2;
  }
  // The feed reports decode problems through the process logger; keep that on stderr (never in the
  // JSON on stdout) and to errors: each problem is also reported below with its path.
  ConfigureLogging(spdlog::level::err, LogFormat::kText);
  diagnosis::RulesFile rules;
  if (flags->IsSet("rules")) {
    Result<diagnosis::RulesFile> loaded = diagnosis::LoadRulesFile(flags->Get("rules"));
    if (!loaded.ok()) {
      err << "sparktrace diagnose: --rules: " << loaded.error().message << "\n";
      return 2;
    }
    rules = std::move(*loaded);
  }
  // An event log names no Airflow task: only suppressions for every dag and task (both globs "*")
  // apply here. Judged on today's UTC date, as the proxy does; expired ones are ignored and said so.
  const std::chrono::sys_days today = diagnosis::UtcDay(std::chrono::system_clock::now());
  for (const diagnosis::Suppression& suppression : rules.suppressions) {
    if (suppression.ExpiredOn(today))
      err << "sparktrace diagnose: " << diagnosis::ExpiredMessage(suppression) << "\n";
  }
  const diagnosis::RuleThresholds& thresholds = rules.thresholds;
  auto flag_prices = CostPricesFromFlags(*flags);
  if (!flag_prices.ok()) {
    err << "sparktrace diagnose: " << flag_prices.error().message << "\n";
    return 2;
  }
  const sparktrace::diagnose::cost::CostPrices prices = WithRulesFilePrices(*flag_prices, rules.prices);
  SqlBounds bounds;
  {
    auto max_plan_nodes = IntegerFlag(*flags, "sql-max-plan-nodes", 1, 10'000'000);
    auto max_executions = IntegerFlag(*flags, "sql-max-executions", 1, 10'000'000);
    auto max_task_values = IntegerFlag(*flags, "sql-max-task-values", 1, 1'000'000'000);
    for (const auto* value : {&max_plan_nodes, &max_executions, &max_task_values}) {
      if (!value->ok()) {
        err << "sparktrace diagnose: " << value->error().message << "\n";
        return 2;
      }
    }
    bounds.parser.max_plan_nodes = static_cast<std::size_t>(*max_plan_nodes);
    bounds.model.max_executions = static_cast<std::size_t>(*max_executions);
    bounds.model.max_task_values = static_cast<std::size_t>(*max_task_values);
  }

  std::vector<diagnose::DiagnosedLog> logs;
  std::vector<diagnose::DiagnoseError> errors;
  for (const std::string& path : flags->positional()) {
    InputResult result = ReadInput(path, bounds);
    for (diagnose::DiagnosedLog& log : result.logs) {
      log.findings = diagnosis::DiagnoseApplication(log.model, thresholds);
      log.prices = prices;
      log.cost = diagnose::ApplicationCost(log.model, prices);
      log.what_if = diagnosis::ApplicationWhatIf(log.model);
      for (const auto& [operation_id, operation] : log.model.operations()) {
        std::vector<diagnosis::Finding> findings =
            diagnosis::DiagnoseOperation(log.model, operation, thresholds);
        diagnosis::ApplySuppressions(findings, rules.suppressions, std::nullopt, today);
        log.operation_findings[operation_id] = std::move(findings);
        if (auto cost = diagnose::OperationCost(log.model, operation_id, prices))
          log.operation_costs.emplace(operation_id, *cost);
        log.operation_what_if[operation_id] = diagnosis::OperationWhatIf(log.model, operation);
      }
      logs.push_back(std::move(log));
    }
    for (diagnose::DiagnoseError& error : result.errors) {
      err << "sparktrace diagnose: " << error.path << ": " << error.message << "\n";
      errors.push_back(std::move(error));
    }
  }
  // Regressions need every log read: the earlier runs are the baseline.
  if (flags->GetBool("regressions")) diagnose::AddRegressionFindings(logs);
  for (diagnose::DiagnosedLog& log : logs)
    diagnosis::ApplySuppressions(log.findings, rules.suppressions, std::nullopt, today);
  out << (flags->GetBool("json") ? diagnose::RenderDiagnoseJson(logs, errors)
                                 : diagnose::RenderDiagnoseText(logs));
  return errors.empty() ? 0 : 1;
}

}  // namespace sparktrace::cli
