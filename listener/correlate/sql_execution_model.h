#pragma once
// SqlExecutionModel: an application's SQL executions with their final physical plan and their
// metrics aggregated as Spark's SQL UI does (SQLAppStatusListener; docs/diagnose-sql.md), fed the
// SQL, job, stage and task events of its log in log order by ApplicationModel.
//
// Following SQLAppStatusListener (Spark 3.1 to 4.x):
//   * an execution's metrics are those of every plan it had (SQLExecutionStart, each AQE plan
//     update) and of SparkListenerSQLAdaptiveSQLMetricUpdates; its plan is the last one;
//   * a JobStart carrying spark.sql.execution.id gives each of its stages a fresh per-stage record
//     (task count from "Stage Infos"), when the execution has metrics by then;
//   * a StageSubmitted of another attempt number starts the stage's record over: only the latest
//     attempt's tasks count, and a TaskEnd of another attempt is ignored;
//   * a TaskEnd's non-internal accumulables that are metrics of the record's execution set the value
//     of its task index (a later attempt of the index overwrites it) until a task of that index
//     succeeds; then the index is final;
//   * SparkListenerDriverAccumUpdates add one value per entry while the execution runs;
//   * at SQLExecutionEnd the metrics are aggregated (SqlMetricAggregator) and frozen, and the stage
//     records no other running execution lists are dropped. A running execution is aggregated
//     from what arrived so far.
// Where this differs from Spark, and why: docs/diagnose-sql.md.
//
// Bounds (SqlLimits): at most max_executions executions (the oldest ended one makes room, else a
// new one is not kept; counted), at most max_task_values kept values per stage and metric for the
// median (SqlMetricValues). Plans are bounded by the parser (EventParserOptions::max_plan_nodes).
//
// Threads: not synchronised; one thread feeds and reads it (ApplicationModel's).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "listener/correlate/sql_metric_aggregation.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::correlate {

struct SqlLimits {
  // Executions kept per application (Spark's UI keeps spark.sql.ui.retainedExecutions = 1000).
  std::size_t max_executions = 1000;
  // Per-task values kept per stage and metric for the median; past it the median is approximate.
  std::size_t max_task_values = 100000;
};

enum class SqlPlanVersion : std::uint8_t { kNone, kInitial, kAdaptive };
std::string_view SqlPlanVersionName(SqlPlanVersion version);  // "none", "initial", "adaptive"

struct SqlExecutionDetail {
  std::int64_t execution_id = 0;
  bool started = false;  // its SQLExecutionStart was seen
  bool ended = false;    // its SQLExecutionEnd was seen: metrics frozen
  std::string description;
  events::SqlPlan plan;  // the final plan: the last AQE update's, else the start's
  SqlPlanVersion plan_version = SqlPlanVersion::kNone;
  std::int32_t plan_updates = 0;  // AQE plan updates seen
  // Every metric the execution had (all plan versions, AQE metric updates), by accumulator id.
  std::unordered_map<std::int64_t, SqlMetricType> metric_types;
  std::set<std::int32_t> stage_ids;  // stages its jobs listed
  std::vector<events::AccumulableUpdate> driver_updates;
  // Set at SQLExecutionEnd: the aggregation of every metric that received a value.
  std::optional<std::map<std::int64_t, SqlMetricSummary>> final_metrics;
};

struct SqlModelCounters {
  std::int64_t executions_dropped = 0;         // not kept, or evicted, past max_executions
  std::int64_t task_updates_out_of_range = 0;  // a task index past its stage's task count
  std::int64_t driver_updates_dropped = 0;     // past max_task_values per execution
};

class SqlExecutionModel {
 public:
  explicit SqlExecutionModel(SqlLimits limits = {}) : limits_(limits) {}

  // By value: a caller that moves the event in gives its plan away (the plans are the big part).
  void OnExecutionStart(events::SqlExecutionStart event);
  void OnExecutionEnd(const events::SqlExecutionEnd& event);
  void OnAdaptiveExecutionUpdate(events::SqlAdaptiveExecutionUpdate event);
  void OnAdaptiveMetricUpdates(const events::SqlAdaptiveMetricUpdates& event);
  void OnDriverAccumUpdates(const events::DriverAccumUpdates& event);
  void OnJobStart(const events::JobStart& event);
  void OnStageSubmitted(std::int32_t stage_id, std::int32_t attempt_id);
  void OnTaskEnd(const events::TaskEnd& event);
  // Drops an execution (ApplicationModel::ForgetFinishedBefore).
  void Forget(std::int64_t execution_id);

  const SqlLimits& limits() const { return limits_; }
  const std::map<std::int64_t, SqlExecutionDetail>& executions() const { return executions_; }
  const SqlExecutionDetail* Find(std::int64_t execution_id) const;
  // The execution's metrics by accumulator id: frozen at its end, else aggregated from what arrived
  // so far. Metrics no task or driver update reached are absent.
  std::map<std::int64_t, SqlMetricSummary> MetricSummaries(std::int64_t execution_id) const;
  const SqlModelCounters& counters() const { return counters_; }

 private:
  // Spark's LiveStageMetrics: one stage's latest attempt.
  struct StageRecord {
    std::int64_t execution_id = 0;  // whose metrics it takes (the job that created it)
    std::int32_t attempt = 0;
    std::int32_t num_tasks = 0;
    std::vector<bool> completed;  // by task index
    // Values of task indexes not yet completed, by index (failed attempts, in practice).
    std::unordered_map<std::int32_t, std::vector<events::AccumulableUpdate>> pending;
    std::unordered_map<std::int64_t, SqlMetricValues> values;  // final values, by accumulator id
    // The metrics of the last successful task in its order, pointing into `values` (whose nodes
    // stay put): the tasks of a stage report the same accumulators in the same order, so each
    // update finds its values without the two hash lookups (metric type, stage values).
    std::vector<std::pair<std::int64_t, SqlMetricValues*>> update_order;
  };

  SqlExecutionDetail* GetOrCreate(std::int64_t execution_id);
  SqlExecutionDetail* Running(std::int64_t execution_id);
  void AddMetrics(SqlExecutionDetail& execution, const std::vector<events::SqlPlanMetric>& metrics);
  void SetPlan(SqlExecutionDetail& execution, events::SqlPlan plan, SqlPlanVersion version);
  // Adds a final value of the metric to the stage; returns the metric's values in it.
  SqlMetricValues& Finalize(StageRecord& stage, std::int64_t value_id, std::int64_t value, SqlMetricType type);
  // A successful task's updates, none held from an earlier attempt of its index.
  void FinalizeTask(StageRecord& stage, const std::unordered_map<std::int64_t, SqlMetricType>& types,
                    const std::vector<events::AccumulableUpdate>& updates);
  std::map<std::int64_t, SqlMetricSummary> Aggregate(const SqlExecutionDetail& execution) const;
  void DropStaleStages(std::int64_t ended_execution_id);

  SqlLimits limits_;
  std::map<std::int64_t, SqlExecutionDetail> executions_;
  std::unordered_map<std::int32_t, StageRecord> stages_;  // by stage id, as Spark keys them
  SqlModelCounters counters_;
};

}  // namespace sparktrace::listener::correlate
