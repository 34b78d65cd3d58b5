#include "diagnose/finding.h"

namespace sparktrace::diagnose {

std::string_view RecipeFor(std::string_view id) {
  if (id == kResourceWaitLong) return "docs/recipes/troubleshoot/resource-wait-long.md";
  if (id == kS3WriteSlow) return "docs/recipes/troubleshoot/s3-write-slow.md";
  if (id == kDataSkew) return "docs/recipes/troubleshoot/data-skew-diagnosis.md";
  if (id == kOomAndSpill) return "docs/recipes/troubleshoot/oom-and-spill.md";
  if (id == kShuffleBottleneck) return "docs/recipes/troubleshoot/shuffle-bottleneck.md";
  if (id == kLowParallelism) return "docs/recipes/troubleshoot/low-parallelism.md";
  if (id == kGcPressure) return "docs/recipes/troubleshoot/gc-pressure.md";
  if (id == kIdleExecutors) return "docs/recipes/troubleshoot/slow-spark-jobs.md#idle-executors";
  if (id == kTaskFailures) return "docs/recipes/troubleshoot/slow-spark-jobs.md#task-failures";
  if (id == kExplodingJoin) return "docs/recipes/troubleshoot/plan-joins.md#exploding-join";
  if (id == kNestedLoopJoin) return "docs/recipes/troubleshoot/plan-joins.md#nested-loop-join";
  if (id == kBroadcastNearLimit) return "docs/recipes/troubleshoot/plan-joins.md#broadcast-near-limit";
  if (id == kScanDiscardsMost) return "docs/recipes/troubleshoot/scan-discards-most.md";
  if (id == kOperatorSpill) return "docs/recipes/troubleshoot/oom-and-spill.md#operator-spill";
  return "docs/recipes/troubleshoot/slow-spark-jobs.md";
}

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

std::string_view ScopeKindName(ScopeKind kind) {
  switch (kind) {
    case ScopeKind::kApplication:
      return "application";
    case ScopeKind::kOperation:
      return "operation";
    case ScopeKind::kJob:
      return "job";
    case ScopeKind::kStage:
      return "stage";
    case ScopeKind::kSqlOperator:
      return "sql-operator";
  }
  return "application";
}

std::string_view ComparisonSymbol(Comparison comparison) {
  switch (comparison) {
    case Comparison::kNone:
      return "";
    case Comparison::kAtLeast:
      return ">=";
    case Comparison::kAtMost:
      return "<=";
  }
  return "";
}

std::string Finding::Key() const {
  std::string key = id + "@";
  switch (scope.kind) {
    case ScopeKind::kApplication:
      return key + "application";
    case ScopeKind::kOperation:
      return key + "operation:" + scope.operation_id.value_or("");
    case ScopeKind::kJob:
      return key + "job:" + std::to_string(scope.job_id.value_or(-1));
    case ScopeKind::kStage:
      return key + "stage:" + std::to_string(scope.stage_id.value_or(-1)) + "." +
             std::to_string(scope.stage_attempt.value_or(0));
    case ScopeKind::kSqlOperator:
      return key + (scope.operation_id ? "operation:" + *scope.operation_id + "/" : std::string()) +
             "sql:" + std::to_string(scope.sql_execution_id.value_or(-1)) +
             "/node:" + std::to_string(scope.plan_node_id.value_or(0));
  }
  return key;
}

}  // namespace sparktrace::diagnose
