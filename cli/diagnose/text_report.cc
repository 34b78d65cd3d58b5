// The text rendering of `sparktrace diagnose` (report.h): aligned tables for people.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/diagnose/cost.h"
#include "cli/diagnose/report.h"
#include "cli/diagnose/report_facts.h"
#include "common/units.h"
#include "diagnose/finding.h"
#include "diagnose/finding_words.h"
#include "listener/correlate/connect_server_phases.h"
#include "listener/correlate/phases.h"

namespace diagnosis = sparktrace::diagnose;  // the diagnose module, not cli::diagnose

namespace sparktrace::cli::diagnose {
namespace {

// "analysis 20 ms, planning 30 ms, execution 1210 ms, results 100 ms": the phases the log has.
std::string ServerPhasesLine(const listener::correlate::ConnectServerPhases& phases) {
  std::string line;
  const auto add = [&line](std::string_view name, std::optional<std::int64_t> ms) {
    if (!ms) return;
    if (!line.empty()) line += ", ";
    line += std::string(name) + " " + std::to_string(*ms) + " ms";
  };
  add("analysis", phases.analysis_ms);
  add("planning", phases.planning_ms);
  add("execution", phases.execution_ms);
  add("results", phases.results_ms);
  return line;
}

using listener::correlate::ApplicationModel;
using listener::correlate::JobRecord;
using listener::correlate::Phase;
using listener::correlate::PhaseBreakdown;
using listener::correlate::StageAttemptRecord;
using listener::events::EpochMillis;

// "2019-04-08T20:39:44.286Z".
std::string FormatTimestamp(EpochMillis time_ms) {
  const std::time_t seconds = static_cast<std::time_t>(time_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[96];  // room for any int fields, so the format cannot truncate
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(time_ms % 1000));
  return text;
}

// Seconds with millisecond precision: exact, and short enough for a column.
std::string FormatSeconds(std::int64_t duration_ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%s%lld.%03llds", duration_ms < 0 ? "-" : "",
                static_cast<long long>(std::abs(duration_ms) / 1000),
                static_cast<long long>(std::abs(duration_ms) % 1000));
  return text;
}

std::string FormatOptionalSeconds(std::optional<std::int64_t> duration_ms) {
  return duration_ms ? FormatSeconds(*duration_ms) : "-";
}

std::string FormatOffset(std::optional<EpochMillis> time_ms, EpochMillis origin_ms) {
  return time_ms ? "+" + FormatSeconds(*time_ms - origin_ms) : "-";
}

std::string FormatBytes(std::int64_t bytes) {
  return bytes <= 0 ? "0" : FormatByteSize(static_cast<std::uint64_t>(bytes));
}

std::string FormatPercent(std::int64_t part, std::int64_t whole) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%",
                whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return text;
}

// Rows of cells printed with every column as wide as its widest cell. Columns listed as numeric
// are right-aligned so that digits line up.
class Table {
 public:
  Table(std::string indent, std::vector<bool> right_aligned)
      : indent_(std::move(indent)), right_aligned_(std::move(right_aligned)) {}

  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  void Render(std::string& out) const {
    std::vector<std::size_t> widths;
    for (const auto& row : rows_) {
      if (widths.size() < row.size()) widths.resize(row.size(), 0);
      for (std::size_t column = 0; column < row.size(); ++column) {
        widths[column] = std::max(widths[column], row[column].size());
      }
    }
    for (const auto& row : rows_) {
      std::string line = indent_;
      for (std::size_t column = 0; column < row.size(); ++column) {
        const std::string& cell = row[column];
        const std::string padding(widths[column] - cell.size(), ' ');
        const bool right = column < right_aligned_.size() && right_aligned_[column];
        if (column > 0) line += "  ";
        line += right ? padding + cell : cell + padding;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }

 private:
  std::string indent_;
  std::vector<bool> right_aligned_;
  std::vector<std::vector<std::string>> rows_;
};

void RenderPhasesText(const std::optional<PhaseBreakdown>& phases, const std::string& indent,
                      std::string& out) {
  if (!phases) {
    out += indent + "window   unknown (no start event)\n";
    return;
  }
  const std::int64_t window_ms = phases->window.end_ms - phases->window.start_ms;
  out += indent + "window   " + FormatTimestamp(phases->window.start_ms) + " .. " +
         FormatTimestamp(phases->window.end_ms) + "  (" + FormatSeconds(window_ms) + ")\n";
  out += indent + "phases\n";
  Table table(indent + "  ", {false, true, true});
  for (Phase phase : kReportPhases) {
    table.Add({std::string(listener::correlate::PhaseName(phase)),
               std::to_string(phases->TotalMs(phase)) + " ms",
               FormatPercent(phases->TotalMs(phase), window_ms)});
  }
  table.Render(out);
}

// `what_if`: estimates printed under the findings they answer, then all of them.
void RenderFindingsText(const std::vector<diagnosis::Finding>& findings,
                        const diagnosis::WhatIfReport& what_if, const std::string& indent, std::string& out) {
  if (findings.empty()) {
    out += indent + "findings none\n";
    out += diagnosis::WhatIfBlock(what_if, indent);
    return;
  }
  out += indent + "findings (" + std::to_string(findings.size()) + ", most impactful first)\n";
  const std::string body = indent + "     ";
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const diagnosis::Finding& finding = findings[i];
    char impact[32];
    std::snprintf(impact, sizeof impact, "%.1fs", finding.impact_seconds);
    out += indent + "  " + std::to_string(i + 1) + ". [" +
           std::string(diagnosis::SeverityName(finding.severity)) + "] " + finding.id + "  " +
           diagnosis::ScopeWords(finding.scope) + "  impact ~" + impact + "\n";
    out += body + finding.title + "\n";
    std::string evidence;
    for (const diagnosis::Evidence& item : finding.evidence)
      evidence += (evidence.empty() ? "" : ", ") + diagnosis::EvidenceWords(item);
    if (!evidence.empty()) out.append(body).append("evidence ").append(evidence).append("\n");
    for (std::size_t f = 0; f < finding.fix.size(); ++f)
      out += body + (f == 0 ? "fix      - " : "         - ") + finding.fix[f] + "\n";
    out += body + "recipe   " + finding.recipe + "\n";
    std::string related;
    for (const diagnosis::RelatedFinding& link : finding.related)
      related += (related.empty() ? "" : ", ") + link.relation + " " + link.key;
    if (!related.empty()) out.append(body).append("related  ").append(related).append("\n");
    if (finding.suppressed) {
      out +=
          body + "suppressed until " + finding.suppressed->until + ": " + finding.suppressed->reason + "\n";
    }
    out += diagnosis::WhatIfLinesFor(what_if, finding.id, body);
  }
  out += diagnosis::WhatIfBlock(what_if, indent);
}

// Jobs and their stage attempts as one table, stages indented under their job; start times are
// offsets from `origin_ms` (the window's start) so the timeline reads top to bottom.
void RenderJobsText(const ApplicationModel& model, const std::vector<const JobRecord*>& jobs,
                    EpochMillis origin_ms, std::string_view application_status, const std::string& indent,
                    std::string& out) {
  if (jobs.empty()) {
    out += indent + "jobs     none\n";
    return;
  }
  out += indent + "jobs\n";
  Table table(indent + "  ",
              {false, false, true, true, true, true, true, true, true, true, true, true, true});
  table.Add({"job/stage", "status", "start", "duration", "tasks", "failed", "task p50", "p95", "max",
             "shuffle read", "shuffle write", "output", "spill mem/disk"});
  for (const JobRecord* job : jobs) {
    std::string label = "job " + std::to_string(job->job_id);
    table.Add({label, std::string(JobStatus(*job, application_status)),
               FormatOffset(job->submission_ms, origin_ms), FormatOptionalSeconds(JobDurationMs(*job))});
    for (const StageAttemptRecord* stage : model.StagesOfJob(job->job_id)) {
      const listener::correlate::TaskStatistics& tasks = stage->tasks;
      const auto& durations = tasks.successful_durations;
      const auto quantile = [&durations](double q) {
        const std::optional<std::int64_t> value = durations.Quantile(q);
        return value ? std::to_string(*value) + " ms" : std::string("-");
      };
      table.Add(
          {"  stage " + std::to_string(stage->key.stage_id) + "." + std::to_string(stage->key.attempt_id),
           std::string(StageStatus(*stage, application_status)), FormatOffset(stage->StartMs(), origin_ms),
           FormatOptionalSeconds(StageDurationMs(*stage)), std::to_string(tasks.tasks_ended),
           std::to_string(tasks.failed_tasks), quantile(0.5), quantile(0.95),
           durations.count() > 0 ? std::to_string(durations.max_ms()) + " ms" : "-",
           FormatBytes(tasks.shuffle_read_bytes), FormatBytes(tasks.shuffle_write_bytes),
           FormatBytes(tasks.output_bytes),
           FormatBytes(tasks.memory_bytes_spilled) + "/" + FormatBytes(tasks.disk_bytes_spilled)});
    }
  }
  table.Render(out);
}

// The application's status in words, with the file's state when the file could not be read whole.
std::string LogStateText(const DiagnosedLog& log) {
  const std::string_view status = ApplicationStatus(log);
  std::string text = log.state == "failed" || log.state == "unsupported" ? log.state + ", " : "";
  if (status == "ended") return text + "ended";
  if (status == "in_progress") return text + "in progress: no ApplicationEnd yet";
  return text + "truncated: no ApplicationEnd" +
         (log.last_line_malformed ? ", its last line not an event" : "");
}

// Where the timeline's offsets count from: the window's start, else the application's, else the
// first job's (a log without ApplicationStart), never the epoch.
EpochMillis TimelineOrigin(const ApplicationModel& model, const std::optional<PhaseBreakdown>& phases) {
  if (phases) return phases->window.start_ms;
  if (model.application().start_ms) return *model.application().start_ms;
  std::optional<EpochMillis> first;
  for (const auto& [id, job] : model.jobs()) {
    if (job.submission_ms && (!first || *job.submission_ms < *first)) first = job.submission_ms;
  }
  return first.value_or(0);
}

void RenderApplicationText(const DiagnosedLog& log, std::string& out) {
  const ApplicationModel& model = log.model;
  const listener::correlate::ApplicationRecord& app = model.application();
  out += "application " + (app.app_id.empty() ? std::string("(no id)") : app.app_id);
  if (app.attempt_id) out += " attempt " + *app.attempt_id;
  if (!app.app_name.empty()) out += "  \"" + app.app_name + "\"";
  out += "\n";
  out += "  spark    " + (app.spark_version.empty() ? std::string("unknown") : app.spark_version) +
         (app.spark_user.empty() ? "" : ", user " + app.spark_user) + "\n";
  out += "  log      " + log.path + " (" + LogStateText(log) + "; " + std::to_string(log.counters.lines) +
         " lines, " + std::to_string(log.malformed_lines) + " malformed, " +
         std::to_string(DroppedLines(log)) + " dropped, " + std::to_string(IgnoredEvents(log)) +
         " ignored events)\n";
  if (!log.first_malformed.empty()) {
    // Parser messages name the event and field; the line itself may be megabytes, so it is not shown.
    std::string first = log.first_malformed;
    if (first.size() > 160) first = first.substr(0, 157) + "...";
    out += "           first malformed " + first + "\n";
  }
  const std::optional<PhaseBreakdown> phases = listener::correlate::ApplicationPhases(model);
  RenderPhasesText(phases, "  ", out);
  if (log.cost) out += "  cost     " + CostLine(*log.cost) + "\n";
  RenderFindingsText(log.findings, log.what_if, "  ", out);
  out += "  executors " + std::to_string(model.executors().size()) + " added, " +
         std::to_string(ExecutorsRemoved(model)) + " removed\n";
  const EpochMillis origin_ms = TimelineOrigin(model, phases);
  const std::string_view status = ApplicationStatus(log);
  std::vector<const JobRecord*> jobs;
  for (const auto& [id, job] : model.jobs()) jobs.push_back(&job);
  RenderJobsText(model, jobs, origin_ms, status, "  ", out);
  RenderSqlExecutionsText(log, "  ", out);

  for (const auto& [id, operation] : model.operations()) {
    out += "  connect operation " + operation.operation_id + " (" + std::string(OperationStatus(operation)) +
           ")\n";
    out += "    session  " + (operation.session_id.empty() ? "-" : operation.session_id) + ", user " +
           (operation.user_id.empty() ? "-" : operation.user_id) + "\n";
    if (!operation.error_message.empty())
      out += "    error    " + operation.error_message.substr(0, 160) + "\n";
    if (const std::string server = ServerPhasesLine(listener::correlate::ServerPhasesOf(operation)); !server.empty())
      out += "    server   " + server + "\n";
    const std::optional<PhaseBreakdown> operation_phases =
        listener::correlate::OperationPhases(model, operation);
    RenderPhasesText(operation_phases, "    ", out);
    if (auto cost = log.operation_costs.find(operation.operation_id); cost != log.operation_costs.end())
      out += "    cost     " + CostLine(cost->second) + "\n";
    const auto what_if = log.operation_what_if.find(operation.operation_id);
    const diagnosis::WhatIfReport none;
    const diagnosis::WhatIfReport& operation_what_if =
        what_if != log.operation_what_if.end() ? what_if->second : none;
    if (auto found = log.operation_findings.find(operation.operation_id);
        found != log.operation_findings.end()) {
      RenderFindingsText(found->second, operation_what_if, "    ", out);
    } else {
      RenderFindingsText({}, operation_what_if, "    ", out);
    }
    std::vector<const JobRecord*> operation_jobs;
    for (std::int32_t job_id : model.JobsOfOperation(operation.operation_id)) {
      if (auto found = model.jobs().find(job_id); found != model.jobs().end())
        operation_jobs.push_back(&found->second);
    }
    RenderJobsText(model, operation_jobs, operation_phases ? operation_phases->window.start_ms : origin_ms,
                   status, "    ", out);
  }
}

}  // namespace

std::string RenderDiagnoseText(const std::vector<DiagnosedLog>& logs) {
  std::string out;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    if (i > 0) out += "\n";
    RenderApplicationText(logs[i], out);
  }
  return out;
}

}  // namespace sparktrace::cli::diagnose
