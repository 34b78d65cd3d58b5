#pragma once
// A SQL execution's plan as JSON: one node writer shared by `sparktrace diagnose --json`
// (cli/diagnose/sql_report.cc, docs/diagnose-sql.md) and the spark.sql.execution span's plan
// attribute (sql_execution_span.h, docs/tracing.md), so the two cannot describe a node differently.
//
// A node: {"id", "name", "detail", "codegen_stage", "stage_ids", [operator facts], "metrics",
// "children"}; what else it holds is SqlPlanJsonShape's choice. diagnose's shape is the default
// and its output must not change (tests/e2e/test_sql_executions.py compares it with an oracle).
//
// Threads: pure functions.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json_writer.h"
#include "listener/correlate/sql_metric_aggregation.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::correlate {

using SqlMetricSummaries = std::map<std::int64_t, SqlMetricSummary>;

struct SqlPlanJsonShape {
  // "time_ms", "rows", "spill_bytes", "peak_memory_bytes" per node (OperatorFacts, sql_plan.h).
  bool operator_facts = false;
  // The node's "metrics" list; without it the key is absent.
  bool metrics = true;
  // Per metric "accumulator_id", "unit", "values" and "approximate" besides name, type, total,
  // min, median and max.
  bool metric_bookkeeping = true;
  // Nodes written, in pre-order; a node past it is left out with its subtree, and its parent says
  // how many children it lost ("children_omitted").
  std::size_t max_nodes = std::numeric_limits<std::size_t>::max();
};

// Writes node `index` of `plan` and its subtree as one JSON value. `codegen` is
// CodegenStageIds(plan). Returns the nodes written.
std::size_t WriteSqlPlanNode(JsonWriter& json, const events::SqlPlan& plan, std::uint32_t index,
                             const std::vector<std::optional<std::int32_t>>& codegen,
                             const SqlMetricSummaries& summaries, const SqlPlanJsonShape& shape = {});

// The plan document of a spark.sql.execution span, within `max_bytes`:
//   {"nodes": N, "dropped_by_parser": D, "metrics_dropped": bool, "operator_time_ms": T,
//    "root": NODE, "nodes_written": M}
// with the span's node shape (operator facts, compact metrics). Past `max_bytes` the metric lists
// are dropped first, then the tree is cut (fewer nodes in pre-order) until it fits; `json` is empty
// when not even the root fits, or the plan has no node. T is the sum of the distinct operators'
// time (TopOperatorsByTime), what the trace view takes each node's share of.
struct BoundedSqlPlanJson {
  std::string json;
  std::size_t nodes_written = 0;
  bool metrics_dropped = false;
  bool cut = false;  // fewer nodes than the plan holds (or none at all)
  bool Reduced() const { return metrics_dropped || cut; }
};
BoundedSqlPlanJson SqlPlanJsonWithin(const events::SqlPlan& plan, const SqlMetricSummaries& summaries,
                                     std::size_t max_bytes);

}  // namespace sparktrace::listener::correlate
