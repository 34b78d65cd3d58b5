// operator-spill: a sort, aggregate, join or window operator spilled its data to disk: it did not
// fit in the execution memory its task had. oom-and-spill says which stage spilled; this names the
// operator of the plan that did.
//
// Per operator of the scope's SQL executions with a "spill size" metric (Sort, HashAggregate,
// ObjectHashAggregate, SortAggregate, SortMergeJoin, ShuffledHashJoin, Window): fires when its total
// reached min_spill_bytes and the impact passes the gate.
// Impact: writing and re-reading the spill at spill_disk_mib_per_second per task (task time), as
// wall time through the stages that ran the operator (plan_scope.h), at most the operator's own
// time when it has one (a sort's "sort time", an aggregation's build time, else its codegen cluster).
#include <algorithm>

#include "diagnose/plan_scope.h"
#include "diagnose/rules/rules.h"
#include "listener/correlate/sql_plan.h"

namespace sparktrace::diagnose::rules {

void OperatorSpillRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const OperatorSpillThresholds& t = scope.thresholds->operator_spill;
  if (!t.enabled) return;
  for (const ScopedSqlExecution& execution : SqlExecutionsOf(scope)) {
    for (std::uint32_t node = 0; node < execution.size(); ++node) {
      if (execution.repeat[node]) continue;
      const std::optional<std::int64_t> spill = MetricTotal(execution, node, "spill size");
      if (!spill || *spill < t.min_spill_bytes) continue;
      const double spill_bytes = static_cast<double>(*spill);
      double io_task_ms = 2.0 * spill_bytes / (t.spill_disk_mib_per_second * kMiB) * 1000.0;
      const double own_ms =
          listener::correlate::OperatorFacts(execution.detail->plan, node, execution.metrics).time_ms;
      const double operator_ms = own_ms > 0 ? own_ms : CodegenClusterMs(execution, node);
      if (operator_ms > 0) io_task_ms = std::min(io_task_ms, operator_ms);
      const double impact = OperatorWallSeconds(scope, execution, node, io_task_ms);
      if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;
      Finding finding = NewFinding(kOperatorSpill, OperatorScope(scope, execution, node), impact,
                                   SeverityForImpact(scope, impact));
      finding.title = OperatorLabel(execution, node) + ": spilled " + Bytes(spill_bytes);
      finding.evidence = {
          Crossed("spill_size_bytes", spill_bytes, "bytes", static_cast<double>(t.min_spill_bytes),
                  Comparison::kAtLeast),
          Figure("operator_task_ms", operator_ms, "ms"),
      };
      if (const auto peak = MetricTotal(execution, node, "peak memory"))
        finding.evidence.push_back(Figure("peak_memory_bytes", static_cast<double>(*peak), "bytes"));
      finding.evidence.push_back(Setting("operator", execution.Node(node).detail));
      const std::string partitions = PropertyOr(scope, "spark.sql.shuffle.partitions", "200");
      finding.fix = {
          "smaller partitions hold less at once: raise spark.sql.shuffle.partitions (now " + partitions +
              ") or, with AQE, lower spark.sql.adaptive.advisoryPartitionSizeInBytes",
          "more execution memory per task: spark.executor.memory, spark.memory.fraction, or fewer "
          "spark.executor.cores per executor",
          "less to hold: select only the columns needed before the sort, aggregation or join",
          "if one key holds most rows, the spill is skew: salt the key or let AQE split skewed partitions "
          "(spark.sql.adaptive.skewJoin.enabled)",
      };
      findings.push_back(std::move(finding));
    }
  }
}

}  // namespace sparktrace::diagnose::rules
