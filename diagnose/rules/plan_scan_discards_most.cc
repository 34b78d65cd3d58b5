// scan-discards-most: a file scan whose rows are almost all dropped by the Filter right above it:
// the query read (and decoded) data it did not need, because the filter was not pushed into the
// scan (a function of a column, a cast, a UDF), the table is not partitioned or bucketed on the
// filtered column, or partition pruning did not apply.
//
// Per Filter of the scope's SQL executions whose child chain (ColumnarToRow, InputAdapter,
// WholeStageCodegen) reaches a file scan ("Scan <format> ...", "BatchScan"): fires when the filter
// keeps at most max_kept_share of the scan's "number of output rows", the scan produced at least
// min_scan_rows rows and read at least min_files_bytes ("size of files read", when the scan reports
// it), and the impact passes the gate.
// Impact: the scan and filter's task time (the scan's "scan time", else the filter's codegen
// cluster "duration", the larger) as wall time (plan_scope.h) × the share of rows dropped.
#include <algorithm>

#include "diagnose/plan_scope.h"
#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

bool IsScan(std::string_view name) {
  return name.starts_with("Scan ") || name.starts_with("BatchScan") || name.starts_with("FileScan");
}

// The scan right below a Filter, through the nodes that only pass rows on; nullopt when none.
std::optional<std::uint32_t> ScanBelow(const ScopedSqlExecution& execution, std::uint32_t filter) {
  std::uint32_t node = filter;
  for (int steps = 0; steps < 4; ++steps) {
    const listener::events::SqlPlanNode& current = execution.Node(node);
    if (current.children.size() != 1) return std::nullopt;
    node = current.children.front();
    const std::string_view name = SparkOperatorName(execution.Node(node).name);
    if (IsScan(name)) return node;
    if (name != "ColumnarToRow" && name != "InputAdapter" && !name.starts_with("WholeStageCodegen"))
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

void ScanDiscardsMostRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const ScanDiscardsMostThresholds& t = scope.thresholds->scan_discards_most;
  if (!t.enabled) return;
  for (const ScopedSqlExecution& execution : SqlExecutionsOf(scope)) {
    for (std::uint32_t node = 0; node < execution.size(); ++node) {
      if (SparkOperatorName(execution.Node(node).name) != "Filter" || execution.repeat[node]) continue;
      const std::optional<std::uint32_t> scan = ScanBelow(execution, node);
      if (!scan) continue;
      const std::optional<std::int64_t> kept = MetricTotal(execution, node, "number of output rows");
      const std::optional<std::int64_t> scanned = MetricTotal(execution, *scan, "number of output rows");
      if (!kept || !scanned || *scanned < t.min_scan_rows) continue;
      const std::optional<std::int64_t> files_bytes = MetricTotal(execution, *scan, "size of files read");
      if (files_bytes && *files_bytes < t.min_files_bytes) continue;
      const double kept_share = static_cast<double>(*kept) / static_cast<double>(*scanned);
      if (kept_share > t.max_kept_share) continue;
      const double scan_ms =
          static_cast<double>(MetricTotal(execution, *scan, "scan time").value_or(0)) / 1e6;
      const double task_ms = std::max(scan_ms, CodegenClusterMs(execution, node));
      const double impact = OperatorWallSeconds(scope, execution, *scan, task_ms) * (1.0 - kept_share);
      if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;
      Finding finding = NewFinding(kScanDiscardsMost, OperatorScope(scope, execution, *scan), impact,
                                   SeverityForImpact(scope, impact));
      finding.title = OperatorLabel(execution, *scan) + ": the Filter above it (node " +
                      std::to_string(node) + ") kept " + Rows(static_cast<double>(*kept)) + " of its " +
                      Rows(static_cast<double>(*scanned)) + " rows" +
                      (files_bytes ? " (" + Bytes(static_cast<double>(*files_bytes)) + " read)" : "");
      finding.evidence = {
          Crossed("kept_share", kept_share, "share", t.max_kept_share, Comparison::kAtMost),
          Crossed("scan_output_rows", static_cast<double>(*scanned), "count",
                  static_cast<double>(t.min_scan_rows), Comparison::kAtLeast),
          Figure("filter_output_rows", static_cast<double>(*kept), "count"),
      };
      if (files_bytes) {
        finding.evidence.push_back(Crossed("files_bytes_read", static_cast<double>(*files_bytes), "bytes",
                                           static_cast<double>(t.min_files_bytes), Comparison::kAtLeast));
      }
      if (const auto files = MetricTotal(execution, *scan, "number of files read"))
        finding.evidence.push_back(Figure("files_read", static_cast<double>(*files), "count"));
      finding.evidence.push_back(Setting("filter", execution.Node(node).detail));
      finding.evidence.push_back(Setting("scan", execution.Node(*scan).detail));
      finding.fix = {
          "let the scan skip the data: filter on the table's partition columns (partitionBy on write), or "
          "write it sorted or bucketed by the filtered column so Parquet row-group statistics skip the rest",
          "make the predicate pushable: compare the column itself (no function, cast or UDF around it; the "
          "scan's PushedFilters lists what was pushed)",
          "filter before the data is widened: a filter written after a join or a UDF is not pushed below it",
          "for a join that selects few keys, spark.sql.optimizer.dynamicPartitionPruning.enabled=true (the "
          "default) prunes partitions from the other side",
      };
      findings.push_back(std::move(finding));
    }
  }
}

}  // namespace sparktrace::diagnose::rules
