#pragma once
// ApplicationModel: one Spark application attempt as its listener events describe it, built by
// feeding the SparkEvents of its event log in log order. It keeps what correlation needs: the
// application's times, executors, jobs, stage attempts (with task statistics aggregated as tasks
// end), SQL executions and Spark Connect operations, and answers which jobs belong to which
// Connect operation.
//
// One model per event log: a log holds one application attempt (a second ApplicationStart, which
// Spark never writes, only overwrites the application fields).
//
// Order tolerance: records are created by whichever event names them first (a JobEnd without its
// JobStart, TaskEnds of a stage never submitted, Connect job tags before the operation's own
// events), and joins (operation ↔ job, job ↔ SQL execution, stage ↔ job) are computed when asked,
// not when events arrive, so events arriving after an operation ended still join.
//
// Connect operations are keyed by operation id (a UUID, unique per server). A job joins an
// operation by its own spark.job.tags operation tag, or through its SQL execution (or that
// execution's root execution) whose SqlExecutionStart.jobTags holds the operation tag (3.5+). Tags
// are parsed with the user/session order the log's Spark version implies (3.5.0/3.5.1 swap them).
//
// Cost: the joins use indexes kept as events arrive (stage id → jobs listing it, operation →
// tagged jobs, SQL execution → jobs, operation → executions, root → nested executions), so a
// query costs in proportion to its answer, not to the application's size.
//
// Threads: not synchronised; one thread feeds and reads a model. Memory grows with the number of
// jobs, stages and operations of the application (task data is aggregated; see task_statistics.h)
// until ForgetFinishedBefore drops what is done: a Spark Connect server is one application that
// runs for weeks, so its feeder forgets operations once their spans are final.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "listener/correlate/sql_execution_model.h"
#include "listener/correlate/task_statistics.h"
#include "listener/events/connect_job_tag.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::correlate {

struct ExecutorRecord {
  std::string executor_id;
  std::string host;
  std::int32_t total_cores = 0;
  events::EpochMillis added_ms = 0;
  std::optional<events::EpochMillis> request_ms;  // 3.4+
  std::optional<events::EpochMillis> removed_ms;
  std::string removed_reason;
};

// What the tasks run on one executor id add up to (every TaskEnd with a launch and finish time).
struct ExecutorUsage {
  std::int64_t busy_ms = 0;  // Σ (finish − launch) of its tasks; a core-count of slots may overlap
  std::int64_t tasks = 0;
};

enum class JobStatus : std::uint8_t { kRunning, kSucceeded, kFailed, kUnknown };
std::string_view JobStatusName(JobStatus status);  // "running", "succeeded", "failed", "unknown"

struct JobRecord {
  std::int32_t job_id = 0;
  bool started = false;  // a JobStart was seen (else the record comes from a JobEnd alone)
  std::optional<events::EpochMillis> submission_ms;
  std::optional<events::EpochMillis> completion_ms;
  JobStatus status = JobStatus::kRunning;
  std::string failure_message;
  std::vector<std::int32_t> stage_ids;
  // The operation id of the Connect operation tag among the job's tags, if any.
  std::optional<std::string> connect_operation_id;
  std::optional<std::int64_t> sql_execution_id;
  std::optional<std::int64_t> sql_root_execution_id;

  // Its status once nothing more will be heard of its application (ApplicationEnd, or a log that
  // stopped): a job still running never reported its result, so it is unknown, not running.
  JobStatus StatusWhenOver(bool application_over) const {
    return status == JobStatus::kRunning && application_over ? JobStatus::kUnknown : status;
  }
};

struct StageAttemptKey {
  std::int32_t stage_id = 0;
  std::int32_t attempt_id = 0;
  auto operator<=>(const StageAttemptKey&) const = default;
};

struct StageAttemptRecord {
  StageAttemptKey key;
  std::string name;  // "Stage Name" (cut), e.g. "save at Job.scala:42"; empty when not logged
  std::int32_t num_tasks = 0;
  std::optional<events::EpochMillis> submission_ms;
  std::optional<events::EpochMillis> completion_ms;
  bool completed = false;  // a StageCompleted was seen
  std::optional<std::string> failure_reason;
  // "Parent IDs" of its StageInfo: the stages it reads from; nullopt when the log does not say.
  std::optional<std::vector<std::int32_t>> parent_ids;
  TaskStatistics tasks;

  // When the attempt started and ended as far as the log tells: submission, else its first task
  // launch; completion, else nullopt (still running, or its end was lost).
  std::optional<events::EpochMillis> StartMs() const;
};

struct SqlExecutionRecord {
  std::int64_t execution_id = 0;
  std::optional<std::int64_t> root_execution_id;
  std::optional<events::EpochMillis> start_ms;
  std::optional<events::EpochMillis> end_ms;
  std::optional<std::string> error_message;
  // Operation id of the Connect operation tag among SqlExecutionStart.jobTags (3.5+).
  std::optional<std::string> connect_operation_id;
};

struct ConnectOperationRecord {
  std::string operation_id;
  std::string job_tag;  // exactly as Spark wrote it (3.5.0/3.5.1 order included)
  std::string session_id;
  std::string user_id;
  std::optional<events::EpochMillis> started_ms;
  std::optional<events::EpochMillis> analyzed_ms;
  std::optional<events::EpochMillis> ready_ms;
  std::optional<events::EpochMillis> finished_ms;
  std::optional<events::EpochMillis> failed_ms;
  std::optional<events::EpochMillis> canceled_ms;
  std::optional<events::EpochMillis> closed_ms;
  std::optional<std::int64_t> produced_row_count;
  std::string error_message;
};

struct ApplicationRecord {
  std::string app_id;
  std::optional<std::string> attempt_id;
  std::string app_name;
  std::string spark_user;
  std::string spark_version;  // from LogStart; empty in 1.2-era logs
  std::optional<events::EpochMillis> start_ms;
  std::optional<events::EpochMillis> end_ms;
  // The latest time any event carried: the "now" of a log still being written.
  std::optional<events::EpochMillis> last_event_ms;
};

class ApplicationModel {
 public:
  // Feeds one event, in log order. Never fails: what cannot be placed is counted (ignored_events).
  void Apply(const events::SparkEvent& event);
  // The same, taking what it keeps (a SQL execution's plan) instead of copying it.
  void Apply(events::SparkEvent&& event);

  // The bounds of the SQL execution model (sql()); call before the first event.
  void SetSqlLimits(const SqlLimits& limits) { sql_ = SqlExecutionModel(limits); }
  // SQL executions with their final plan and operator metrics (sql_execution_model.h).
  const SqlExecutionModel& sql() const { return sql_; }

  const ApplicationRecord& application() const { return application_; }
  const std::vector<ExecutorRecord>& executors() const { return executors_; }
  const std::map<std::int32_t, JobRecord>& jobs() const { return jobs_; }
  const std::map<StageAttemptKey, StageAttemptRecord>& stages() const { return stages_; }
  const std::map<std::int64_t, SqlExecutionRecord>& sql_executions() const { return sql_executions_; }
  const std::map<std::string, ConnectOperationRecord, std::less<>>& operations() const { return operations_; }
  // The kept configuration properties of the EnvironmentUpdate events (kept_properties.h), by key;
  // a later update of a key wins.
  const std::map<std::string, std::string, std::less<>>& properties() const { return properties_; }
  // A property's value: `key` itself, else for Hadoop keys (fs.*, mapreduce.*) "spark.hadoop." + key,
  // which Spark copies into the Hadoop configuration. nullopt when the log does not say.
  std::optional<std::string_view> Property(std::string_view key) const;
  // Task time per executor id (executors() lists lifetimes; ids may repeat there, not here).
  const std::map<std::string, ExecutorUsage, std::less<>>& executor_usage() const { return executor_usage_; }
  // Events the model does not use (IgnoredEvent, TaskStart) or cannot place (an ExecutorRemoved
  // of an executor never added, a Connect operation event without an operation id).
  std::int64_t ignored_events() const { return ignored_events_; }

  const ConnectOperationRecord* FindOperation(std::string_view operation_id) const;
  // The Connect operation a job belongs to: its own tag first, else its SQL execution's (or that
  // execution's root's) jobTags. nullopt for jobs of no Connect operation.
  std::optional<std::string> OperationOfJob(const JobRecord& job) const;
  // Ids of the jobs of an operation, ascending.
  std::vector<std::int32_t> JobsOfOperation(std::string_view operation_id) const;
  // Ids of the jobs whose spark.sql.execution.id is `execution_id`, ascending.
  std::vector<std::int32_t> JobsOfSqlExecution(std::int64_t execution_id) const;
  // The Connect operation a SQL execution ran for: its own jobTags (3.5+), else its root
  // execution's, else the operation of its first job that has one. nullopt for none.
  std::optional<std::string> OperationOfSqlExecution(std::int64_t execution_id) const;
  // The job a stage attempt ran for: of the jobs listing the stage, the latest submitted at or
  // before the attempt (a retried or re-used stage runs for the job that needed it then); else
  // the lowest-numbered job listing it. nullopt when no job lists it.
  std::optional<std::int32_t> JobOfStageAttempt(const StageAttemptRecord& stage) const;
  // The stage attempts of a job, by (stage id, attempt).
  std::vector<const StageAttemptRecord*> StagesOfJob(std::int32_t job_id) const;

  struct ForgetStats {
    std::int64_t operations = 0;
    std::int64_t jobs = 0;
    std::int64_t stage_attempts = 0;
    std::int64_t sql_executions = 0;
  };
  // Drops what ended before `cutoff_ms`: Connect operations closed (else finished, failed or
  // cancelled) before it whose jobs have all ended, with those jobs; jobs of no operation that
  // completed before it; the stage attempts of dropped jobs; and SQL executions that belong to a
  // dropped operation or whose jobs were all dropped. Executors and the application stay.
  // Afterwards the application's phases cover only the stage attempts still held, and an event
  // of a dropped job arriving later starts a new, partial record (a JobEnd alone has no start,
  // so it builds no span).
  ForgetStats ForgetFinishedBefore(events::EpochMillis cutoff_ms);

 private:
  void On(const events::IgnoredEvent&) { ++ignored_events_; }
  void On(const events::LogStart& event);
  void On(const events::ApplicationStart& event);
  void On(const events::ApplicationEnd& event);
  void On(const events::ExecutorAdded& event);
  void On(const events::ExecutorRemoved& event);
  void On(const events::JobStart& event);
  void On(const events::JobEnd& event);
  void On(const events::StageSubmitted& event);
  void On(const events::StageCompleted& event);
  void On(const events::TaskStart&) { ++ignored_events_; }
  void On(const events::TaskEnd& event);
  // By value: an event applied as an rvalue gives its plan away (Apply(SparkEvent&&)).
  void On(events::SqlExecutionStart event);
  void On(const events::SqlExecutionEnd& event);
  void On(events::SqlAdaptiveExecutionUpdate event) { sql_.OnAdaptiveExecutionUpdate(std::move(event)); }
  void On(const events::SqlAdaptiveMetricUpdates& event) { sql_.OnAdaptiveMetricUpdates(event); }
  void On(const events::DriverAccumUpdates& event) { sql_.OnDriverAccumUpdates(event); }
  void On(const events::ConnectSessionEvent& event);
  void On(const events::ConnectOperationEvent& event);
  void On(const events::EnvironmentUpdate& event);

  void SeeTime(std::optional<events::EpochMillis> time_ms);
  void ForgetJob(std::int32_t job_id, ForgetStats& stats);
  StageAttemptRecord& StageRecord(std::int32_t stage_id, std::int32_t attempt_id);
  void MergeStageInfo(const events::StageInfo& info, bool completed);
  // The operation id of the first Connect operation tag in `tags`; records the operation (user,
  // session from the tag) when no Connect event named it yet.
  template <typename Tags>
  std::optional<std::string> OperationFromTags(const Tags& tags);

  ApplicationRecord application_;
  events::ConnectJobTagOrder tag_order_ = events::ConnectJobTagOrder::kDetect;
  std::vector<ExecutorRecord> executors_;  // in order of ExecutorAdded; ids may repeat
  std::map<std::int32_t, JobRecord> jobs_;
  std::map<StageAttemptKey, StageAttemptRecord> stages_;
  std::map<std::int64_t, SqlExecutionRecord> sql_executions_;
  std::map<std::string, ConnectOperationRecord, std::less<>> operations_;
  std::int64_t ignored_events_ = 0;
  std::map<std::string, std::string, std::less<>> properties_;
  std::map<std::string, ExecutorUsage, std::less<>> executor_usage_;
  SqlExecutionModel sql_;

  // Join indexes (see "Cost" above). Candidates only: JobsOfOperation re-checks each candidate
  // with OperationOfJob, so an index entry never overrides the join's precedence.
  std::map<std::int32_t, std::set<std::int32_t>> jobs_by_stage_;
  std::map<std::string, std::set<std::int32_t>, std::less<>> tagged_jobs_by_operation_;
  std::map<std::int64_t, std::set<std::int32_t>> jobs_by_execution_;  // by execution and root id
  std::map<std::string, std::set<std::int64_t>, std::less<>> executions_by_operation_;
  std::map<std::int64_t, std::set<std::int64_t>> executions_by_root_;
};

}  // namespace sparktrace::listener::correlate
