#pragma once
// PlanOperation: one Spark Connect operation as the simulated Spark would run it, in virtual time:
// Connect operation events, one SQL execution, two jobs as adaptive query execution runs them (a
// shuffle-map stage, then a job that reuses it and runs the result stage, which writes output for
// a write command), and every task attempt with metrics, shaped by the scenario (see scenario.h),
// and the SQL execution's plan with its metric values (sql_plan_drafter.h).
//
// Deterministic: the same inputs (and pool state) give the same plan. The jitter comes from
// `scenario.seed` and the operation's ordinal, drawn the same way whatever the strength, so that
// strength 0 reproduces the clean plan exactly.
//
// Threads: a pure function except for `pool`, which it changes (executors killed, replaced or
// re-acquired by this operation); callers serialise access to the pool.

#include <string_view>

#include "sim/eventlog/executor_pool.h"
#include "sim/eventlog/operation_plan.h"
#include "sim/eventlog/scenario.h"

namespace sparktrace::sim::eventlog {

struct PlanInputs {
  const Scenario* scenario = nullptr;
  const ScenarioKnobs* knobs = nullptr;
  std::string_view spark_version;
  int ordinal = 0;           // the operation's number in the application, from 0
  bool new_session = false;  // write SparkListenerConnectSessionStarted first
  EpochMillis start_ms = 0;  // of SparkListenerConnectOperationStarted
};

OperationPlan PlanOperation(const OperationSpec& spec, const PlanInputs& inputs, ExecutorPool& pool);

// The operation job tag as `spark_version` writes it: User_<user>_Session_<session> from 3.5.2 and
// in 4.x; Session first (User_<session>_Session_<user>) in 3.5.0 and 3.5.1 (SPARK-47921).
std::string OperationJobTag(std::string_view spark_version, std::string_view user_id,
                            std::string_view session_id, std::string_view operation_id);

// Spark's StringUtils.abbreviate(text, max): the text, or its first max-3 characters and "...".
std::string Abbreviate(std::string_view text, std::size_t max);

}  // namespace sparktrace::sim::eventlog
