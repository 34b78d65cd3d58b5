#pragma once
// DraftSqlPlan: the physical plan of a simulated operation's SQL execution as Spark 3.5/4.x writes
// it in SparkListenerSQLExecutionStart.sparkPlanInfo (final AQE plan: AdaptiveSparkPlan,
// WholeStageCodegen (N), InputAdapter, query stages, Exchange, BroadcastHashJoin or
// BroadcastNestedLoopJoin, HashAggregate, FileScan parquet), with the SQL metric values of every
// successful task (its "Accumulables") and of the driver (SparkListenerDriverAccumUpdates),
// consistent with the tasks' metrics: the scan's rows are the map tasks' input records, the
// exchange's figures their shuffle metrics, the aggregation's spill their memory bytes spilled,
// codegen durations a share of their run time.
//
// The query: orders scanned and filtered, joined to a broadcast dimension table, aggregated by
// customer (and written, for a write command). The plan problems of the scenario (scenario.h
// knobs) change what its operators did. The broadcast side's own scan job is not simulated: its
// BroadcastExchange figures come as driver updates, as Spark posts them.
//
// Deterministic, no random draws (the clean plan's jitter is the tasks'). Thread-safe (pure).

#include <cstdint>

#include "sim/eventlog/operation_plan.h"
#include "sim/eventlog/scenario.h"

namespace sparktrace::sim::eventlog {

// Sets plan.sql_plan and the sql_updates of plan.tasks from the tasks already planned.
void DraftSqlPlan(OperationPlan& plan, const ScenarioKnobs& knobs);

// The accumulator id of metric `metric` of SQL execution `execution_id`: ids of their own range per
// execution (Spark's are one global counter; these only need to be unique and stable).
std::int64_t SqlAccumulatorId(std::int64_t execution_id, int metric);

}  // namespace sparktrace::sim::eventlog
