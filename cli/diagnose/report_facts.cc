#include "cli/diagnose/report_facts.h"

#include <algorithm>

namespace sparktrace::cli::diagnose {

using listener::correlate::ApplicationModel;
using listener::correlate::ConnectOperationRecord;
using listener::correlate::JobRecord;
using listener::correlate::StageAttemptRecord;
using listener::events::EpochMillis;

// `application_status`: ApplicationStatus of the log; what has not ended in a log that will not
// say more is "unknown", not "running".
std::string_view StageStatus(const StageAttemptRecord& stage, std::string_view application_status) {
  if (stage.failure_reason) return "failed";
  if (stage.completed) return "complete";
  return application_status == "in_progress" ? "running" : "unknown";
}

std::string_view ApplicationStatus(const DiagnosedLog& log) {
  if (log.model.application().end_ms) return "ended";
  return log.state == "in_progress" ? "in_progress" : "truncated";
}

std::string_view JobStatus(const JobRecord& job, std::string_view application_status) {
  return listener::correlate::JobStatusName(job.StatusWhenOver(application_status != "in_progress"));
}

std::optional<std::int64_t> StageDurationMs(const StageAttemptRecord& stage) {
  const std::optional<EpochMillis> start = stage.StartMs();
  if (!start || !stage.completion_ms) return std::nullopt;
  return *stage.completion_ms - *start;
}

std::optional<std::int64_t> JobDurationMs(const JobRecord& job) {
  if (!job.submission_ms || !job.completion_ms) return std::nullopt;
  return *job.completion_ms - *job.submission_ms;
}

// The first terminal event decides, as the phase window does (phases.h).
std::string_view OperationStatus(const ConnectOperationRecord& operation) {
  if (operation.failed_ms) return "failed";
  if (operation.canceled_ms) return "canceled";
  if (operation.finished_ms) return "finished";
  if (operation.closed_ms) return "closed";
  return "running";
}

std::int64_t ExecutorsRemoved(const ApplicationModel& model) {
  return std::count_if(
      model.executors().begin(), model.executors().end(),
      [](const listener::correlate::ExecutorRecord& executor) { return executor.removed_ms.has_value(); });
}

std::int64_t IgnoredEvents(const DiagnosedLog& log) {
  std::int64_t total = 0;
  for (const auto& [type, count] : log.ignored_event_types) total += count;
  return total;
}

// Blank, oversized and cut-off lines: skipped by the feed before any parsing. The feed's
// corrupt_lines also counts the lines this command reported as malformed, which are shown apart.
std::int64_t DroppedLines(const DiagnosedLog& log) {
  const auto blank = static_cast<std::int64_t>(log.counters.corrupt_lines) - log.malformed_lines;
  return std::max<std::int64_t>(blank, 0) + static_cast<std::int64_t>(log.counters.oversized_lines) +
         static_cast<std::int64_t>(log.counters.truncated_lines);
}

}  // namespace sparktrace::cli::diagnose
