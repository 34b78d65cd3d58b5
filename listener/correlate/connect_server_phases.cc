#include "listener/correlate/connect_server_phases.h"

#include <algorithm>

namespace sparktrace::listener::correlate {
namespace {

std::optional<std::int64_t> Between(std::optional<events::EpochMillis> from, std::optional<events::EpochMillis> to) {
  if (!from || !to) return std::nullopt;
  return std::max<std::int64_t>(0, *to - *from);
}

}  // namespace

ConnectServerPhases ServerPhasesOf(const ConnectOperationRecord& operation) {
  // Execution ends with whichever terminal event the log has (one of the three, in practice).
  std::optional<events::EpochMillis> execution_end = operation.finished_ms;
  if (!execution_end) execution_end = operation.failed_ms;
  if (!execution_end) execution_end = operation.canceled_ms;
  ConnectServerPhases phases;
  phases.analysis_ms = Between(operation.started_ms, operation.analyzed_ms);
  phases.planning_ms = Between(operation.analyzed_ms, operation.ready_ms);
  phases.execution_ms = Between(operation.ready_ms, execution_end);
  phases.results_ms = Between(execution_end, operation.closed_ms);
  return phases;
}

}  // namespace sparktrace::listener::correlate
