#include "diagnose/plan_scope.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <set>

#include "listener/correlate/sql_plan.h"

namespace sparktrace::diagnose {

using listener::events::SqlPlanMetric;
using listener::events::SqlPlanNode;

std::vector<ScopedSqlExecution> SqlExecutionsOf(const DiagnosisScope& scope) {
  std::vector<ScopedSqlExecution> result;
  const listener::correlate::SqlExecutionModel& sql = scope.model->sql();
  for (const auto& [id, detail] : sql.executions()) {
    if (detail.plan.nodes.empty()) continue;
    if (scope.is_operation() && scope.model->OperationOfSqlExecution(id) !=
                                    std::optional<std::string>(scope.operation->operation_id)) {
      continue;
    }
    ScopedSqlExecution execution;
    execution.detail = &detail;
    execution.metrics = sql.MetricSummaries(id);
    execution.codegen_stage = listener::correlate::CodegenStageIds(detail.plan);
    execution.repeat.assign(detail.plan.nodes.size(), false);
    std::set<std::int64_t> seen;
    for (std::uint32_t node = 0; node < detail.plan.nodes.size(); ++node) {
      const SqlPlanNode& plan_node = detail.plan.nodes[node];
      if (const auto codegen = listener::correlate::CodegenStageIdFromName(plan_node.name))
        execution.codegen_node.emplace(*codegen, node);
      bool repeat = !plan_node.metrics.empty();
      for (const SqlPlanMetric& metric : plan_node.metrics)
        repeat = !seen.insert(metric.accumulator_id).second && repeat;
      execution.repeat[node] = repeat;
    }
    result.push_back(std::move(execution));
  }
  return result;
}

std::optional<std::int64_t> MetricTotal(const ScopedSqlExecution& execution, std::uint32_t node,
                                        std::string_view name) {
  if (node >= execution.size()) return std::nullopt;
  for (const SqlPlanMetric& metric : execution.Node(node).metrics) {
    if (metric.name != name) continue;
    const auto summary = execution.metrics.find(metric.accumulator_id);
    if (summary != execution.metrics.end()) return summary->second.total;
  }
  return std::nullopt;
}

std::optional<std::int64_t> RowsOutOf(const ScopedSqlExecution& execution, std::uint32_t node) {
  // Bounded by the plan's size: a chain of single children visits each node once.
  for (std::uint32_t steps = 0; node < execution.size() && steps < execution.size(); ++steps) {
    if (const auto rows = MetricTotal(execution, node, "number of output rows")) return rows;
    const SqlPlanNode& plan_node = execution.Node(node);
    if (plan_node.children.size() != 1) return std::nullopt;
    node = plan_node.children.front();
  }
  return std::nullopt;
}

double CodegenClusterMs(const ScopedSqlExecution& execution, std::uint32_t node) {
  if (node >= execution.codegen_stage.size() || !execution.codegen_stage[node]) return 0;
  const auto codegen = execution.codegen_node.find(*execution.codegen_stage[node]);
  if (codegen == execution.codegen_node.end()) return 0;
  return static_cast<double>(MetricTotal(execution, codegen->second, "duration").value_or(0));
}

namespace {

// The part of a stage's wall time its tasks ran in: from its first task's launch (not its
// submission: the wait for executors before it is resource wait, not the operator's) to its end.
std::int64_t StageRunningMs(const listener::correlate::StageAttemptRecord& stage) {
  const std::int64_t whole = StageDurationMs(stage).value_or(0);
  const auto& first_launch = stage.tasks.first_launch_ms;
  if (!first_launch || !stage.completion_ms || *stage.completion_ms < *first_launch) return whole;
  return std::min(whole, *stage.completion_ms - *first_launch);
}

}  // namespace

double OperatorWallSeconds(const DiagnosisScope& scope, const ScopedSqlExecution& execution,
                           std::uint32_t node, double task_ms) {
  std::set<std::int32_t> stage_ids;
  if (node < execution.size()) {
    for (const SqlPlanMetric& metric : execution.Node(node).metrics) {
      const auto summary = execution.metrics.find(metric.accumulator_id);
      if (summary != execution.metrics.end())
        stage_ids.insert(summary->second.stage_ids.begin(), summary->second.stage_ids.end());
    }
  }
  double wall_ms = 0;
  double run_ms = 0;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    if (!stage_ids.contains(stage->key.stage_id)) continue;
    wall_ms += static_cast<double>(StageRunningMs(*stage));
    run_ms += static_cast<double>(stage->tasks.executor_run_time_ms);
  }
  if (task_ms <= 0) return wall_ms / 1000.0;
  if (run_ms <= 0 || wall_ms <= 0) return 0;
  return std::min(wall_ms, task_ms * wall_ms / run_ms) / 1000.0;
}

std::string_view SparkOperatorName(std::string_view node_name) {
  for (std::string_view prefix : {std::string_view("Photon"), std::string_view("Gpu")}) {
    if (node_name.starts_with(prefix)) return node_name.substr(prefix.size());
  }
  return node_name;
}

FindingScope OperatorScope(const DiagnosisScope& scope, const ScopedSqlExecution& execution,
                           std::uint32_t node) {
  FindingScope result = scope.base;
  result.kind = ScopeKind::kSqlOperator;
  result.sql_execution_id = execution.detail->execution_id;
  result.plan_node_id = node;
  result.plan_node_name = execution.Node(node).name;
  return result;
}

std::string OperatorLabel(const ScopedSqlExecution& execution, std::uint32_t node) {
  return "SQL execution " + std::to_string(execution.detail->execution_id) + ", " +
         execution.Node(node).name + " (node " + std::to_string(node) + ")";
}

std::string Rows(double rows) {
  char text[32];
  if (rows >= 1e9) {
    std::snprintf(text, sizeof text, "%.1fG", rows / 1e9);
  } else if (rows >= 1e6) {
    std::snprintf(text, sizeof text, "%.1fM", rows / 1e6);
  } else if (rows >= 1e4) {
    std::snprintf(text, sizeof text, "%.1fK", rows / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f", rows);
  }
  return text;
}

std::optional<std::int64_t> ParseSparkByteString(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || number < 0) return std::nullopt;
  std::string suffix(end, text.data() + text.size());
  std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::string_view kUnits = "bkmgtp";
  if (suffix.size() == 2 && suffix[1] == 'b' && suffix[0] != 'b') suffix.pop_back();  // "mb" → "m"
  if (suffix.empty()) suffix = "b";
  const std::size_t power = suffix.size() == 1 ? kUnits.find(suffix[0]) : std::string_view::npos;
  if (power == std::string_view::npos) return std::nullopt;
  std::int64_t bytes = number;
  for (std::size_t i = 0; i < power; ++i) {
    if (bytes > (std::int64_t{1} << 52)) return std::nullopt;  // overflow
    bytes *= 1024;
  }
  return bytes;
}

}  // namespace sparktrace::diagnose
