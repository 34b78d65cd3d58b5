// nested-loop-join: a CartesianProduct or BroadcastNestedLoopJoin over large inputs: every row of
// one side compared with every row of the other, which Spark plans when a join has no equality
// condition (a range or inequality join, an OR of conditions, a cross join).
//
// Per such operator (and its Photon and GPU versions) of the scope's SQL executions: fires when its smaller
// input has at least min_smaller_side_rows rows (RowsOutOf each child; a one-row side, a scalar subquery's,
// is fine) and left × right rows ≥ min_pairs, and the impact passes the gate. Impact: the operator's wall
// time, from its codegen cluster's "duration" (a BroadcastNestedLoopJoin runs in generated code), else the
// whole wall time of the stages that ran it (CartesianProduct has no codegen and no timing metric: the stage
// is the loop).
#include <algorithm>

#include "diagnose/plan_scope.h"
#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {

void NestedLoopJoinRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const NestedLoopJoinThresholds& t = scope.thresholds->nested_loop_join;
  if (!t.enabled) return;
  for (const ScopedSqlExecution& execution : SqlExecutionsOf(scope)) {
    for (std::uint32_t node = 0; node < execution.size(); ++node) {
      const listener::events::SqlPlanNode& join = execution.Node(node);
      const std::string_view kind = SparkOperatorName(join.name);
      const bool nested_loop =
          kind.starts_with("BroadcastNestedLoopJoin") || kind.starts_with("CartesianProduct");
      if (!nested_loop || execution.repeat[node] || join.children.size() != 2) continue;
      const std::optional<std::int64_t> left = RowsOutOf(execution, join.children[0]);
      const std::optional<std::int64_t> right = RowsOutOf(execution, join.children[1]);
      if (!left || !right) continue;
      const std::int64_t smaller = std::min(*left, *right);
      const double pairs = static_cast<double>(*left) * static_cast<double>(*right);
      if (smaller < t.min_smaller_side_rows || pairs < t.min_pairs) continue;
      const double cluster_ms = CodegenClusterMs(execution, node);
      const double impact = OperatorWallSeconds(scope, execution, node, cluster_ms);
      if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;
      Finding finding = NewFinding(kNestedLoopJoin, OperatorScope(scope, execution, node), impact,
                                   SeverityForImpact(scope, impact));
      finding.title = OperatorLabel(execution, node) + ": every row of " + Rows(static_cast<double>(*left)) +
                      " against every row of " + Rows(static_cast<double>(*right)) + " (" + Rows(pairs) +
                      " pairs)";
      finding.evidence = {
          Crossed("smaller_input_rows", static_cast<double>(smaller), "count",
                  static_cast<double>(t.min_smaller_side_rows), Comparison::kAtLeast),
          Crossed("pairs", pairs, "count", t.min_pairs, Comparison::kAtLeast),
          Figure("left_input_rows", static_cast<double>(*left), "count"),
          Figure("right_input_rows", static_cast<double>(*right), "count"),
          Setting("join", join.detail),
      };
      finding.fix = {
          "give the join an equality condition Spark can hash or sort on (a.key = b.key); a join on ranges "
          "can "
          "join on a bucket of the range first (floor(ts / 3600) on both sides) and keep the range as a "
          "filter",
          "split an OR of join conditions into one equi-join per condition and union the results",
          "if a cross join is intended, shrink both sides first (filter, aggregate) and broadcast the "
          "smaller "
          "one",
          "spark.sql.crossJoin.enabled=false (the default before 3.0) makes an accidental cartesian product "
          "an error",
      };
      findings.push_back(std::move(finding));
    }
  }
}

}  // namespace sparktrace::diagnose::rules
