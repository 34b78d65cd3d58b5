#pragma once
// The Spark Connect server's own split of an operation, from the operation events it logs
// (SparkListenerConnectOperation{Started, Analyzed, ReadyForExecution, Finished, Failed, Canceled,
// Closed}; Spark's ExecuteEventsManager posts them):
//   analysis   Started → Analyzed           the plan resolved against the catalog
//   planning   Analyzed → ReadyForExecution optimised and turned into a physical plan
//   execution  ReadyForExecution → Finished (or Failed, Canceled): the jobs ran
//   results    Finished → Closed            results streamed back and the execution released
// A phase whose two events are not both in the log is unknown (nullopt), never guessed; a phase whose
// events are out of order (clock steps) is 0.
//
// Pure; thread-safe.

#include <cstdint>
#include <optional>

#include "listener/correlate/application_model.h"

namespace sparktrace::listener::correlate {

struct ConnectServerPhases {
  std::optional<std::int64_t> analysis_ms;
  std::optional<std::int64_t> planning_ms;
  std::optional<std::int64_t> execution_ms;
  std::optional<std::int64_t> results_ms;

  bool any() const { return analysis_ms || planning_ms || execution_ms || results_ms; }
};

ConnectServerPhases ServerPhasesOf(const ConnectOperationRecord& operation);

}  // namespace sparktrace::listener::correlate
