#include "listener/correlate/sql_execution_model.h"

#include <algorithm>
#include <utility>

namespace sparktrace::listener::correlate {
namespace {

// A stage's task count sizes a bitmap; a hostile count must not allocate gigabytes. Task indexes
// past it are counted as out of range.
constexpr std::int32_t kMaxStageTasks = std::int32_t{1} << 24;

}  // namespace

std::string_view SqlPlanVersionName(SqlPlanVersion version) {
  switch (version) {
    case SqlPlanVersion::kNone:
      return "none";
    case SqlPlanVersion::kInitial:
      return "initial";
    case SqlPlanVersion::kAdaptive:
      return "adaptive";
  }
  return "none";
}

SqlExecutionDetail* SqlExecutionModel::GetOrCreate(std::int64_t execution_id) {
  if (auto found = executions_.find(execution_id); found != executions_.end()) return &found->second;
  if (executions_.size() >= limits_.max_executions) {
    // Like Spark's retainedExecutions: the oldest ended execution makes room; with none ended, the
    // new one is not kept.
    auto oldest_ended = std::find_if(executions_.begin(), executions_.end(),
                                     [](const auto& entry) { return entry.second.ended; });
    ++counters_.executions_dropped;
    if (oldest_ended == executions_.end()) return nullptr;
    executions_.erase(oldest_ended);
  }
  SqlExecutionDetail& execution = executions_[execution_id];
  execution.execution_id = execution_id;
  return &execution;
}

SqlExecutionDetail* SqlExecutionModel::Running(std::int64_t execution_id) {
  auto found = executions_.find(execution_id);
  return found == executions_.end() || found->second.ended ? nullptr : &found->second;
}

const SqlExecutionDetail* SqlExecutionModel::Find(std::int64_t execution_id) const {
  auto found = executions_.find(execution_id);
  return found == executions_.end() ? nullptr : &found->second;
}

void SqlExecutionModel::AddMetrics(SqlExecutionDetail& execution,
                                   const std::vector<events::SqlPlanMetric>& metrics) {
  if (execution.ended) return;  // frozen
  for (const events::SqlPlanMetric& metric : metrics)
    execution.metric_types[metric.accumulator_id] = SqlMetricTypeFromName(metric.type);
}

void SqlExecutionModel::SetPlan(SqlExecutionDetail& execution, events::SqlPlan plan, SqlPlanVersion version) {
  for (const events::SqlPlanNode& node : plan.nodes) AddMetrics(execution, node.metrics);
  execution.plan = std::move(plan);
  execution.plan_version = version;
}

void SqlExecutionModel::OnExecutionStart(events::SqlExecutionStart event) {
  // Only a start counts an execution that cannot be kept: other events name it again and again.
  SqlExecutionDetail* execution = GetOrCreate(event.execution_id);
  if (execution == nullptr) return;
  execution->started = true;
  execution->description = std::move(event.description);
  if (!event.plan) return;
  if (execution->plan_version == SqlPlanVersion::kAdaptive) {
    for (const events::SqlPlanNode& node : event.plan->nodes) AddMetrics(*execution, node.metrics);
  } else {
    SetPlan(*execution, std::move(*event.plan), SqlPlanVersion::kInitial);
  }
}

void SqlExecutionModel::OnAdaptiveExecutionUpdate(events::SqlAdaptiveExecutionUpdate event) {
  SqlExecutionDetail* execution = GetOrCreate(event.execution_id);
  if (execution == nullptr) return;
  SetPlan(*execution, std::move(event.plan), SqlPlanVersion::kAdaptive);
  ++execution->plan_updates;
}

void SqlExecutionModel::OnAdaptiveMetricUpdates(const events::SqlAdaptiveMetricUpdates& event) {
  SqlExecutionDetail* execution = GetOrCreate(event.execution_id);
  if (execution != nullptr) AddMetrics(*execution, event.metrics);
}

void SqlExecutionModel::OnDriverAccumUpdates(const events::DriverAccumUpdates& event) {
  SqlExecutionDetail* execution = Running(event.execution_id);
  if (execution == nullptr) return;  // Spark takes them for a live execution only
  for (const events::AccumulableUpdate& update : event.updates) {
    if (execution->driver_updates.size() >= limits_.max_task_values) {
      ++counters_.driver_updates_dropped;
      continue;
    }
    execution->driver_updates.push_back(update);
  }
}

void SqlExecutionModel::OnJobStart(const events::JobStart& event) {
  if (!event.properties.sql_execution_id) return;
  SqlExecutionDetail* execution = GetOrCreate(*event.properties.sql_execution_id);
  if (execution == nullptr) return;
  execution->stage_ids.insert(event.stage_ids.begin(), event.stage_ids.end());
  if (execution->ended || execution->metric_types.empty()) return;
  for (const events::JobStageTasks& stage : event.stage_tasks) {
    StageRecord& record = stages_[stage.stage_id];
    record = StageRecord{};
    record.execution_id = execution->execution_id;
    record.num_tasks = std::clamp(stage.num_tasks, 0, kMaxStageTasks);
    record.completed.assign(static_cast<std::size_t>(record.num_tasks), false);
  }
}

void SqlExecutionModel::OnStageSubmitted(std::int32_t stage_id, std::int32_t attempt_id) {
  auto found = stages_.find(stage_id);
  if (found == stages_.end() || found->second.attempt == attempt_id) return;
  // A new attempt starts the stage over (SQLAppStatusListener.onStageSubmitted).
  StageRecord& record = found->second;
  record.attempt = attempt_id;
  record.completed.assign(record.completed.size(), false);
  record.pending.clear();
  record.update_order.clear();
  record.values.clear();
}

SqlMetricValues& SqlExecutionModel::Finalize(StageRecord& stage, std::int64_t accumulator_id, std::int64_t value,
                                             SqlMetricType type) {
  auto [values, created] = stage.values.try_emplace(accumulator_id, type);
  if (created) {
    values->second.Reserve(std::min(static_cast<std::size_t>(stage.num_tasks), limits_.max_task_values));
  }
  values->second.Add(value, limits_.max_task_values);
  return values->second;
}

void SqlExecutionModel::FinalizeTask(StageRecord& stage, const std::unordered_map<std::int64_t, SqlMetricType>& types,
                                     const std::vector<events::AccumulableUpdate>& updates) {
  // An ended execution's types are gone: its metrics are frozen, a late task changes nothing.
  if (types.empty()) return;
  std::size_t position = 0;  // among the updates that are metrics of the execution
  for (const events::AccumulableUpdate& update : updates) {
    auto& order = stage.update_order;
    if (position < order.size() && order[position].first == update.accumulator_id) {
      order[position++].second->Add(update.update, limits_.max_task_values);
      continue;
    }
    auto type = types.find(update.accumulator_id);
    if (type == types.end()) continue;  // a user accumulator, or a metric of another execution
    SqlMetricValues* values = &Finalize(stage, update.accumulator_id, update.update, type->second);
    if (position < order.size()) {
      order[position] = {update.accumulator_id, values};
    } else {
      order.emplace_back(update.accumulator_id, values);
    }
    ++position;
  }
}

void SqlExecutionModel::OnTaskEnd(const events::TaskEnd& event) {
  const bool succeeded = !event.failed && !event.killed && event.finish_time_ms != 0;
  // An unsuccessful attempt without updates changes nothing; a successful one still ends its index.
  if (event.accumulable_updates.empty() && !succeeded) return;
  auto found = stages_.find(event.stage_id);
  if (found == stages_.end() || found->second.attempt != event.stage_attempt_id) return;
  StageRecord& stage = found->second;
  auto owner = executions_.find(stage.execution_id);
  if (owner == executions_.end()) return;
  const auto& types = owner->second.metric_types;
  if (event.index < 0 || event.index >= stage.num_tasks) {
    ++counters_.task_updates_out_of_range;
    return;
  }
  const auto index = static_cast<std::size_t>(event.index);
  if (stage.completed[index]) return;  // a later attempt of a finished index (speculation)
  auto pending = stage.pending.find(event.index);
  if (succeeded && pending == stage.pending.end()) {
    FinalizeTask(stage, types, event.accumulable_updates);
    stage.completed[index] = true;
    return;
  }
  // An attempt that failed (or follows one that did): its values stand until a later attempt of the
  // index overwrites them; whatever stands when the index succeeds is final.
  if (pending == stage.pending.end()) pending = stage.pending.try_emplace(event.index).first;
  std::vector<events::AccumulableUpdate>& values = pending->second;
  for (const events::AccumulableUpdate& update : event.accumulable_updates) {
    if (!types.contains(update.accumulator_id)) continue;
    auto same = std::find_if(values.begin(), values.end(), [&](const events::AccumulableUpdate& held) {
      return held.accumulator_id == update.accumulator_id;
    });
    if (same != values.end()) {
      same->update = update.update;
    } else {
      values.push_back(update);
    }
  }
  if (!succeeded) return;
  for (const events::AccumulableUpdate& update : values)
    Finalize(stage, update.accumulator_id, update.update, types.at(update.accumulator_id));
  stage.pending.erase(pending);
  stage.completed[index] = true;
}

std::map<std::int64_t, SqlMetricSummary> SqlExecutionModel::Aggregate(
    const SqlExecutionDetail& execution) const {
  std::map<std::int64_t, SqlMetricAggregator> aggregators;
  const auto aggregator = [&](std::int64_t accumulator_id) -> SqlMetricAggregator* {
    auto type = execution.metric_types.find(accumulator_id);
    if (type == execution.metric_types.end()) return nullptr;
    return &aggregators.try_emplace(accumulator_id, type->second).first->second;
  };
  for (std::int32_t stage_id : execution.stage_ids) {
    auto found = stages_.find(stage_id);
    if (found == stages_.end()) continue;
    const StageRecord& stage = found->second;
    std::map<std::int64_t, std::int64_t> reported;  // task indexes with a value, by accumulator id
    for (const auto& [accumulator_id, values] : stage.values) {
      SqlMetricAggregator* metric = aggregator(accumulator_id);
      if (metric == nullptr) continue;
      metric->AddStage(stage_id, values);
      reported[accumulator_id] += values.reported();
    }
    for (const auto& [index, values] : stage.pending) {
      for (const events::AccumulableUpdate& update : values) {
        SqlMetricAggregator* metric = aggregator(update.accumulator_id);
        if (metric == nullptr) continue;
        metric->AddValue(update.update);
        metric->AddStageId(stage_id);
        ++reported[update.accumulator_id];
      }
    }
    // Spark keeps one slot per task index, 0 until set, and counts them all.
    for (const auto& [accumulator_id, count] : reported)
      aggregators.at(accumulator_id).AddZeros(std::int64_t{stage.num_tasks} - count);
  }
  for (const events::AccumulableUpdate& update : execution.driver_updates) {
    if (SqlMetricAggregator* metric = aggregator(update.accumulator_id))
      metric->AddDriverValue(update.update);
  }
  std::map<std::int64_t, SqlMetricSummary> summaries;
  for (auto& [accumulator_id, metric] : aggregators) summaries.emplace(accumulator_id, metric.Finish());
  return summaries;
}

std::map<std::int64_t, SqlMetricSummary> SqlExecutionModel::MetricSummaries(std::int64_t execution_id) const {
  const SqlExecutionDetail* execution = Find(execution_id);
  if (execution == nullptr) return {};
  if (execution->final_metrics) return *execution->final_metrics;
  return Aggregate(*execution);
}

void SqlExecutionModel::DropStaleStages(std::int64_t ended_execution_id) {
  std::set<std::int32_t> active;
  for (const auto& [id, execution] : executions_) {
    if (id != ended_execution_id && !execution.ended)
      active.insert(execution.stage_ids.begin(), execution.stage_ids.end());
  }
  std::erase_if(stages_, [&](const auto& entry) { return !active.contains(entry.first); });
}

void SqlExecutionModel::OnExecutionEnd(const events::SqlExecutionEnd& event) {
  SqlExecutionDetail* execution = Running(event.execution_id);
  if (execution == nullptr) return;
  execution->final_metrics = Aggregate(*execution);
  execution->ended = true;
  DropStaleStages(event.execution_id);
  // What only the aggregation needed.
  execution->driver_updates = {};
  execution->metric_types = {};
}

void SqlExecutionModel::Forget(std::int64_t execution_id) {
  if (executions_.erase(execution_id) == 0) return;
  std::erase_if(stages_, [&](const auto& entry) { return entry.second.execution_id == execution_id; });
}

}  // namespace sparktrace::listener::correlate
