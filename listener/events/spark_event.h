#pragma once
// SparkEvent: one Spark listener event, as read from one event-log line, reduced to what the
// correlation of Spark Connect operations with jobs, stages and tasks needs.
//
// Plain value types, no JSON library types. Times are epoch milliseconds exactly as Spark writes
// them; durations carry their unit in the name (Spark mixes ms and ns). Fields Spark versions omit
// are std::optional when "absent" and "zero" mean different things (CPU time before 2.1, peak
// memory before 3.0), and plain zero otherwise (a task without shuffle read read 0 bytes).
//
// What is deliberately never copied: statement text, physical plan descriptions, job descriptions,
// call sites other than a stage's name, configuration values other than the allow-list of
// kept_properties.h (never anything that may be a secret) and stack traces (they can carry
// credentials or personal data). Of a SQL execution, its description (often the SQL text, cut to
// kMaxSqlDescriptionBytes) and its plan's operators (name, Spark's simpleString cut to
// kMaxPlanDetailBytes, metric names and accumulator ids) are kept: the operator view needs them. Of the job
// properties only spark.job.tags, spark.sql.execution.id, spark.sql.execution.root.id and spark.jobGroup.id
// are kept. Free-text messages (failure reasons, error messages) are kept up to kMaxMessageBytes; identifiers
// are kept whole, because a shortened id would join wrongly.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sparktrace::listener::events {

// Epoch milliseconds, as in Spark's "Timestamp", "Launch Time", "time", "eventTime".
using EpochMillis = std::int64_t;

// A stage's name ("count at <console>:15", "save at Job.scala:42") is cut to this many bytes, and
// before any '{' (Spark Connect names stages "Spark Connect - root { <plan> }"; the plan is not kept).
inline constexpr std::size_t kMaxStageNameBytes = 256;

// A SQL execution's "description" is cut to this many bytes (at a UTF-8 character boundary).
inline constexpr std::size_t kMaxSqlDescriptionBytes = 1024;

// A plan operator's "simpleString" (Spark's one-line description, e.g. "Filter (isnotnull(x#1) AND
// (x#1 > 5))") is cut to this many bytes.
inline constexpr std::size_t kMaxPlanDetailBytes = 200;

// Failure reasons and error messages are cut to this many bytes (at a UTF-8 character boundary):
// the head says what failed; the rest is usually a stack trace.
inline constexpr std::size_t kMaxMessageBytes = 2048;

// An event of a type this model does not need (block manager, streaming, resource profiles, ...) or
// does not know. `type` is the "Event" value, so callers can count lines per type.
struct IgnoredEvent {
  std::string type;
};

// SparkListenerLogStart: the first line of a log (absent in Spark 1.2-era logs).
struct LogStart {
  std::string spark_version;
};

// SparkListenerApplicationStart.
struct ApplicationStart {
  std::string app_name;
  std::string app_id;                     // empty in logs that predate "App ID"
  std::optional<std::string> attempt_id;  // "App Attempt ID": YARN/Kubernetes cluster mode
  EpochMillis time_ms = 0;
  std::string spark_user;
};

// SparkListenerApplicationEnd.
struct ApplicationEnd {
  EpochMillis time_ms = 0;
  std::optional<std::int32_t> exit_code;  // Spark 4.0+
};

// SparkListenerExecutorAdded.
struct ExecutorAdded {
  EpochMillis time_ms = 0;
  std::string executor_id;
  std::string host;
  std::int32_t total_cores = 0;
  // "Request Time" (3.4+): when the executor was asked for; with time_ms, the wait for resources.
  std::optional<EpochMillis> request_time_ms;
};

// SparkListenerExecutorRemoved.
struct ExecutorRemoved {
  EpochMillis time_ms = 0;
  std::string executor_id;
  std::string reason;  // "Removed Reason", cut to kMaxMessageBytes
};

// The job properties (Spark local properties) correlation needs; every other property is skipped.
struct JobProperties {
  // spark.job.tags split at ',' (see connect_job_tag.h); empty when the property is absent.
  std::vector<std::string> job_tags;
  std::optional<std::int64_t> sql_execution_id;       // spark.sql.execution.id
  std::optional<std::int64_t> sql_root_execution_id;  // spark.sql.execution.root.id (3.4+)
  std::optional<std::string> job_group_id;            // spark.jobGroup.id
};

// SparkListenerJobStart.
// One entry of a JobStart's "Stage Infos": the stage's task count when its job was submitted. Spark's
// SQL UI sizes its per-task metric arrays with it (SQLAppStatusListener.onJobStart).
struct JobStageTasks {
  std::int32_t stage_id = 0;
  std::int32_t num_tasks = 0;
};

struct JobStart {
  std::int32_t job_id = 0;
  std::optional<EpochMillis> submission_time_ms;  // absent in Spark 1.2-era logs
  std::vector<std::int32_t> stage_ids;
  std::vector<JobStageTasks> stage_tasks;  // from "Stage Infos"; empty in logs without it
  JobProperties properties;
};

enum class JobResult : std::uint8_t {
  kSucceeded,  // "JobSucceeded"
  kFailed,     // "JobFailed"
  kOther,      // a result name this model does not know
};

// SparkListenerJobEnd.
struct JobEnd {
  std::int32_t job_id = 0;
  std::optional<EpochMillis> completion_time_ms;  // absent in Spark 1.2-era logs
  JobResult result = JobResult::kSucceeded;
  std::string failure_message;  // "Job Result"."Exception"."Message", cut; empty on success
};

// "Stage Info" of SparkListenerStageSubmitted / SparkListenerStageCompleted.
struct StageInfo {
  std::int32_t stage_id = 0;
  std::int32_t attempt_id = 0;
  std::int32_t num_tasks = 0;
  std::string name;  // "Stage Name", cut (see kMaxStageNameBytes); names the stage in findings
  std::optional<EpochMillis> submission_time_ms;
  std::optional<EpochMillis> completion_time_ms;
  std::optional<std::string> failure_reason;  // set when the stage attempt failed; cut
  // "Parent IDs": the stages whose output this one reads (the job's DAG); the trace view's critical
  // path follows them.
  std::optional<std::vector<std::int32_t>> parent_ids;  // nullopt: the log does not say (Spark 1.x)
};

struct StageSubmitted {
  StageInfo stage;
};

struct StageCompleted {
  StageInfo stage;
};

// SparkListenerTaskStart.
struct TaskStart {
  std::int32_t stage_id = 0;
  std::int32_t stage_attempt_id = 0;
  std::int64_t task_id = 0;
  std::int32_t index = 0;    // partition index within the stage
  std::int32_t attempt = 0;  // attempt of this task index (retries, speculation)
  std::string executor_id;
  EpochMillis launch_time_ms = 0;
  bool speculative = false;
};

// "Task End Reason"."Reason".
enum class TaskEndReason : std::uint8_t {
  kSuccess,
  kResubmitted,  // a finished map task whose output was lost; ends without a TaskStart
  kFetchFailed,
  kExceptionFailure,
  kTaskResultLost,
  kTaskKilled,
  kTaskCommitDenied,
  kExecutorLostFailure,
  kUnknownReason,  // Spark's own "UnknownReason"
  kOther,          // a reason name this model does not know
};

// "Task Metrics" of a task end. Units are in the names; shuffle write time is ns in Spark.
struct TaskMetrics {
  std::int64_t executor_deserialize_time_ms = 0;
  std::int64_t executor_run_time_ms = 0;             // includes shuffle fetch wait
  std::optional<std::int64_t> executor_cpu_time_ns;  // Spark 2.1+
  std::int64_t jvm_gc_time_ms = 0;
  std::int64_t result_serialization_time_ms = 0;
  std::int64_t result_size_bytes = 0;
  std::int64_t memory_bytes_spilled = 0;
  std::int64_t disk_bytes_spilled = 0;
  // Spark 3.0+ "Peak Execution Memory"; for 2.x logs taken from the task's
  // "internal.metrics.peakExecutionMemory" accumulable when that is present.
  std::optional<std::int64_t> peak_execution_memory_bytes;
  // "Shuffle Read Metrics".
  std::int64_t shuffle_remote_bytes_read = 0;
  std::int64_t shuffle_local_bytes_read = 0;
  std::int64_t shuffle_fetch_wait_time_ms = 0;
  std::int64_t shuffle_records_read = 0;
  // "Shuffle Write Metrics".
  std::int64_t shuffle_bytes_written = 0;
  std::int64_t shuffle_write_time_ns = 0;
  std::int64_t shuffle_records_written = 0;
  // "Input Metrics" / "Output Metrics".
  std::int64_t input_bytes_read = 0;
  std::int64_t input_records_read = 0;
  std::int64_t output_bytes_written = 0;
  std::int64_t output_records_written = 0;
};

// One non-internal entry of a task's "Task Info"."Accumulables": a SQL metric (or a user
// accumulator) and what this task attempt added to it ("Update"). Entries named "internal.*" (the
// task metrics, also in "Task Metrics") and entries whose update is not an integer are not kept.
struct AccumulableUpdate {
  std::int64_t accumulator_id = 0;
  std::int64_t update = 0;
};

// SparkListenerTaskEnd: one task attempt. Aggregation (per stage, per job) is the caller's job.
struct TaskEnd {
  std::int32_t stage_id = 0;
  std::int32_t stage_attempt_id = 0;
  TaskEndReason reason = TaskEndReason::kSuccess;
  // What the reason says, cut to kMaxMessageBytes: "Class Name: Description" of an exception,
  // the kill reason, the executor loss reason or the fetch failure message. Empty on success.
  std::string reason_detail;
  // "Task Info".
  std::int64_t task_id = 0;
  std::int32_t index = 0;
  std::int32_t attempt = 0;
  std::string executor_id;
  EpochMillis launch_time_ms = 0;
  EpochMillis finish_time_ms = 0;  // 0 when Spark did not record it
  bool speculative = false;
  bool failed = false;
  bool killed = false;
  // Absent on some failed and resubmitted tasks; all-zero metrics then.
  bool has_metrics = false;
  TaskMetrics metrics;
  // "Task Executor Metrics"."JVMHeapMemory" (3.0+): the peak heap use of the task's executor while
  // the task ran, as polled by the executor. nullopt when absent; Spark writes 0 when nothing was
  // polled during the task (short tasks with the default heartbeat polling).
  std::optional<std::int64_t> executor_peak_jvm_heap_bytes;
  // The task's SQL metric updates, in log order (see AccumulableUpdate).
  std::vector<AccumulableUpdate> accumulable_updates;
};

// One metric of a plan operator (SparkPlanInfo "metrics", SQLMetricInfo): its display name, the
// accumulator its task and driver updates are reported under, and Spark's metric type ("sum",
// "size", "timing", "nsTiming", "average", or "v2Custom_<class>" for data source metrics).
struct SqlPlanMetric {
  std::string name;
  std::int64_t accumulator_id = 0;
  std::string type;
};

// One operator of a physical plan (SparkPlanInfo): "nodeName", "simpleString" cut to
// kMaxPlanDetailBytes, its metrics and its children (indexes into SqlPlan::nodes).
struct SqlPlanNode {
  std::string name;
  std::string detail;
  std::vector<SqlPlanMetric> metrics;
  std::vector<std::uint32_t> children;
};

// A physical plan as its "sparkPlanInfo" tree, flattened in pre-order: nodes[0] is the root and a
// node's index is its stable id. Bounded (EventParserOptions::max_plan_nodes and kMaxPlanDepth):
// operators past the bound are not kept, and dropped_nodes says so.
struct SqlPlan {
  std::vector<SqlPlanNode> nodes;
  // Operators of the log's plan that were not kept (past the node or depth bound); a lower bound
  // when a whole subtree was skipped past the depth bound (its size is not counted, 1 per subtree).
  std::int64_t dropped_nodes = 0;
};

// Plans deeper than this many operators keep only their upper kMaxPlanDepth levels.
inline constexpr std::size_t kMaxPlanDepth = 1500;

// org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart.
struct SqlExecutionStart {
  std::int64_t execution_id = 0;
  std::optional<std::int64_t> root_execution_id;  // 3.4+
  EpochMillis time_ms = 0;
  std::string description;      // cut to kMaxSqlDescriptionBytes
  std::optional<SqlPlan> plan;  // "sparkPlanInfo"; nullopt when absent
  // "jobTags" (3.5+): the job tags active when the execution started, so a Spark Connect
  // operation's tag links the execution before any of its jobs starts. nullopt before 3.5.
  std::optional<std::vector<std::string>> job_tags;
  std::optional<std::string> job_group_id;  // "jobGroupId" (4.0+)
};

// org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate: AQE replanned the
// execution; `plan` is its current physical plan (the last one of an execution is its final plan).
struct SqlAdaptiveExecutionUpdate {
  std::int64_t execution_id = 0;
  SqlPlan plan;
};

// org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveSQLMetricUpdates: metrics AQE added to
// the execution outside a plan update ("sqlPlanMetrics").
struct SqlAdaptiveMetricUpdates {
  std::int64_t execution_id = 0;
  std::vector<SqlPlanMetric> metrics;
};

// org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates: metric values set on the driver
// (broadcast build time, files read by a scan, subquery time, ...), "accumUpdates" [[id, value]...].
struct DriverAccumUpdates {
  std::int64_t execution_id = 0;
  std::vector<AccumulableUpdate> updates;
};

// org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd.
struct SqlExecutionEnd {
  std::int64_t execution_id = 0;
  EpochMillis time_ms = 0;
  std::optional<std::string> error_message;  // cut; 3.4+ writes null on success
};

enum class ConnectSessionPhase : std::uint8_t {
  kStarted,  // SparkListenerConnectSessionStarted
  kClosed,   // SparkListenerConnectSessionClosed
};

// org.apache.spark.sql.connect.service.SparkListenerConnectSession{Started,Closed}.
struct ConnectSessionEvent {
  ConnectSessionPhase phase = ConnectSessionPhase::kStarted;
  std::string session_id;
  std::string user_id;
  EpochMillis event_time_ms = 0;
};

enum class ConnectOperationPhase : std::uint8_t {
  kStarted,            // ExecutePlan accepted, before analysis
  kAnalyzed,           // plan analysed
  kReadyForExecution,  // planned, before jobs run
  kFinished,           // execution done (results may still be streaming)
  kFailed,
  kCanceled,
  kClosed,  // execution released
};

// org.apache.spark.sql.connect.service.SparkListenerConnectOperation{Started,...,Closed}.
// statementText, sparkSessionTags, userName and extraTags are never copied.
struct ConnectOperationEvent {
  ConnectOperationPhase phase = ConnectOperationPhase::kStarted;
  std::string job_tag;  // exactly the operation's job tag (see connect_job_tag.h)
  std::string operation_id;
  EpochMillis event_time_ms = 0;
  std::string session_id;                          // kStarted only
  std::string user_id;                             // kStarted only
  std::optional<std::int64_t> produced_row_count;  // kFinished only, when Spark knew it
  std::string error_message;                       // kFailed only, cut
};

// One configuration property of a SparkListenerEnvironmentUpdate.
struct ConfigProperty {
  std::string key;
  std::string value;  // cut to kMaxPropertyValueBytes (kept_properties.h)
};

// SparkListenerEnvironmentUpdate: of "Spark Properties" and "Hadoop Properties", only the keys
// IsKeptProperty (kept_properties.h) allows, in log order. JVM, system and classpath entries are
// never read.
struct EnvironmentUpdate {
  std::vector<ConfigProperty> properties;
};

using SparkEvent =
    std::variant<IgnoredEvent, LogStart, ApplicationStart, ApplicationEnd, ExecutorAdded, ExecutorRemoved,
                 JobStart, JobEnd, StageSubmitted, StageCompleted, TaskStart, TaskEnd, SqlExecutionStart,
                 SqlExecutionEnd, SqlAdaptiveExecutionUpdate, SqlAdaptiveMetricUpdates, DriverAccumUpdates,
                 ConnectSessionEvent, ConnectOperationEvent, EnvironmentUpdate>;

// A short stable name for the parsed alternative ("TaskEnd", "ConnectOperation", ...); for an
// IgnoredEvent, its "Event" value. For counters and logs.
std::string_view SparkEventName(const SparkEvent& event);

std::string_view TaskEndReasonName(TaskEndReason reason);
std::string_view ConnectOperationPhaseName(ConnectOperationPhase phase);

}  // namespace sparktrace::listener::events
