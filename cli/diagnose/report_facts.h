#pragma once
// Figures of a diagnosed log that both renderings of `sparktrace diagnose` print (text_report.cc
// and json_report.cc): statuses, durations and counts, and how a figure is written.
//
// Pure functions; thread-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cli/diagnose/report.h"
#include "listener/correlate/phases.h"

namespace sparktrace::cli::diagnose {

inline constexpr std::array<listener::correlate::Phase, listener::correlate::kPhaseCount> kReportPhases = {
    listener::correlate::Phase::kResourceWait, listener::correlate::Phase::kCompute,
    listener::correlate::Phase::kIoWrite, listener::correlate::Phase::kIdle};

// `application_status`: ApplicationStatus of the log; what has not ended in a log that will not
// say more is "unknown", not "running".
std::string_view StageStatus(const listener::correlate::StageAttemptRecord& stage,
                             std::string_view application_status);
std::string_view JobStatus(const listener::correlate::JobRecord& job, std::string_view application_status);
std::optional<std::int64_t> StageDurationMs(const listener::correlate::StageAttemptRecord& stage);
std::optional<std::int64_t> JobDurationMs(const listener::correlate::JobRecord& job);
// The first terminal event decides, as the phase window does (phases.h).
std::string_view OperationStatus(const listener::correlate::ConnectOperationRecord& operation);
std::int64_t ExecutorsRemoved(const listener::correlate::ApplicationModel& model);
std::int64_t IgnoredEvents(const DiagnosedLog& log);
// Blank, oversized and cut-off lines: skipped by the feed before any parsing. The feed's
// corrupt_lines also counts the lines this command reported as malformed, which are shown apart.
std::int64_t DroppedLines(const DiagnosedLog& log);

}  // namespace sparktrace::cli::diagnose
