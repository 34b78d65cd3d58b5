#include "sim/eventlog/operation_lines.h"

#include <fmt/format.h>

#include <string_view>

#include "sim/eventlog/application_lines.h"
#include "sim/eventlog/json_line.h"
#include "sim/eventlog/operation_planner.h"
#include "sim/eventlog/sql_plan_drafter.h"

namespace sparktrace::sim::eventlog {
namespace {

constexpr std::string_view kConnectPackage = "org.apache.spark.sql.connect.service.";
constexpr std::string_view kSqlPackage = "org.apache.spark.sql.execution.ui.";

std::string ConnectEvent(std::string_view name) { return std::string(kConnectPackage) + std::string(name); }

std::string JoinedTags(const OperationPlan& plan) {
  std::string joined;
  for (const std::string& tag : plan.job_tags) joined += (joined.empty() ? "" : ",") + tag;
  return joined;
}

const StagePlan& Stage(const OperationPlan& plan, int index) {
  return plan.stages.at(static_cast<std::size_t>(index));
}
const TaskPlan& Task(const OperationPlan& plan, int index) {
  return plan.tasks.at(static_cast<std::size_t>(index));
}

// "Job aborted due to stage failure: Task 0 in stage 3.0 failed 4 times, most recent failure: ..."
// as the DAGScheduler words it; empty when the operation did not fail.
std::string AbortMessage(const OperationPlan& plan, const ExecutorPool& pool) {
  for (const StagePlan& stage : plan.stages) {
    if (!stage.aborting_task) continue;
    const TaskPlan& task = Task(plan, *stage.aborting_task);
    const ExecutorRecord& executor = pool.at(task.executor);
    return fmt::format(
        "Job aborted due to stage failure: Task {0} in stage {1}.0 failed {2} times, most recent failure: "
        "Lost task {0}.{3} in stage {1}.0 (TID {4}) ({5} executor {6}): {7}: {8}\nDriver stacktrace:",
        task.index, stage.global_stage_id, task.attempt + 1, task.attempt, task.global_task_id, executor.host,
        executor.id, task.exception_class, task.exception_message);
  }
  return "";
}

void WriteProperties(JsonLine& json, const OperationPlan& plan) {
  const std::string execution_id = std::to_string(plan.sql_execution_id);
  json.Key("Properties").BeginObject();
  json.Field("spark.rdd.scope.noOverride", "true");
  json.Field("spark.job.interruptOnCancel", "true");
  json.Field("spark.sql.execution.root.id", execution_id);
  json.Field("callSite.short", plan.description);
  json.Field("spark.job.tags", JoinedTags(plan));
  json.Field("spark.job.description", plan.description);
  json.Field("callSite.long", Abbreviate(plan.statement_text, 2048));
  json.Field("spark.sql.execution.id", execution_id);
  json.EndObject();
}

void WriteStageInfo(JsonLine& json, const OperationPlan& plan, int stage_index, bool submitted,
                    bool completed, const std::string& failure, const TimeMapping& time) {
  const StagePlan& stage = Stage(plan, stage_index);
  json.BeginObject();
  json.Field("Stage ID", stage.global_stage_id).Field("Stage Attempt ID", 0);
  json.Field("Stage Name", plan.description).Field("Number of Tasks", stage.num_tasks);
  json.Key("RDD Info").BeginArray().BeginObject();
  json.Field("RDD ID", stage.rdd_id).Field("Name", "MapPartitionsRDD");
  const char* scope = stage.result_stage ? (stage.writes_output ? R"({"id":"7","name":"WriteFiles"})"
                                                                : R"({"id":"5","name":"AQEShuffleRead"})")
                                         : R"({"id":"2","name":"Exchange"})";
  json.Field("Scope", scope).Field("Callsite", plan.description);
  json.Key("Parent IDs").BeginArray().Int(stage.rdd_id - 1).EndArray();
  json.Key("Storage Level").BeginObject().Field("Use Disk", false).Field("Use Memory", false);
  json.Field("Deserialized", false).Field("Replication", 1).EndObject();
  json.Field("Barrier", false).Field("DeterministicLevel", "DETERMINATE");
  json.Field("Number of Partitions", stage.num_tasks).Field("Number of Cached Partitions", 0);
  json.Field("Memory Size", 0).Field("Disk Size", 0).EndObject().EndArray();
  json.Key("Parent IDs").BeginArray();
  for (int parent : stage.parents) json.Int(Stage(plan, parent).global_stage_id);
  json.EndArray();
  json.Field("Details", Abbreviate(plan.statement_text, 2048));
  if (submitted) json.Field("Submission Time", time.Time(stage.submitted_ms));
  if (completed) json.Field("Completion Time", time.Time(stage.completed_ms));
  if (!failure.empty()) json.Field("Failure Reason", failure);
  json.Key("Accumulables").BeginArray().EndArray();
  json.Field("Resource Profile Id", 0)
      .Field("Shuffle Push Enabled", false)
      .Field("Shuffle Push Mergers Count", 0);
  json.EndObject();
}

// Task Info "Accumulables": the task's SQL metric updates, as Spark writes them (strings).
void WriteSqlAccumulables(JsonLine& json, const OperationPlan& plan, const TaskPlan& task,
                          const TimeMapping& time) {
  for (const SqlMetricUpdate& update : task.sql_updates) {
    const SqlMetricDraft& metric = plan.sql_plan.metrics.at(static_cast<std::size_t>(update.metric));
    const bool timing = metric.type == "timing" || metric.type == "nsTiming";
    const std::int64_t value = timing ? time.Duration(update.update) : update.update;
    const std::int64_t total = timing ? time.Duration(update.value) : update.value;
    json.BeginObject().Field("ID", SqlAccumulatorId(plan.sql_execution_id, update.metric));
    json.Field("Name", metric.name).Field("Update", std::to_string(value));
    json.Field("Value", std::to_string(total)).Field("Internal", true);
    json.Field("Count Failed Values", true).Field("Metadata", "sql").EndObject();
  }
}

void WriteTaskInfo(JsonLine& json, const OperationPlan& plan, const TaskPlan& task, const ExecutorPool& pool,
                   bool ended, const TimeMapping& time) {
  const ExecutorRecord& executor = pool.at(task.executor);
  json.Key("Task Info").BeginObject();
  json.Field("Task ID", task.global_task_id).Field("Index", task.index).Field("Attempt", task.attempt);
  json.Field("Partition ID", task.index).Field("Launch Time", time.Time(task.launch_ms));
  json.Field("Executor ID", executor.id).Field("Host", executor.host).Field("Locality", "PROCESS_LOCAL");
  json.Field("Speculative", false).Field("Getting Result Time", 0);
  json.Field("Finish Time", ended ? time.Time(task.finish_ms) : 0);
  json.Field("Failed", ended && (task.outcome == TaskOutcome::kExceptionFailure ||
                                 task.outcome == TaskOutcome::kExecutorLost));
  json.Field("Killed", ended && task.outcome == TaskOutcome::kKilled);
  json.Key("Accumulables").BeginArray();
  if (ended) WriteSqlAccumulables(json, plan, task, time);
  json.EndArray().EndObject();
}

void WriteEndReason(JsonLine& json, const OperationPlan& plan, const TaskPlan& task,
                    const ExecutorPool& pool) {
  json.Key("Task End Reason").BeginObject();
  switch (task.outcome) {
    case TaskOutcome::kSuccess:
      json.Field("Reason", "Success");
      break;
    case TaskOutcome::kExceptionFailure: {
      json.Field("Reason", "ExceptionFailure").Field("Class Name", task.exception_class);
      json.Field("Description", task.exception_message);
      const bool oom = task.exception_class == "java.lang.OutOfMemoryError";
      struct Frame {
        const char* declaring_class;
        const char* method;
        const char* file;
        int line;
      };
      const Frame oom_frames[] = {
          {"java.util.Arrays", "copyOf", "Arrays.java", 3537},
          {"org.apache.spark.sql.catalyst.expressions.UnsafeRow", "copy", "UnsafeRow.java", 492},
          {"org.apache.spark.sql.execution.aggregate.TungstenAggregationIterator", "processInputs",
           "TungstenAggregationIterator.scala", 198},
          {"org.apache.spark.scheduler.Task", "run", "Task.scala", 141}};
      const Frame io_frames[] = {{"sun.nio.ch.SocketDispatcher", "read0", "SocketDispatcher.java", -2},
                                 {"org.apache.spark.network.util.TransportFrameDecoder", "channelRead",
                                  "TransportFrameDecoder.java", 102},
                                 {"org.apache.spark.storage.ShuffleBlockFetcherIterator", "next",
                                  "ShuffleBlockFetcherIterator.scala", 632},
                                 {"org.apache.spark.scheduler.Task", "run", "Task.scala", 141}};
      std::string full = task.exception_class + ": " + task.exception_message;
      json.Key("Stack Trace").BeginArray();
      for (const Frame& frame : oom ? oom_frames : io_frames) {
        json.BeginObject().Field("Declaring Class", frame.declaring_class).Field("Method Name", frame.method);
        json.Field("File Name", frame.file).Field("Line Number", frame.line).EndObject();
        full += std::string("\n\tat ") + frame.declaring_class + "." + frame.method + "(" + frame.file +
                (frame.line > 0 ? ":" + std::to_string(frame.line) : std::string()) + ")";
      }
      json.EndArray().Field("Full Stack Trace", full + "\n");
      json.Key("Accumulator Updates").BeginArray().EndArray();
      break;
    }
    case TaskOutcome::kExecutorLost:
      json.Field("Reason", "ExecutorLostFailure").Field("Executor ID", pool.at(task.executor).id);
      json.Field("Exit Caused By App", true).Field("Loss Reason", task.loss_reason);
      break;
    case TaskOutcome::kKilled:
      json.Field("Reason", "TaskKilled").Field("Kill Reason", "Stage cancelled: " + AbortMessage(plan, pool));
      json.Key("Accumulator Updates").BeginArray().EndArray();
      break;
  }
  json.EndObject();
}

void WriteExecutorMetrics(JsonLine& json, const TaskMetricsPlan& metrics, const TimeMapping& time) {
  const std::int64_t gc_ms = time.Duration(metrics.gc_ms);
  // Peak gauges of the executor while the task ran (Spark 3.0+); heap follows execution memory.
  const std::int64_t heap = 700'000'000 + metrics.peak_execution_memory;
  json.Key("Task Executor Metrics").BeginObject();
  json.Field("JVMHeapMemory", heap).Field("JVMOffHeapMemory", 182'000'000);
  json.Field("OnHeapExecutionMemory", metrics.peak_execution_memory).Field("OffHeapExecutionMemory", 0);
  json.Field("OnHeapStorageMemory", 1'048'576).Field("OffHeapStorageMemory", 0);
  json.Field("OnHeapUnifiedMemory", metrics.peak_execution_memory + 1'048'576)
      .Field("OffHeapUnifiedMemory", 0);
  json.Field("DirectPoolMemory", 16'777'216).Field("MappedPoolMemory", 0);
  json.Field("ProcessTreeJVMVMemory", 0).Field("ProcessTreeJVMRSSMemory", 0);
  json.Field("ProcessTreePythonVMemory", 0).Field("ProcessTreePythonRSSMemory", 0);
  json.Field("ProcessTreeOtherVMemory", 0).Field("ProcessTreeOtherRSSMemory", 0);
  json.Field("MinorGCCount", 1 + metrics.gc_ms / 40).Field("MinorGCTime", gc_ms * 3 / 4);
  json.Field("MajorGCCount", metrics.gc_ms / 400).Field("MajorGCTime", gc_ms - gc_ms * 3 / 4);
  json.Field("TotalGCTime", gc_ms).EndObject();
}

void WriteTaskMetrics(JsonLine& json, const TaskMetricsPlan& m, bool spark4, const TimeMapping& time) {
  json.Key("Task Metrics").BeginObject();
  json.Field("Executor Deserialize Time", time.Duration(m.deserialize_ms));
  json.Field("Executor Deserialize CPU Time", time.Duration(m.deserialize_cpu_ns));
  json.Field("Executor Run Time", time.Duration(m.run_ms))
      .Field("Executor CPU Time", time.Duration(m.cpu_ns));
  json.Field("Peak Execution Memory", m.peak_execution_memory);
  if (spark4) {
    json.Field("Peak On Heap Execution Memory", m.peak_execution_memory);
    json.Field("Peak Off Heap Execution Memory", 0);
  }
  json.Field("Result Size", m.result_size).Field("JVM GC Time", time.Duration(m.gc_ms));
  json.Field("Result Serialization Time", time.Duration(m.result_serialization_ms));
  json.Field("Memory Bytes Spilled", m.memory_spilled).Field("Disk Bytes Spilled", m.disk_spilled);
  json.Key("Shuffle Read Metrics").BeginObject();
  json.Field("Remote Blocks Fetched", m.remote_blocks).Field("Local Blocks Fetched", m.local_blocks);
  json.Field("Fetch Wait Time", time.Duration(m.fetch_wait_ms))
      .Field("Remote Bytes Read", m.remote_bytes_read);
  json.Field("Remote Bytes Read To Disk", 0).Field("Local Bytes Read", m.local_bytes_read);
  json.Field("Total Records Read", m.shuffle_records_read);
  json.Field("Remote Requests Duration", time.Duration(m.remote_requests_ms));
  json.Key("Push Based Shuffle").BeginObject();
  for (const char* name :
       {"Corrupt Merged Block Chunks", "Merged Fetch Fallback Count", "Merged Remote Blocks Fetched",
        "Merged Local Blocks Fetched", "Merged Remote Chunks Fetched", "Merged Local Chunks Fetched",
        "Merged Remote Bytes Read", "Merged Local Bytes Read", "Merged Remote Requests Duration"}) {
    json.Field(name, 0);
  }
  json.EndObject().EndObject();
  json.Key("Shuffle Write Metrics").BeginObject();
  json.Field("Shuffle Bytes Written", m.shuffle_bytes_written)
      .Field("Shuffle Write Time", time.Duration(m.shuffle_write_ns));
  json.Field("Shuffle Records Written", m.shuffle_records_written).EndObject();
  json.Key("Input Metrics")
      .BeginObject()
      .Field("Bytes Read", m.input_bytes)
      .Field("Records Read", m.input_records);
  json.EndObject();
  json.Key("Output Metrics").BeginObject().Field("Bytes Written", m.output_bytes);
  json.Field("Records Written", m.output_records).EndObject();
  json.Key("Updated Blocks").BeginArray().EndArray();
  json.EndObject();
}

// "sparkPlanInfo": the draft's tree, each node with its metrics and their accumulator ids.
void WritePlanNode(JsonLine& json, const OperationPlan& plan, int index, int depth) {
  const SqlPlanDraft& draft = plan.sql_plan;
  const SqlNodeDraft& node = draft.nodes.at(static_cast<std::size_t>(index));
  json.BeginObject().Field("nodeName", node.name).Field("simpleString", node.simple);
  json.Key("children").BeginArray();
  for (int child : node.children) WritePlanNode(json, plan, child, depth + 1);
  json.EndArray().Key("metadata").BeginObject().EndObject().Key("metrics").BeginArray();
  for (int metric : node.metrics) {
    const SqlMetricDraft& draft_metric = draft.metrics.at(static_cast<std::size_t>(metric));
    json.BeginObject().Field("name", draft_metric.name);
    json.Field("accumulatorId", SqlAccumulatorId(plan.sql_execution_id, metric));
    json.Field("metricType", draft_metric.type).EndObject();
  }
  json.EndArray().EndObject();
}

void WritePlanInfo(JsonLine& json, const OperationPlan& plan) {
  json.Key("sparkPlanInfo");
  if (plan.sql_plan.nodes.empty()) {
    json.BeginObject().Field("nodeName", "AdaptiveSparkPlan").Field("simpleString", "AdaptiveSparkPlan");
    json.Key("children").BeginArray().EndArray().Key("metadata").BeginObject().EndObject();
    json.Key("metrics").BeginArray().EndArray().EndObject();
    return;
  }
  WritePlanNode(json, plan, 0, 0);
}

// The plan as Spark's explain tree (physicalPlanDescription's first part).
void AppendExplainTree(const SqlPlanDraft& draft, int index, const std::string& prefix, bool last, bool root,
                       std::string& text) {
  const SqlNodeDraft& node = draft.nodes.at(static_cast<std::size_t>(index));
  text += root ? node.name : prefix + (last ? "+- " : ":- ") + node.name;
  text += '\n';
  const std::string child_prefix = root ? "" : prefix + (last ? "   " : ":  ");
  for (std::size_t i = 0; i < node.children.size(); ++i)
    AppendExplainTree(draft, node.children[i], child_prefix, i + 1 == node.children.size(), false, text);
}

std::string PhysicalPlan(const OperationPlan& plan) {
  std::string text = "== Physical Plan ==\n";
  if (!plan.sql_plan.nodes.empty()) AppendExplainTree(plan.sql_plan, 0, "", true, true, text);
  return text;
}

std::string OperationLine(const OperationPlan& plan, std::string_view name, EpochMillis time_ms) {
  JsonLine json;
  json.BeginObject().Field("Event", ConnectEvent(name)).Field("jobTag", plan.job_tag);
  json.Field("operationId", plan.spec.operation_id).Field("eventTime", time_ms);
  json.Key("extraTags").BeginObject().EndObject();
  return json.EndObject().Take();
}

}  // namespace

std::vector<std::string> OperationEventLines(const OperationPlan& plan, const PlannedEvent& event,
                                             const ExecutorPool& pool, const ApplicationIdentity& app,
                                             const TimeMapping& time) {
  const EpochMillis event_ms = time.Time(event.time_ms);
  const bool spark4 = IsSpark4OrLater(app.spark_version);
  JsonLine json;
  switch (event.kind) {
    case PlannedEventKind::kSessionStarted:
      json.BeginObject().Field("Event", ConnectEvent("SparkListenerConnectSessionStarted"));
      json.Field("sessionId", plan.spec.session_id).Field("userId", plan.spec.user_id);
      json.Field("eventTime", event_ms).Key("extraTags").BeginObject().EndObject();
      break;
    case PlannedEventKind::kOperationStarted:
      json.BeginObject().Field("Event", ConnectEvent("SparkListenerConnectOperationStarted"));
      json.Field("jobTag", plan.job_tag).Field("operationId", plan.spec.operation_id);
      json.Field("eventTime", event_ms).Field("sessionId", plan.spec.session_id);
      json.Field("userId", plan.spec.user_id).Field("userName", plan.spec.user_id);
      json.Field("statementText", Abbreviate(plan.statement_text, 65535));
      json.Key("sparkSessionTags").BeginArray();
      for (const std::string& tag : plan.spec.user_tags) json.String(tag);
      json.EndArray().Key("extraTags").BeginObject().EndObject();
      break;
    case PlannedEventKind::kOperationAnalyzed:
      return {OperationLine(plan, "SparkListenerConnectOperationAnalyzed", event_ms)};
    case PlannedEventKind::kOperationReady:
      return {OperationLine(plan, "SparkListenerConnectOperationReadyForExecution", event_ms)};
    case PlannedEventKind::kOperationFinished: {
      json.BeginObject().Field("Event", ConnectEvent("SparkListenerConnectOperationFinished"));
      json.Field("jobTag", plan.job_tag).Field("operationId", plan.spec.operation_id);
      json.Field("eventTime", event_ms).Key("producedRowCount");
      if (plan.spec.write) {
        json.Null();
      } else {
        json.Int(plan.produced_rows);
      }
      json.Key("extraTags").BeginObject().EndObject();
      break;
    }
    case PlannedEventKind::kOperationFailed:
      json.BeginObject().Field("Event", ConnectEvent("SparkListenerConnectOperationFailed"));
      json.Field("jobTag", plan.job_tag).Field("operationId", plan.spec.operation_id);
      json.Field("eventTime", event_ms).Field("errorMessage", AbortMessage(plan, pool));
      json.Key("extraTags").BeginObject().EndObject();
      break;
    case PlannedEventKind::kOperationClosed:
      return {OperationLine(plan, "SparkListenerConnectOperationClosed", event_ms)};
    case PlannedEventKind::kSqlExecutionStart:
      json.BeginObject().Field("Event", std::string(kSqlPackage) + "SparkListenerSQLExecutionStart");
      json.Field("executionId", plan.sql_execution_id).Field("rootExecutionId", plan.sql_execution_id);
      json.Field("description", plan.description).Field("details", Abbreviate(plan.statement_text, 2048));
      json.Field("physicalPlanDescription", PhysicalPlan(plan));
      WritePlanInfo(json, plan);
      json.Field("time", event_ms).Key("modifiedConfigs").BeginObject().EndObject();
      json.Key("jobTags").BeginArray();
      for (const std::string& tag : plan.job_tags) json.String(tag);
      json.EndArray();
      if (spark4) json.Key("jobGroupId").Null();
      break;
    case PlannedEventKind::kSqlDriverUpdates:
      if (plan.sql_plan.driver_updates.empty()) return {};
      json.BeginObject().Field("Event", std::string(kSqlPackage) + "SparkListenerDriverAccumUpdates");
      json.Field("executionId", plan.sql_execution_id).Key("accumUpdates").BeginArray();
      for (const auto& [metric, value] : plan.sql_plan.driver_updates) {
        if (metric < 0) continue;
        json.BeginArray().Int(SqlAccumulatorId(plan.sql_execution_id, metric)).Int(value).EndArray();
      }
      json.EndArray();
      break;
    case PlannedEventKind::kSqlExecutionEnd: {
      json.BeginObject().Field("Event", std::string(kSqlPackage) + "SparkListenerSQLExecutionEnd");
      json.Field("executionId", plan.sql_execution_id).Field("time", event_ms).Key("errorMessage");
      const std::string abort = AbortMessage(plan, pool);
      if (abort.empty()) {
        json.Null();
      } else {
        json.String("org.apache.spark.SparkException: " + abort);
      }
      break;
    }
    case PlannedEventKind::kJobStart: {
      const JobPlan& job = plan.jobs.at(static_cast<std::size_t>(event.ref));
      json.BeginObject().Field("Event", "SparkListenerJobStart").Field("Job ID", job.global_job_id);
      json.Field("Submission Time", time.Time(job.submitted_ms)).Key("Stage Infos").BeginArray();
      for (int stage : job.stages) {
        // A stage an earlier job ran is listed in "Stage IDs" only. Spark gives such a skipped
        // stage a new id in the later job (its StageInfo never submitted); the simulator keeps
        // the earlier id, and a StageInfo under that id would make Spark's SQL listener (and
        // ours) start the finished stage's SQL metrics over.
        if (Stage(plan, stage).submitted_ms < job.submitted_ms) continue;
        WriteStageInfo(json, plan, stage, false, false, "", time);
      }
      json.EndArray().Key("Stage IDs").BeginArray();
      for (int stage : job.stages) json.Int(Stage(plan, stage).global_stage_id);
      json.EndArray();
      WriteProperties(json, plan);
      break;
    }
    case PlannedEventKind::kJobEnd: {
      const JobPlan& job = plan.jobs.at(static_cast<std::size_t>(event.ref));
      json.BeginObject().Field("Event", "SparkListenerJobEnd").Field("Job ID", job.global_job_id);
      json.Field("Completion Time", time.Time(job.completed_ms)).Key("Job Result").BeginObject();
      if (job.failed) {
        json.Field("Result", "JobFailed").Key("Exception").BeginObject();
        json.Field("Message", AbortMessage(plan, pool))
            .Key("Stack Trace")
            .BeginArray()
            .EndArray()
            .EndObject();
      } else {
        json.Field("Result", "JobSucceeded");
      }
      json.EndObject();
      break;
    }
    case PlannedEventKind::kStageSubmitted:
      json.BeginObject().Field("Event", "SparkListenerStageSubmitted").Key("Stage Info");
      WriteStageInfo(json, plan, event.ref, true, false, "", time);
      WriteProperties(json, plan);
      break;
    case PlannedEventKind::kStageCompleted: {
      const StagePlan& stage = Stage(plan, event.ref);
      json.BeginObject().Field("Event", "SparkListenerStageCompleted").Key("Stage Info");
      WriteStageInfo(json, plan, event.ref, true, true, stage.aborting_task ? AbortMessage(plan, pool) : "",
                     time);
      break;
    }
    case PlannedEventKind::kTaskStart: {
      const TaskPlan& task = Task(plan, event.ref);
      json.BeginObject().Field("Event", "SparkListenerTaskStart");
      json.Field("Stage ID", Stage(plan, task.stage).global_stage_id).Field("Stage Attempt ID", 0);
      WriteTaskInfo(json, plan, task, pool, false, time);
      break;
    }
    case PlannedEventKind::kTaskEnd: {
      const TaskPlan& task = Task(plan, event.ref);
      const StagePlan& stage = Stage(plan, task.stage);
      json.BeginObject().Field("Event", "SparkListenerTaskEnd");
      json.Field("Stage ID", stage.global_stage_id).Field("Stage Attempt ID", 0);
      json.Field("Task Type", stage.result_stage ? "ResultTask" : "ShuffleMapTask");
      WriteEndReason(json, plan, task, pool);
      WriteTaskInfo(json, plan, task, pool, true, time);
      WriteExecutorMetrics(json, task.metrics, time);
      if (task.has_metrics) WriteTaskMetrics(json, task.metrics, spark4, time);
      break;
    }
    case PlannedEventKind::kExecutorAdded:
      return ExecutorAddedLines(pool.at(event.ref), time);
    case PlannedEventKind::kExecutorRemoved:
      return ExecutorRemovedLines(pool.at(event.ref), time);
  }
  return {json.EndObject().Take()};
}

bool FlushesAfter(PlannedEventKind kind) {
  // Spark's EventLoggingListener does not flush after stage submissions and task events.
  return kind != PlannedEventKind::kStageSubmitted && kind != PlannedEventKind::kTaskStart &&
         kind != PlannedEventKind::kTaskEnd;
}

}  // namespace sparktrace::sim::eventlog
