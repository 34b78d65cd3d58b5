#pragma once
// The span vocabulary: every span name, attribute key and event name that sparktrace writes on a
// span and reads back, in one place (as Envoy's source/common/tracing/common_values.h and
// otel-cpp's semconv/ headers hold theirs). Producers (the proxy's tracers, the listener's span
// builder, the feed) and readers (the store's task index, the trace view, the demo) name these
// constants rather than repeating the literal, so that the two cannot drift apart; a unit test
// (tests/unit/tracing/span_vocabulary_test.cc) fails when a quoted "spark.", "airflow." or
// "finding." key appears in C++ elsewhere. Spark's own configuration and property names
// ("spark.executor.memory", "spark.sql.shuffle.partitions") are Spark's vocabulary, not ours.
//
// The `sparktrace.finding` event's attributes are encoded and decoded by tracing/finding_event.h.
// Changing a spelling here changes what stored traces and dashboards hold: treat it as a schema.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparktrace::tracing {

// --- Airflow identity: on every span of an Airflow task attempt (the proxy's operation spans, the
// task span, the listener's spans), and indexed by the store (tracing/airflow_identity.h).
inline constexpr std::string_view kAirflowAttributePrefix = "airflow.";
inline constexpr std::string_view kAirflowDagIdKey = "airflow.dag_id";
inline constexpr std::string_view kAirflowTaskIdKey = "airflow.task_id";
inline constexpr std::string_view kAirflowRunIdKey = "airflow.run_id";
inline constexpr std::string_view kAirflowTryNumberKey = "airflow.try_number";  // int64 (or decimal string)
inline constexpr std::string_view kAirflowMapIndexKey = "airflow.map_index";    // int64, -1 when unmapped

// --- airflow.task: the attempt's own span, reported by the Airflow integration
// (tracing/airflow_task_report.h).
inline constexpr std::string_view kAirflowTaskSpanName = "airflow.task";
inline constexpr std::string_view kAirflowTaskStateKey = "airflow.task.state";
inline constexpr std::string_view kAirflowTaskOperatorKey = "airflow.task.operator";
inline constexpr std::string_view kAirflowTaskHostnameKey = "airflow.task.hostname";
inline constexpr std::string_view kAirflowVersionKey = "airflow.version";

// --- The proxy's spans (tracing/connect/): spark_connect.operation, the RPC spans and their events.
// The operation span, one per Spark Connect operation (tracing/connect/spark_connect_tracer.h).
inline constexpr std::string_view kSparkConnectOperationSpanName = "spark_connect.operation";
// Shared with the listener's lifecycle span: operation, session and user ids.
inline constexpr std::string_view kSparkConnectOperationIdKey = "spark.connect.operation_id";
inline constexpr std::string_view kSparkConnectSessionIdKey = "spark.connect.session_id";
inline constexpr std::string_view kSparkConnectUserIdKey = "spark.connect.user_id";
inline constexpr std::string_view kSparkConnectServiceName = "spark.connect.SparkConnectService";
// An RPC span is named after its method: "spark.connect.SparkConnectService/ExecutePlan".
inline constexpr std::string_view kSparkConnectRpcSpanPrefix = "spark.connect.SparkConnectService/";
inline constexpr std::string_view kSparkConnectClientTypeKey = "spark.connect.client_type";
inline constexpr std::string_view kSparkConnectPlanKindKey = "spark.connect.plan_kind";
inline constexpr std::string_view kSparkConnectRelationKey = "spark.connect.relation";
inline constexpr std::string_view kSparkConnectCommandKey = "spark.connect.command";
inline constexpr std::string_view kSparkConnectTagsKey = "spark.connect.tags";
inline constexpr std::string_view kSparkConnectReattachableKey = "spark.connect.reattachable";
// An operation first seen on a ReattachExecute says so: its span starts with that call, not with
// the ExecutePlan, which came before this process saw anything of the operation.
inline constexpr std::string_view kSparkConnectFirstSeenKey = "spark.connect.operation.first_seen";
// On an RPC span whose spark-connect-operation-id header named another operation than its body.
inline constexpr std::string_view kSparkConnectOperationIdHeaderKey = "spark.connect.operation_id_header";
inline constexpr std::string_view kSparkConnectEndedBeforeCallKey =
    "spark.connect.operation.ended_before_call";
inline constexpr std::string_view kSparkConnectServerSideSessionIdKey =
    "spark.connect.server_side_session_id";
inline constexpr std::string_view kSparkConnectResponseBatchesKey = "spark.connect.response.batches";
inline constexpr std::string_view kSparkConnectResultCompleteKey = "spark.connect.result_complete";
inline constexpr std::string_view kSparkConnectReattachLastResponseIdKey =
    "spark.connect.reattach.last_response_id";
inline constexpr std::string_view kSparkConnectReleaseKey = "spark.connect.release";
inline constexpr std::string_view kSparkConnectInterruptTypeKey = "spark.connect.interrupt.type";
inline constexpr std::string_view kSparkConnectInterruptTargetKey = "spark.connect.interrupt.target";
inline constexpr std::string_view kSparkConnectInterruptedIdsKey = "spark.connect.interrupted_ids";
inline constexpr std::string_view kSparkConnectAnalyzeKey = "spark.connect.analyze";
inline constexpr std::string_view kSparkConnectConfigOperationKey = "spark.connect.config.operation";
inline constexpr std::string_view kSparkConnectArtifactPayloadKey = "spark.connect.artifact.payload";
// The operation's result, summed by the tracer (tracing/connect/spark_connect_tracer.h).
inline constexpr std::string_view kSparkConnectResultRowsKey = "spark.connect.result.rows";
inline constexpr std::string_view kSparkConnectResultArrowBytesKey = "spark.connect.result.arrow_bytes";
inline constexpr std::string_view kSparkConnectResultBatchesKey = "spark.connect.result.batches";
inline constexpr std::string_view kSparkConnectReattachCountKey = "spark.connect.reattach_count";
inline constexpr std::string_view kSparkConnectTimeToFirstBatchMsKey = "spark.connect.time_to_first_batch_ms";
// Shown by the renderer only; the store keeps them in the attributes JSON.
inline constexpr std::string_view kSparkConnectResponseRowsKey = "spark.connect.response.rows";
inline constexpr std::string_view kSparkConnectResponseBytesKey = "spark.connect.response.bytes";
inline constexpr std::string_view kSparkConnectOperationOutcomeKey = "spark.connect.operation.outcome";
// Spark 4's execution_progress (tracing/connect/operation_progress.h): the latest progress, as
// attributes of the operation span and of each `spark.connect.progress` event on it (int64 each).
inline constexpr std::string_view kSparkConnectProgressEventName = "spark.connect.progress";
inline constexpr std::string_view kSparkConnectProgressStagesDoneKey = "spark.connect.progress.stages_done";
inline constexpr std::string_view kSparkConnectProgressStagesTotalKey = "spark.connect.progress.stages_total";
inline constexpr std::string_view kSparkConnectProgressTasksDoneKey = "spark.connect.progress.tasks_done";
inline constexpr std::string_view kSparkConnectProgressTasksTotalKey = "spark.connect.progress.tasks_total";
inline constexpr std::string_view kSparkConnectProgressInputBytesKey =
    "spark.connect.progress.input_bytes_read";
inline constexpr std::string_view kSparkConnectProgressInflightTasksKey =
    "spark.connect.progress.inflight_tasks";
// On the span only: execution_progress responses seen, and stages the decoder left out of them.
inline constexpr std::string_view kSparkConnectProgressUpdatesKey = "spark.connect.progress.updates";
inline constexpr std::string_view kSparkConnectProgressStagesDroppedKey =
    "spark.connect.progress.stages_dropped";
// On a live snapshot of a still running operation span only ("running"); its final version, which
// replaces the snapshot in the store, carries kSparkConnectOperationOutcomeKey instead.
inline constexpr std::string_view kSparkConnectOperationStateKey = "spark.connect.operation.state";
inline constexpr std::string_view kSparkConnectOperationRunning = "running";
// The RPC span's keys: OpenTelemetry's RPC conventions (rpc.system "grpc", rpc.service, rpc.method,
// rpc.grpc.status_code), plus what the proxy counted of the call's messages (int64 each) and the time to
// its first response (ms, double; absent when nothing came back). kRpcGrpcStatusCodeKey is also on an
// operation span's "error" events.
inline constexpr std::string_view kRpcSystemKey = "rpc.system";
inline constexpr std::string_view kRpcSystemGrpc = "grpc";
inline constexpr std::string_view kRpcServiceKey = "rpc.service";
inline constexpr std::string_view kRpcMethodKey = "rpc.method";
inline constexpr std::string_view kRpcGrpcStatusCodeKey = "rpc.grpc.status_code";
inline constexpr std::string_view kRpcRequestMessagesKey = "rpc.request.messages";
inline constexpr std::string_view kRpcRequestBytesKey = "rpc.request.bytes";
inline constexpr std::string_view kRpcResponseMessagesKey = "rpc.response.messages";
inline constexpr std::string_view kRpcResponseBytesKey = "rpc.response.bytes";
inline constexpr std::string_view kRpcTimeToFirstResponseMsKey = "rpc.time_to_first_response_ms";
// sparktrace's own bookkeeping on the proxy's spans.
inline constexpr std::string_view kTraceOriginKey = "sparktrace.trace_origin";  // "client", "airflow", ...
inline constexpr std::string_view kInterruptSpanIdKey = "sparktrace.interrupt_span_id";
inline constexpr std::string_view kUndecodableMessagesKey = "sparktrace.undecodable_messages";
inline constexpr std::string_view kDroppedEventsKey = "sparktrace.dropped_events";

// --- spark.connect.operation.lifecycle: the driver's side of one Connect operation
// (listener/correlate/span_builder.cc), which also carries kSparkConnectOperationIdKey,
// kSparkConnectSessionIdKey, kSparkConnectUserIdKey and kSparkAppIdKey.
inline constexpr std::string_view kSparkConnectLifecycleSpanName = "spark.connect.operation.lifecycle";
inline constexpr std::string_view kSparkConnectJobTagKey = "spark.connect.job_tag";
inline constexpr std::string_view kSparkConnectProducedRowCountKey = "spark.connect.produced_row_count";

// --- spark.application: the root of an application's trace (span_builder.cc).
inline constexpr std::string_view kSparkApplicationSpanName = "spark.application";
inline constexpr std::string_view kSparkAppIdKey = "spark.app.id";  // also on lifecycle spans
inline constexpr std::string_view kSparkAppAttemptIdKey = "spark.app.attempt_id";
inline constexpr std::string_view kSparkAppNameKey = "spark.app.name";
inline constexpr std::string_view kSparkAppStatusKey = "spark.app.status";
inline constexpr std::string_view kSparkVersionKey = "spark.version";
inline constexpr std::string_view kSparkAppExecutorsAddedKey = "spark.app.executors_added";
inline constexpr std::string_view kSparkAppConnectOperationsKey = "spark.app.connect_operations";

// --- spark.job (span_builder.cc).
inline constexpr std::string_view kSparkJobSpanName = "spark.job";
inline constexpr std::string_view kSparkJobIdKey = "spark.job.id";
inline constexpr std::string_view kSparkJobStatusKey = "spark.job.status";
inline constexpr std::string_view kSparkJobStageIdsKey = "spark.job.stage_ids";
inline constexpr std::string_view kSparkSqlExecutionIdKey = "spark.sql.execution_id";

// --- spark.sql.execution: one SQL execution (listener/correlate/sql_execution_span.h), under its
// Connect operation's span, else its application's root; also carries kSparkSqlExecutionIdKey.
inline constexpr std::string_view kSparkSqlExecutionSpanName = "spark.sql.execution";
inline constexpr std::string_view kSparkSqlDescriptionKey = "spark.sql.description";  // cut
inline constexpr std::string_view kSparkSqlJobIdsKey = "spark.sql.job_ids";  // string list, bounded
inline constexpr std::string_view kSparkSqlJobCountKey = "spark.sql.job_count";
inline constexpr std::string_view kSparkSqlPlanVersionKey = "spark.sql.plan_version";  // initial|adaptive|none
inline constexpr std::string_view kSparkSqlOperatorCountKey = "spark.sql.operator_count";
// Σ of its distinct operators' time (ms, double): what a node's share is of.
inline constexpr std::string_view kSparkSqlTotalOperatorTimeMsKey = "spark.sql.operator_time_ms";
// The plan is not whole: the parser dropped operators, or kSparkSqlPlanKey lost metrics or nodes.
inline constexpr std::string_view kSparkSqlPlanTruncatedKey = "spark.sql.plan_truncated";
// The whole plan as compact JSON (listener/correlate/sql_plan_json.h), bounded by
// --sql-plan-max-bytes; for the store and the trace view only: the OTLP encoder leaves it out.
inline constexpr std::string_view kSparkSqlPlanKey = "spark.sql.plan";
// The top operators by time, at most kSparkSqlTopOperators, one span event each, hottest first.
inline constexpr std::string_view kSparkSqlOperatorEvent = "spark.sql.operator";
inline constexpr std::size_t kSparkSqlTopOperators = 5;
inline constexpr std::string_view kSparkSqlOperatorRankKey = "spark.sql.operator.rank";  // 1 = hottest
inline constexpr std::string_view kSparkSqlOperatorNodeIdKey = "spark.sql.operator.node_id";
inline constexpr std::string_view kSparkSqlOperatorNameKey = "spark.sql.operator.name";
inline constexpr std::string_view kSparkSqlOperatorTimeMsKey = "spark.sql.operator.time_ms";  // double
inline constexpr std::string_view kSparkSqlOperatorRowsKey = "spark.sql.operator.output_rows";
inline constexpr std::string_view kSparkSqlOperatorSpillBytesKey = "spark.sql.operator.spill_bytes";
inline constexpr std::string_view kSparkSqlOperatorPeakMemoryKey = "spark.sql.operator.peak_memory_bytes";

// --- spark.stage: one stage attempt (span_builder.cc).
inline constexpr std::string_view kSparkStageSpanName = "spark.stage";
inline constexpr std::string_view kSparkStageIdKey = "spark.stage.id";
inline constexpr std::string_view kSparkStageAttemptKey = "spark.stage.attempt";
inline constexpr std::string_view kSparkStageNameKey = "spark.stage.name";
inline constexpr std::string_view kSparkStageTasksKey = "spark.stage.tasks";
inline constexpr std::string_view kSparkStageTasksEndedKey = "spark.stage.tasks_ended";
inline constexpr std::string_view kSparkStageFailedTasksKey = "spark.stage.failed_tasks";
inline constexpr std::string_view kSparkStageKilledTasksKey = "spark.stage.killed_tasks";
inline constexpr std::string_view kSparkStageParentIdsKey = "spark.stage.parent_ids";
inline constexpr std::string_view kSparkStageTaskDurationP50Key = "spark.stage.task_duration_ms.p50";
inline constexpr std::string_view kSparkStageTaskDurationP95Key = "spark.stage.task_duration_ms.p95";
inline constexpr std::string_view kSparkStageTaskDurationMaxKey = "spark.stage.task_duration_ms.max";
inline constexpr std::string_view kSparkStageTaskDurationExactKey = "spark.stage.task_duration_exact";
inline constexpr std::string_view kSparkStageExecutorCpuTimeMsKey = "spark.stage.executor_cpu_time_ms";
inline constexpr std::string_view kSparkStageJvmGcTimeMsKey = "spark.stage.jvm_gc_time_ms";
inline constexpr std::string_view kSparkStageMemorySpilledBytesKey = "spark.stage.memory_spilled_bytes";
inline constexpr std::string_view kSparkStageDiskSpilledBytesKey = "spark.stage.disk_spilled_bytes";
inline constexpr std::string_view kSparkStageShuffleReadBytesKey = "spark.stage.shuffle_read_bytes";
inline constexpr std::string_view kSparkStageShuffleFetchWaitMsKey = "spark.stage.shuffle_fetch_wait_ms";
inline constexpr std::string_view kSparkStageShuffleWriteBytesKey = "spark.stage.shuffle_write_bytes";
inline constexpr std::string_view kSparkStageInputBytesKey = "spark.stage.input_bytes";
inline constexpr std::string_view kSparkStageInputRecordsKey = "spark.stage.input_records";
inline constexpr std::string_view kSparkStageOutputBytesKey = "spark.stage.output_bytes";
inline constexpr std::string_view kSparkStageOutputRecordsKey = "spark.stage.output_records";
inline constexpr std::string_view kSparkStagePeakExecutionMemoryBytesKey =
    "spark.stage.peak_execution_memory_bytes";
// Σ executor run time of its tasks.
inline constexpr std::string_view kStageExecutorRunTimeMs = "spark.stage.executor_run_time_ms";
// Its successful tasks' durations as kStageDurationProfilePoints nearest-rank quantiles (q = 0,
// 0.05, … 1: the minimum first, the maximum last), as a string array of integers in ms; the what-if
// simulator (traceview/what_if_of_spans.h) rebuilds the stage's tasks from it.
inline constexpr std::string_view kStageTaskDurationProfile = "spark.stage.task_duration_ms.profile";
inline constexpr std::size_t kStageDurationProfilePoints = 21;

// --- spark.phase.<name>: where an operation's or application's wall time went ("resource_wait",
// "compute", "io_write", "idle"; listener/correlate/phases.h). The span name is the prefix and the
// phase's name; the application root also carries "spark.phase.<name>.ms" totals.
//
// The driver's phases, the one enum of them: the phase model (listener/correlate/phases.h) computes
// them, the feed writes their spans and metrics, `diagnose` prints them, the trace view reads them
// back. The values index per-phase arrays (the model's totals, the task index's columns) in this order.
enum class SparkPhase : std::uint8_t { kResourceWait = 0, kCompute = 1, kIoWrite = 2, kIdle = 3 };
inline constexpr std::size_t kSparkPhaseCount = 4;
inline constexpr std::array<SparkPhase, kSparkPhaseCount> kSparkPhases = {
    SparkPhase::kResourceWait, SparkPhase::kCompute, SparkPhase::kIoWrite, SparkPhase::kIdle};
inline constexpr std::array<std::string_view, kSparkPhaseCount> kSparkPhaseNames = {
    "resource_wait", "compute", "io_write", "idle"};
constexpr std::string_view SparkPhaseName(SparkPhase phase) {
  const auto index = static_cast<std::size_t>(phase);
  return index < kSparkPhaseCount ? kSparkPhaseNames[index] : kSparkPhaseNames.back();
}
// The phase a name ("io_write", a phase span's name without kSparkPhasePrefix) names, if any.
constexpr std::optional<SparkPhase> SparkPhaseNamed(std::string_view name) {
  for (const SparkPhase phase : kSparkPhases) {
    if (SparkPhaseName(phase) == name) return phase;
  }
  return std::nullopt;
}
// An attempt's whole wall time in phases (the trace view's breakdown, docs/trace-view-api.md; the
// history and the regression compare runs in them, diagnose/regression/): the driver's phases and
// the two only the proxy sees around them, the task's own code between calls (client) and rows
// streaming back to it (result_transfer). In the API's order; per-phase arrays are indexed by it.
enum class ViewPhase : std::uint8_t { kClient, kResourceWait, kCompute, kIoWrite, kIdle, kResultTransfer };
inline constexpr std::size_t kViewPhaseCount = 6;
// The view's phase of a driver phase: the same name.
constexpr ViewPhase ViewPhaseOf(SparkPhase phase) {
  switch (phase) {
    case SparkPhase::kResourceWait:
      return ViewPhase::kResourceWait;
    case SparkPhase::kCompute:
      return ViewPhase::kCompute;
    case SparkPhase::kIoWrite:
      return ViewPhase::kIoWrite;
    case SparkPhase::kIdle:
      break;
  }
  return ViewPhase::kIdle;
}
// "client", "resource_wait", "compute", "io_write", "idle", "result_transfer".
constexpr std::string_view ViewPhaseName(ViewPhase phase) {
  switch (phase) {
    case ViewPhase::kClient:
      return "client";
    case ViewPhase::kResultTransfer:
      return "result_transfer";
    case ViewPhase::kResourceWait:
      return SparkPhaseName(SparkPhase::kResourceWait);
    case ViewPhase::kCompute:
      return SparkPhaseName(SparkPhase::kCompute);
    case ViewPhase::kIoWrite:
      return SparkPhaseName(SparkPhase::kIoWrite);
    case ViewPhase::kIdle:
      break;
  }
  return SparkPhaseName(SparkPhase::kIdle);
}
// What a person reads for it (the page's sections, the regression's words): "outside Spark",
// "resource wait", "compute", "I/O write", "driver idle", "result transfer".
constexpr std::string_view ViewPhaseLabel(ViewPhase phase) {
  constexpr std::array<std::string_view, kViewPhaseCount> kLabels = {
      "outside Spark", "resource wait", "compute", "I/O write", "driver idle", "result transfer"};
  return kLabels[static_cast<std::size_t>(phase) % kViewPhaseCount];
}
inline constexpr std::string_view kSparkPhasePrefix = "spark.phase.";
inline constexpr std::string_view kSparkPhaseMsSuffix = ".ms";
inline constexpr std::string_view kSparkPhaseNameKey = "spark.phase.name";
inline constexpr std::string_view kSparkPhaseDurationMsKey = "spark.phase.duration_ms";
inline constexpr std::string_view kSparkPhaseTotalMsKey = "spark.phase.total_ms";
inline constexpr std::string_view kSparkPhaseWindowMsKey = "spark.phase.window_ms";

// --- Executors: what a Spark application had allocated, on spark.connect.operation.lifecycle and
// spark.application spans (span_builder.cc), read by the trace view's cost model
// (diagnose/cost/cost_model.h). The count facts (the executor lane's) are older than the cost model
// and keep their keys.
inline constexpr std::string_view kExecutorsActiveAtStart = "spark.executors.active_at_start";  // int
inline constexpr std::string_view kExecutorCoresAtStart = "spark.executors.cores_at_start";     // int
inline constexpr std::string_view kExecutorsChangesNotListed = "spark.executors.changes_not_listed";
inline constexpr std::string_view kExecutorAddedEvent = "spark.executor.added";
inline constexpr std::string_view kExecutorRemovedEvent = "spark.executor.removed";
// On those events: executors and their cores alive right after the change, and the one changed.
inline constexpr std::string_view kExecutorIdKey = "spark.executor.id";
inline constexpr std::string_view kExecutorsActive = "spark.executors.active";            // int
inline constexpr std::string_view kExecutorCoresActive = "spark.executors.cores_active";  // int
inline constexpr std::string_view kExecutorCores = "spark.executor.cores";                // int
// Memory per executor and the driver's share, in bytes as Spark sizes the container: the heap
// (spark.*.memory) and the overhead (spark.*.memoryOverhead, else max(384 MiB, factor × heap)).
inline constexpr std::string_view kExecutorMemoryBytes = "spark.executor.memory_bytes";
inline constexpr std::string_view kExecutorMemoryOverheadBytes = "spark.executor.memory_overhead_bytes";
inline constexpr std::string_view kDriverCores = "spark.driver.cores";
inline constexpr std::string_view kDriverMemoryBytes = "spark.driver.memory_bytes";
inline constexpr std::string_view kDriverMemoryOverheadBytes = "spark.driver.memory_overhead_bytes";
// On a lifecycle span: the executor run time of the application's other tasks during the span (each
// stage's run time prorated to its overlap with the span), and how many other operations ran them.
inline constexpr std::string_view kOthersRunTimeMs = "spark.app.others_executor_run_time_ms";
inline constexpr std::string_view kOtherOperations = "spark.app.other_operations";

// --- sparktrace.finding: a diagnosis finding as a span event on the lifecycle, stage or application
// span it concerns (feed/finding_span_events.h); its attributes are tracing/finding_event.h's.
inline constexpr std::string_view kFindingEventName = "sparktrace.finding";
inline constexpr std::string_view kFindingIdKey = "finding.id";
inline constexpr std::string_view kFindingKeyKey = "finding.key";
inline constexpr std::string_view kFindingSeverityKey = "finding.severity";
inline constexpr std::string_view kFindingScopeKey = "finding.scope";
inline constexpr std::string_view kFindingTitleKey = "finding.title";
inline constexpr std::string_view kFindingImpactSecondsKey = "finding.impact_seconds";  // double
inline constexpr std::string_view kFindingRecipeKey = "finding.recipe";
inline constexpr std::string_view kFindingFixKey = "finding.fix";            // string list
inline constexpr std::string_view kFindingEvidenceKey = "finding.evidence";  // string list
inline constexpr std::string_view kFindingRelatedKey = "finding.related";    // "relation key" list
// A suppressed finding (diagnose/suppression.h) carries both; an unsuppressed one neither.
inline constexpr std::string_view kFindingSuppressedReasonKey = "finding.suppressed_reason";
inline constexpr std::string_view kFindingSuppressedUntilKey = "finding.suppressed_until";  // "YYYY-MM-DD"
// On the span holding findings: their ids as a list, and joined with "," for searches that need a
// string (TraceQL `{ span.sparktrace.finding_ids =~ ".*data-skew.*" }`).
inline constexpr std::string_view kFindingsKey = "sparktrace.findings";
inline constexpr std::string_view kFindingIdsKey = "sparktrace.finding_ids";

// --- Any span the listener built from an application it had not seen whole.
inline constexpr std::string_view kIncompleteKey = "sparktrace.incomplete";

}  // namespace sparktrace::tracing
