#pragma once
// Internal to sparktrace_listener_events: one reader per modelled event type. Each reads the
// top-level fields left after "Event" into its struct, skipping keys it does not need, and
// fails with the key at fault (ReadFailure) when a field has the wrong type or a required field
// is missing. Required are only the fields an event means nothing without (ids, the event time,
// a job's result); everything else Spark versions may omit.

#include <string_view>

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
// `accumulables_json` receives the raw text of "Task Info"."Accumulables" (a view into the line),
// for ReadPeakExecutionMemoryAccumulable once the line is done: logs before Spark 3.0 carry the
// task's peak execution memory only there.
error_code ReadTaskEnd(FieldRange fields, ReadFailure& failure, TaskEnd& out,
                       std::string_view& accumulables_json);
// Sets `out` from the "internal.metrics.peakExecutionMemory" accumulable of an "Accumulables"
// array document; leaves it alone when there is none.
error_code ReadPeakExecutionMemoryAccumulable(ondemand::document& accumulables,
                                              std::optional<std::int64_t>& out);

// sql_connect_event_readers.cc
error_code ReadSqlExecutionStart(FieldRange fields, ReadFailure& failure, SqlExecutionStart& out);
error_code ReadSqlExecutionEnd(FieldRange fields, ReadFailure& failure, SqlExecutionEnd& out);
error_code ReadConnectSessionEvent(FieldRange fields, ReadFailure& failure, ConnectSessionEvent& out);
error_code ReadConnectOperationEvent(FieldRange fields, ReadFailure& failure, ConnectOperationEvent& out);

}  // namespace sparktrace::listener::events::json
