#include "listener/eventlog/log_progress.h"

#include <spdlog/spdlog.h>

namespace sparktrace::listener::eventlog {
namespace {

bool IsBlank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

LogProgress::LogProgress(LogIdentity identity) { status_.identity = std::move(identity); }

void LogProgress::Deliver(EventLogSink& sink, std::string_view line, std::uint64_t decoded_offset,
                          std::string_view file_path, std::uint64_t file_index) {
  if (IsBlank(line)) {  // Spark never writes one; it cannot be an event
    ++status_.counters.corrupt_lines;
    return;
  }
  ++status_.counters.lines;
  const LinePosition position{file_path, file_index, decoded_offset, ++line_number_, status_.generation};
  if (sink.OnLine(status_.identity, line, position) == LineVerdict::kCorrupt)
    ++status_.counters.corrupt_lines;
}

void LogProgress::Restart(EventLogSink& sink, const std::string& reason) {
  ++status_.generation;
  ++status_.counters.restarts;
  line_number_ = 0;
  status_.state = LogState::kInProgress;
  status_.problem = "restarted: " + reason;
  spdlog::warn("event log {}: {}; reading it again from the start (generation {})", status_.identity.id,
               reason, status_.generation);
  sink.OnLogRestarted(status_.identity, status_.generation, reason);
}

void LogProgress::Complete(EventLogSink& sink) {
  if (status_.state == LogState::kComplete) return;
  status_.state = LogState::kComplete;
  spdlog::debug("event log {}: complete, {} lines", status_.identity.id, status_.counters.lines);
  sink.OnLogCompleted(status_.identity);
}

void LogProgress::ReportProblem(std::string problem) {
  // A lasting problem (an unreadable file) shows up on every poll: log it once.
  if (problem == status_.problem) return;
  spdlog::warn("event log {}: {}", status_.identity.id, problem);
  status_.problem = std::move(problem);
}

void LogProgress::MarkFailed(std::string problem) {
  status_.state = LogState::kFailed;
  ReportProblem(std::move(problem));
}

void LogProgress::MarkUnsupported(std::string problem) {
  status_.state = LogState::kUnsupported;
  ReportProblem(std::move(problem));
}

}  // namespace sparktrace::listener::eventlog
