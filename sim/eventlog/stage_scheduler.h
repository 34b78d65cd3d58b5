#pragma once
// The second half of planning a stage (operation_planner.h): running its drafted attempts
// (stage_draft.h) on the executors' cores as Spark's scheduler would, with executor losses, retries
// and a stage abort after too many failures of one task. Kept apart from drafting because it is the
// part that depends on the executor pool's history, and from the planner, which orders the
// operation's events around it.
//
// Threads: reads the pool and draws from the random source; callers serialise access to both.

#include "sim/eventlog/executor_pool.h"
#include "sim/eventlog/operation_plan.h"
#include "sim/eventlog/random_source.h"
#include "sim/eventlog/stage_draft.h"

namespace sparktrace::sim::eventlog {

// Spark's spark.task.maxFailures: the fourth failure of one task aborts its stage.
inline constexpr int kMaxTaskFailures = 4;

// Runs a stage's drafted attempts on the executor slots, list-scheduling style: each pending task
// goes to the slot free first; failed attempts go to the back of the queue, as Spark re-queues
// them. Appends the attempts to plan.tasks (and, on an abort, sets the stage's aborting_task).
// Returns the time the last attempt ended.
EpochMillis ScheduleStage(OperationPlan& plan, int stage_index, const StageDraft& draft, EpochMillis start_ms,
                          const ExecutorPool& pool, RandomSource& random);

}  // namespace sparktrace::sim::eventlog
