#pragma once
// The event-log lines of one planned operation event, in the JSON shapes Spark writes (facts
// §1c/§1e): Spark Connect operation and session events (Jackson: fully-qualified class names,
// camelCase keys), SQL execution start/end with jobTags, jobs with the spark.job.tags property,
// stages, and tasks with Task Info, Task Executor Metrics and Task Metrics.
//
// Pure functions; thread-safe. The plan's global ids of the ids an event names must be assigned.

#include <string>
#include <vector>

#include "sim/eventlog/application_identity.h"
#include "sim/eventlog/executor_pool.h"
#include "sim/eventlog/operation_plan.h"

namespace sparktrace::sim::eventlog {

// One line, or two for executor changes (ExecutorAdded/Removed and the block manager's event).
std::vector<std::string> OperationEventLines(const OperationPlan& plan, const PlannedEvent& event,
                                             const ExecutorPool& pool, const ApplicationIdentity& app,
                                             const TimeMapping& time);

// Whether Spark's event logger flushes after writing this kind of event (all but stage
// submissions and task events).
bool FlushesAfter(PlannedEventKind kind);

}  // namespace sparktrace::sim::eventlog
