#pragma once
// Internal to sparktrace_diagnose: what the plan rules (rules/plan_*.cc) read of a scope's SQL
// executions: each final physical plan with its metrics as Spark's SQL UI totals them
// (listener/correlate/sql_execution_model.h), the rows into and out of an operator, and the wall
// time an operator cost.
//
// Operator time (the impact of a plan finding). Spark has no per-operator duration; an operator's
// task time is its own timing metrics (sql_plan.h OperatorFacts), else its WholeStageCodegen
// cluster's "duration". Task time becomes wall time through the stages that reported the operator's
// metrics: task time × Σ stage wall / Σ stage executor run time, at most Σ stage wall, where a
// stage's wall time starts at its first task's launch (the wait for executors before it is the
// resource-wait finding's, not the operator's). Metrics only the driver sets (a broadcast's build
// and broadcast times) are wall time already.
//
// Pure functions over a model that must outlive the result; thread-safe for concurrent readers.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/diagnosis_scope.h"
#include "listener/correlate/sql_execution_model.h"

namespace sparktrace::diagnose {

struct ScopedSqlExecution {
  const listener::correlate::SqlExecutionDetail* detail = nullptr;
  std::map<std::int64_t, listener::correlate::SqlMetricSummary> metrics;  // by accumulator id
  std::vector<std::optional<std::int32_t>> codegen_stage;                 // per node (sql_plan.h)
  std::map<std::int32_t, std::uint32_t> codegen_node;  // codegen stage id → its WholeStageCodegen node
  // Per node: every metric it has was already listed under an earlier node (a reused exchange or
  // subquery shown again under each reader); rules judge only the first.
  std::vector<bool> repeat;

  const listener::events::SqlPlanNode& Node(std::uint32_t node) const { return detail->plan.nodes[node]; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(detail->plan.nodes.size()); }
};

// The scope's SQL executions with a plan: every one of the application, or those its operation ran
// for (ApplicationModel::OperationOfSqlExecution), ascending by id.
std::vector<ScopedSqlExecution> SqlExecutionsOf(const DiagnosisScope& scope);

// The total of a node's metric named `name` (Spark's metric name, "number of output rows"); nullopt
// when the node has no such metric or no update reached it.
std::optional<std::int64_t> MetricTotal(const ScopedSqlExecution& execution, std::uint32_t node,
                                        std::string_view name);

// The rows `node` produced: its "number of output rows", else (an InputAdapter, a Sort, an exchange,
// a query stage, ColumnarToRow) that of the first node below it down a chain of single children
// that has one; nullopt when none says.
std::optional<std::int64_t> RowsOutOf(const ScopedSqlExecution& execution, std::uint32_t node);

// The task time of a node's WholeStageCodegen cluster ("duration" of its codegen stage), ms; 0 when
// it runs outside generated code or the duration is unknown.
double CodegenClusterMs(const ScopedSqlExecution& execution, std::uint32_t node);

// Wall seconds that `task_ms` of operator task time cost (see above), over the stages of the scope
// that reported one of the node's metrics. With task_ms <= 0: those stages' whole wall time.
double OperatorWallSeconds(const DiagnosisScope& scope, const ScopedSqlExecution& execution,
                           std::uint32_t node, double task_ms);

// A node name without the engine prefix of Databricks Photon ("PhotonBroadcastHashJoin") or the
// RAPIDS accelerator ("GpuSortMergeJoin"): the Spark operator it stands for.
std::string_view SparkOperatorName(std::string_view node_name);

// A finding scope naming the execution and the operator.
FindingScope OperatorScope(const DiagnosisScope& scope, const ScopedSqlExecution& execution,
                           std::uint32_t node);
// "SQL execution 3, BroadcastHashJoin (node 7)".
std::string OperatorLabel(const ScopedSqlExecution& execution, std::uint32_t node);
// "412.3M" rows: a count shortened for titles.
std::string Rows(double rows);

// Spark's byte strings (JavaUtils.byteStringAsBytes: "10485760", "10m", "2g", "512k", "1tb"; no
// suffix is bytes, suffixes are powers of 1024); nullopt for anything else, and for negatives
// ("-1": broadcast joins switched off).
std::optional<std::int64_t> ParseSparkByteString(std::string_view text);

}  // namespace sparktrace::diagnose
