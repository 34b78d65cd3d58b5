#pragma once
// Internal to sparktrace_listener_events: one reader per modelled event type. Each reads the
// top-level fields left after "Event" into its struct, skipping keys it does not need, and
// fails with the key at fault (ReadFailure) when a field has the wrong type or a required field
// is missing. Required are only the fields an event means nothing without (ids, the event time,
// a job's result); everything else Spark versions may omit.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "listener/events/json_field_reader.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::events::json {

// core_event_readers.cc
error_code ReadLogStart(FieldRange fields, ReadFailure& failure, LogStart& out);
error_code ReadApplicationStart(FieldRange fields, ReadFailure& failure, ApplicationStart& out);
error_code ReadApplicationEnd(FieldRange fields, ReadFailure& failure, ApplicationEnd& out);
error_code ReadExecutorAdded(FieldRange fields, ReadFailure& failure, ExecutorAdded& out);
error_code ReadExecutorRemoved(FieldRange fields, ReadFailure& failure, ExecutorRemoved& out);
error_code ReadJobStart(FieldRange fields, ReadFailure& failure, JobStart& out);
error_code ReadJobEnd(FieldRange fields, ReadFailure& failure, JobEnd& out);
// StageSubmitted and StageCompleted: their "Stage Info".
error_code ReadStageEvent(FieldRange fields, ReadFailure& failure, StageInfo& out);

// environment_event_reader.cc: "Spark Properties" and "Hadoop Properties", kept keys only.
error_code ReadEnvironmentUpdate(FieldRange fields, ReadFailure& failure, EnvironmentUpdate& out);

// task_event_readers.cc
error_code ReadTaskStart(FieldRange fields, ReadFailure& failure, TaskStart& out);
// Reads the task's non-internal accumulables (AccumulableUpdate), and for logs before Spark 3.0,
// which carry the task's peak execution memory only there, "internal.metrics.peakExecutionMemory".
// Without `sql_metrics` the non-internal accumulables are skipped (EventParserOptions::sql_metrics).
error_code ReadTaskEnd(FieldRange fields, ReadFailure& failure, bool sql_metrics, TaskEnd& out);

// sql_connect_event_readers.cc. `max_plan_nodes` bounds the operators kept of a plan (SqlPlan); 0
// leaves "sparkPlanInfo" unread (the plan stays nullopt).
error_code ReadSqlExecutionStart(FieldRange fields, ReadFailure& failure, std::size_t max_plan_nodes,
                                 SqlExecutionStart& out);
error_code ReadSqlExecutionEnd(FieldRange fields, ReadFailure& failure, SqlExecutionEnd& out);
error_code ReadConnectSessionEvent(FieldRange fields, ReadFailure& failure, ConnectSessionEvent& out);
error_code ReadConnectOperationEvent(FieldRange fields, ReadFailure& failure, ConnectOperationEvent& out);

// sql_plan_readers.cc: "sparkPlanInfo" trees and the AQE and driver metric events.
error_code ReadSparkPlanInfo(ondemand::value& value, ReadFailure& failure, std::size_t max_plan_nodes,
                             SqlPlan& out);
error_code ReadSqlAdaptiveExecutionUpdate(FieldRange fields, ReadFailure& failure, std::size_t max_plan_nodes,
                                          SqlAdaptiveExecutionUpdate& out);
error_code ReadSqlAdaptiveMetricUpdates(FieldRange fields, ReadFailure& failure,
                                        SqlAdaptiveMetricUpdates& out);
error_code ReadDriverAccumUpdates(FieldRange fields, ReadFailure& failure, DriverAccumUpdates& out);

}  // namespace sparktrace::listener::events::json
