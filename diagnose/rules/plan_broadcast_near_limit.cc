// broadcast-near-limit: a broadcast join's table near (or over) the size limit: the driver
// collects it, builds a hash table and ships it to every executor, which gets slow and then fails
// (Spark refuses to broadcast more than 8 GiB, and the driver runs out of memory well before).
//
// Per BroadcastExchange of the scope's SQL executions: fires when its "data size" is at least
// near_threshold_share of the threshold in force (spark.sql.autoBroadcastJoinThreshold, default
// 10 MiB, or spark.sql.adaptive.autoBroadcastJoinThreshold when larger) or at least
// min_data_bytes, and its "time to collect" + "time to build" + "time to broadcast" reached
// min_broadcast_seconds; or whatever its time, when the data size is at least hard_limit_share of
// 8 GiB. The impact must pass the gate.
// Impact: the collect + build + broadcast time (driver-side, wall time: the join's stage waits for
// it).
#include <algorithm>

#include "diagnose/plan_scope.h"
#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

constexpr std::int64_t kSparkDefaultBroadcastThreshold = 10 * kMiB;
constexpr double kSparkMaxBroadcastBytes = 8.0 * 1024 * 1024 * 1024;  // BroadcastExchangeExec's limit

// The threshold Spark planned with: the larger of the static and the adaptive one; nullopt when
// broadcast joins are off (-1).
std::optional<std::int64_t> ThresholdInForce(const DiagnosisScope& scope) {
  const std::string configured = PropertyOr(scope, "spark.sql.autoBroadcastJoinThreshold", "10485760");
  std::optional<std::int64_t> threshold = ParseSparkByteString(configured);
  if (!threshold && configured != "-1") threshold = kSparkDefaultBroadcastThreshold;
  if (const auto adaptive = scope.model->Property("spark.sql.adaptive.autoBroadcastJoinThreshold")) {
    if (const auto bytes = ParseSparkByteString(*adaptive))
      threshold = std::max(threshold.value_or(0), *bytes);
  }
  return threshold;
}

}  // namespace

void BroadcastNearLimitRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const BroadcastNearLimitThresholds& t = scope.thresholds->broadcast_near_limit;
  if (!t.enabled) return;
  const std::optional<std::int64_t> threshold = ThresholdInForce(scope);
  for (const ScopedSqlExecution& execution : SqlExecutionsOf(scope)) {
    for (std::uint32_t node = 0; node < execution.size(); ++node) {
      if (!SparkOperatorName(execution.Node(node).name).starts_with("BroadcastExchange") ||
          execution.repeat[node])
        continue;
      const std::optional<std::int64_t> data = MetricTotal(execution, node, "data size");
      if (!data) continue;
      const double bytes = static_cast<double>(*data);
      double time_ms = 0;
      for (std::string_view name : {"time to collect", "time to build", "time to broadcast"})
        time_ms += static_cast<double>(MetricTotal(execution, node, name).value_or(0));
      const bool near_threshold =
          threshold && *threshold > 0 && bytes >= t.near_threshold_share * static_cast<double>(*threshold);
      const bool large = bytes >= static_cast<double>(t.min_data_bytes);
      const bool slow = time_ms >= t.min_broadcast_seconds * 1000;
      const bool near_hard_limit = bytes >= t.hard_limit_share * kSparkMaxBroadcastBytes;
      if (!((near_threshold || large) && slow) && !near_hard_limit) continue;
      const double impact = time_ms / 1000.0;
      if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;
      Finding finding = NewFinding(kBroadcastNearLimit, OperatorScope(scope, execution, node), impact,
                                   SeverityForImpact(scope, impact));
      finding.title =
          OperatorLabel(execution, node) + ": broadcast " + Bytes(bytes) + " in " + Seconds(impact) +
          (threshold ? " (threshold " + Bytes(static_cast<double>(*threshold)) + ")" : std::string());
      finding.evidence = {
          Figure("data_size_bytes", bytes, "bytes"),
          Crossed("broadcast_time_ms", time_ms, "ms", t.min_broadcast_seconds * 1000, Comparison::kAtLeast),
          Figure("hard_limit_share", bytes / kSparkMaxBroadcastBytes, "share"),
          Setting("spark.sql.autoBroadcastJoinThreshold",
                  PropertyOr(scope, "spark.sql.autoBroadcastJoinThreshold", "unset (10485760)")),
      };
      if (threshold && *threshold > 0) {
        finding.evidence.insert(finding.evidence.begin() + 1,
                                Crossed("threshold_share", bytes / static_cast<double>(*threshold), "share",
                                        t.near_threshold_share, Comparison::kAtLeast));
      }
      finding.fix = {
          "let Spark sort-merge join a table this size: lower spark.sql.autoBroadcastJoinThreshold (the "
          "default "
          "is 10m) and remove broadcast() hints on it",
          "broadcast less: select only the columns the join needs and filter the table before the join",
          "if it must be broadcast, give the driver room (spark.driver.memory, spark.driver.maxResultSize) "
          "and "
          "more time (spark.sql.broadcastTimeout, default 300 s)",
      };
      findings.push_back(std::move(finding));
    }
  }
}

}  // namespace sparktrace::diagnose::rules
