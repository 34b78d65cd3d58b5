#pragma once
// Reading a SQL execution's plan (events::SqlPlan, pre-order) for its operators: which
// WholeStageCodegen stage each belongs to, and which operators spent the most time.
//
// Codegen stages follow Spark's SparkPlanGraph: a "WholeStageCodegen (N)" node's subtree, down to
// (not into) the InputAdapter nodes that feed it, runs as stage N's generated code. Logs before
// Spark 3.0 name the node "WholeStageCodegen" without its id: its operators have no stage id.
//
// Operator time: Spark has no single per-operator duration. An operator's time here is the sum of
// its timing metrics' totals (timing in ms, nsTiming converted to ms): a codegen stage's
// "duration", a sort's "sort time", an exchange's "shuffle write time" and "fetch wait time", a
// scan's "scan time", ... Totals are summed over tasks (task time, not wall time).
//
// Threads: pure functions.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "listener/correlate/sql_metric_aggregation.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::correlate {

// N of a "WholeStageCodegen (N)" node name; nullopt for any other name.
std::optional<std::int32_t> CodegenStageIdFromName(std::string_view node_name);

// Per node of `plan` (same index): the codegen stage it belongs to, or nullopt. A WholeStageCodegen
// node and the InputAdapter nodes at its boundary belong to its own stage.
std::vector<std::optional<std::int32_t>> CodegenStageIds(const events::SqlPlan& plan);

// An operator's figures from its metrics' summaries (by accumulator id).
struct SqlOperatorFacts {
  std::uint32_t node = 0;                         // index in the plan
  double time_ms = 0;                             // sum of its timing metrics (see above); 0 without any
  std::optional<std::int64_t> output_rows;        // "number of output rows"
  std::optional<std::int64_t> spill_bytes;        // "spill size"
  std::optional<std::int64_t> peak_memory_bytes;  // "peak memory"
};

SqlOperatorFacts OperatorFacts(const events::SqlPlan& plan, std::uint32_t node,
                               const std::map<std::int64_t, SqlMetricSummary>& metrics);

// The `count` operators with the most time, most first (ties by plan order); operators without
// time are left out, and so are repeats of an operator already listed (a reused exchange appears
// again under each of its readers with the same accumulators).
std::vector<SqlOperatorFacts> TopOperatorsByTime(const events::SqlPlan& plan,
                                                 const std::map<std::int64_t, SqlMetricSummary>& metrics,
                                                 std::size_t count);

// The sum of the time of every operator TopOperatorsByTime would list (repeats counted once): what
// an operator's share of its execution's operator time is of.
double TotalOperatorTimeMs(const events::SqlPlan& plan, const std::map<std::int64_t, SqlMetricSummary>& metrics);

}  // namespace sparktrace::listener::correlate
