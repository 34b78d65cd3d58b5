// exploding-join: a join whose output rows are many times both its inputs' rows (a join key that is
// far from unique on both sides, a missing join condition, a many-to-many relationship).
//
// Per join operator (SortMergeJoin, ShuffledHashJoin, BroadcastHashJoin, and their Photon and GPU
// versions) of the scope's SQL
// executions: fires when its "number of output rows" ≥ min_output_ratio × the larger input's rows
// (RowsOutOf each child) and ≥ min_output_rows, and the impact passes the gate.
// Impact: the wall time of the join's codegen cluster (its "duration"; else the stages that ran
// it, plan_scope.h) × the share of the rows it handled that the explosion added,
// 1 − larger input / output: the time a one-to-one join would not have spent.
#include <algorithm>

#include "diagnose/plan_scope.h"
#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

bool IsKeyedJoin(std::string_view name) {
  return name.starts_with("SortMergeJoin") || name.starts_with("ShuffledHashJoin") ||
         name.starts_with("BroadcastHashJoin");
}

}  // namespace

void ExplodingJoinRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const ExplodingJoinThresholds& t = scope.thresholds->exploding_join;
  if (!t.enabled) return;
  for (const ScopedSqlExecution& execution : SqlExecutionsOf(scope)) {
    for (std::uint32_t node = 0; node < execution.size(); ++node) {
      const listener::events::SqlPlanNode& join = execution.Node(node);
      if (!IsKeyedJoin(SparkOperatorName(join.name)) || execution.repeat[node] || join.children.size() != 2)
        continue;
      const std::optional<std::int64_t> output = MetricTotal(execution, node, "number of output rows");
      const std::optional<std::int64_t> left = RowsOutOf(execution, join.children[0]);
      const std::optional<std::int64_t> right = RowsOutOf(execution, join.children[1]);
      if (!output || !left || !right || *output < t.min_output_rows) continue;
      const double larger = static_cast<double>(std::max<std::int64_t>({*left, *right, 1}));
      const double ratio = static_cast<double>(*output) / larger;
      if (ratio < t.min_output_ratio) continue;
      const double cluster_ms = CodegenClusterMs(execution, node);
      const double impact = OperatorWallSeconds(scope, execution, node, cluster_ms) *
                            (1.0 - larger / static_cast<double>(*output));
      if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;
      Finding finding = NewFinding(kExplodingJoin, OperatorScope(scope, execution, node), impact,
                                   SeverityForImpact(scope, impact));
      finding.title = OperatorLabel(execution, node) + ": " + Rows(static_cast<double>(*output)) +
                      " rows out of " + Rows(static_cast<double>(*left)) + " and " +
                      Rows(static_cast<double>(*right)) + " in (" + Ratio(ratio) + " the larger input)";
      finding.evidence = {
          Crossed("output_to_input_ratio", ratio, "ratio", t.min_output_ratio, Comparison::kAtLeast),
          Crossed("output_rows", static_cast<double>(*output), "count",
                  static_cast<double>(t.min_output_rows), Comparison::kAtLeast),
          Figure("left_input_rows", static_cast<double>(*left), "count"),
          Figure("right_input_rows", static_cast<double>(*right), "count"),
          Figure("codegen_cluster_task_ms", cluster_ms, "ms"),
          Setting("join", join.detail),
      };
      finding.fix = {
          "check the join keys: a key that repeats on both sides multiplies rows (count rows per key on each "
          "side: df.groupBy(key).count().orderBy(desc(\"count\")))",
          "deduplicate or aggregate one side to one row per key before the join (dropDuplicates, groupBy)",
          "add the missing join condition (a partial key joins every row of a group to every other)",
          "if the many-to-many result is intended, filter or aggregate as early as possible after the join",
      };
      findings.push_back(std::move(finding));
    }
  }
}

}  // namespace sparktrace::diagnose::rules
