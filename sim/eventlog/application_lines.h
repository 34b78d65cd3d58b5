#pragma once
// The application-level event-log lines of the simulated Spark application, in the JSON shapes
// Spark's JsonProtocol writes (facts §1e): log start, environment, application start/end,
// executors and their block managers.
//
// Pure functions; thread-safe.

#include <string>
#include <vector>

#include "sim/eventlog/application_identity.h"
#include "sim/eventlog/executor_pool.h"
#include "sim/eventlog/scenario.h"

namespace sparktrace::sim::eventlog {

std::string LogStartLine(const ApplicationIdentity& app);
std::string ResourceProfileAddedLine(const ScenarioKnobs& knobs);
std::string DriverBlockManagerAddedLine(const ApplicationIdentity& app);
// "Spark Properties" and "Hadoop Properties" as the scenario implies: adaptive execution on, a
// Kubernetes deployment with dynamic allocation, S3A output (slow-writes: the classic rename
// committer instead of the magic committer), and the Spark Connect plugin.
std::string EnvironmentUpdateLine(const ApplicationIdentity& app, const Scenario& scenario,
                                  const ScenarioKnobs& knobs);
std::string ApplicationStartLine(const ApplicationIdentity& app);
std::string ApplicationEndLine(const ApplicationIdentity& app, EpochMillis end_ms);
// ExecutorAdded followed by the executor's BlockManagerAdded.
std::vector<std::string> ExecutorAddedLines(const ExecutorRecord& executor, const TimeMapping& time);
// ExecutorRemoved followed by the executor's BlockManagerRemoved.
std::vector<std::string> ExecutorRemovedLines(const ExecutorRecord& executor, const TimeMapping& time);

}  // namespace sparktrace::sim::eventlog
