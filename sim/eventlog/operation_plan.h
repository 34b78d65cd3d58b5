#pragma once
// The simulator's plan of one Spark Connect operation: its jobs, stages and task attempts with
// virtual times and metrics, and the listener events they make, in time order. Plans hold local
// indexes; Spark's global ids (job, stage, task, RDD, SQL execution ids) are assigned when the
// events are rendered in log order (see EventLogGenerator), as Spark assigns them at submission.
//
// Plain values; not synchronised.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::sim::eventlog {

using EpochMillis = std::int64_t;

// How virtual times become the times written: identity offline; in live mode durations shrink by
// `scale` (--time-scale) around the application's real start, so that what the log says happened
// lines up with the wall clock. Applies to timestamps and to duration metrics alike.
struct TimeMapping {
  EpochMillis origin_ms = 0;
  double scale = 1.0;

  EpochMillis Time(EpochMillis virtual_ms) const {
    return scale == 1.0 ? virtual_ms : origin_ms + Scaled(virtual_ms - origin_ms);
  }
  std::int64_t Duration(std::int64_t virtual_duration) const {
    return scale == 1.0 ? virtual_duration : Scaled(virtual_duration);
  }
  // The virtual time written as `written_ms` (the inverse of Time).
  EpochMillis VirtualTime(EpochMillis written_ms) const {
    return scale == 1.0
               ? written_ms
               : origin_ms + static_cast<EpochMillis>(static_cast<double>(written_ms - origin_ms) / scale);
  }

 private:
  std::int64_t Scaled(std::int64_t value) const {
    return static_cast<std::int64_t>(static_cast<double>(value) * scale + (value >= 0 ? 0.5 : -0.5));
  }
};

enum class OperationSize : std::uint8_t {
  kSmall,   // 8 map tasks, 4 result tasks, 32 MiB input per map task
  kMedium,  // 48 map tasks, 16 result tasks, 96 MiB per map task
  kLarge,   // 160 map tasks, 48 result tasks, 128 MiB per map task
};

// What a Spark Connect client asked for: ids as in ExecutePlanRequest.
struct OperationSpec {
  std::string operation_id;            // a UUID
  std::string session_id;              // a UUID
  std::string user_id;                 // UserContext.user_id
  std::vector<std::string> user_tags;  // ExecutePlanRequest.tags
  // A Command writing output (write_operation / write_operation_v2): its result stage writes.
  bool write = false;
  OperationSize size = OperationSize::kMedium;
  // The plan as text (Spark uses the request's plan, redacted, for statementText and, abbreviated,
  // for the job description); empty: a plausible plan text is made up.
  std::string statement_text;
};

// Metrics of one task attempt, in Spark's units.
struct TaskMetricsPlan {
  std::int64_t deserialize_ms = 0;
  std::int64_t deserialize_cpu_ns = 0;
  std::int64_t run_ms = 0;
  std::int64_t cpu_ns = 0;
  std::int64_t peak_execution_memory = 0;
  std::int64_t result_size = 0;
  std::int64_t gc_ms = 0;
  std::int64_t result_serialization_ms = 0;
  std::int64_t memory_spilled = 0;
  std::int64_t disk_spilled = 0;
  std::int64_t remote_blocks = 0;
  std::int64_t local_blocks = 0;
  std::int64_t fetch_wait_ms = 0;
  std::int64_t remote_bytes_read = 0;
  std::int64_t local_bytes_read = 0;
  std::int64_t shuffle_records_read = 0;
  std::int64_t remote_requests_ms = 0;
  std::int64_t shuffle_bytes_written = 0;
  std::int64_t shuffle_write_ns = 0;
  std::int64_t shuffle_records_written = 0;
  std::int64_t input_bytes = 0;
  std::int64_t input_records = 0;
  std::int64_t output_bytes = 0;
  std::int64_t output_records = 0;
};

enum class TaskOutcome : std::uint8_t {
  kSuccess,
  kExceptionFailure,  // exception_class / exception_message
  kExecutorLost,      // the executor died under it (loss_reason)
  kKilled,            // its stage was aborted
};

// One SQL metric update of a task (its "Accumulables" entry): the metric's index in
// SqlPlanDraft::metrics, the task's value and the running total Spark writes as "Value".
struct SqlMetricUpdate {
  int metric = 0;
  std::int64_t update = 0;
  std::int64_t value = 0;
};

struct TaskPlan {
  int stage = 0;  // index in OperationPlan::stages
  int index = 0;
  int attempt = 0;
  int executor = 0;  // index in the generator's executor table
  EpochMillis launch_ms = 0;
  EpochMillis finish_ms = 0;
  TaskOutcome outcome = TaskOutcome::kSuccess;
  std::string exception_class;
  std::string exception_message;
  std::string loss_reason;
  bool has_metrics = true;
  TaskMetricsPlan metrics;
  std::vector<SqlMetricUpdate> sql_updates;  // set by DraftSqlPlan for successful attempts
  std::int64_t global_task_id = -1;          // assigned at its TaskStart
};

struct StagePlan {
  int num_tasks = 0;
  bool result_stage = false;  // ResultTask vs ShuffleMapTask
  bool writes_output = false;
  std::vector<int> parents;  // indexes in OperationPlan::stages
  EpochMillis submitted_ms = 0;
  EpochMillis completed_ms = 0;
  // Set when the stage attempt aborts: the task that failed for good.
  std::optional<int> aborting_task;
  int global_stage_id = -1;  // assigned at the JobStart of the first job listing it
  int rdd_id = -1;
};

struct JobPlan {
  // Stages the job lists, parents first; a stage run by an earlier job is listed again (Spark
  // shows it as skipped).
  std::vector<int> stages;
  EpochMillis submitted_ms = 0;
  EpochMillis completed_ms = 0;
  bool failed = false;
  int global_job_id = -1;  // assigned at its JobStart
};

// The SQL execution's physical plan as Spark 3.5/4.x writes its sparkPlanInfo (sql_plan_drafter.h).
// Metrics are numbered in `metrics`; their accumulator ids are assigned when the SQL execution id is
// (SqlAccumulatorId).
struct SqlMetricDraft {
  std::string name;  // "number of output rows"
  std::string type;  // "sum", "size", "timing", "nsTiming", "average"
};

struct SqlNodeDraft {
  std::string name;    // "nodeName"
  std::string simple;  // "simpleString"
  std::vector<int> metrics;
  std::vector<int> children;  // indexes in SqlPlanDraft::nodes
};

struct SqlPlanDraft {
  std::vector<SqlNodeDraft> nodes;  // nodes[0] is the root
  std::vector<SqlMetricDraft> metrics;
  // Values set on the driver (SparkListenerDriverAccumUpdates): (metric, value).
  std::vector<std::pair<int, std::int64_t>> driver_updates;
};

enum class PlannedEventKind : std::uint8_t {
  kSessionStarted,
  kOperationStarted,
  kOperationAnalyzed,
  kOperationReady,
  kSqlExecutionStart,
  kSqlDriverUpdates,  // the plan's driver-side metric values (scan files, broadcast times)
  kJobStart,          // ref: job
  kStageSubmitted,    // ref: stage
  kTaskStart,         // ref: task
  kTaskEnd,           // ref: task
  kStageCompleted,    // ref: stage
  kJobEnd,            // ref: job
  kSqlExecutionEnd,
  kOperationFinished,
  kOperationFailed,
  kOperationClosed,
  kExecutorAdded,    // ref: executor (generator table)
  kExecutorRemoved,  // ref: executor
};

struct PlannedEvent {
  EpochMillis time_ms = 0;
  PlannedEventKind kind = PlannedEventKind::kOperationStarted;
  int ref = -1;
};

struct OperationPlan {
  OperationSpec spec;
  int ordinal = 0;                    // 0 for the application's first operation
  std::string job_tag;                // the operation tag, in the order the Spark version writes
  std::vector<std::string> job_tags;  // job_tag, then one session tag per user tag
  std::string statement_text;
  std::string description;  // "Spark Connect - <plan>", abbreviated like Spark
  std::vector<JobPlan> jobs;
  std::vector<StagePlan> stages;
  std::vector<TaskPlan> tasks;
  std::vector<PlannedEvent> events;  // in time order (ties: in logical order)
  bool failed = false;
  std::int64_t produced_rows = 0;
  SqlPlanDraft sql_plan;
  std::int64_t sql_execution_id = -1;  // assigned at its SQL execution start
};

}  // namespace sparktrace::sim::eventlog
