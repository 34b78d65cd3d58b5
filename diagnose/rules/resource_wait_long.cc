// resource-wait-long: the application (or operation) waited for executors. The phase model's
// resource_wait (listener/correlate/phases.h) is exactly that: application start → first executor,
// plus periods when stages were pending while no executor was alive.
//
// Fires when that time is at least min_wait_seconds AND min_wait_share of the wall time.
// Impact: the wait itself. Nothing could run on executors then, so all of it was added wall time.
#include <algorithm>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {

using listener::correlate::Phase;

void ResourceWaitLongRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const ResourceWaitThresholds& t = scope.thresholds->resource_wait_long;
  if (!t.enabled || !scope.phases) return;
  const std::int64_t wait_ms = scope.phases->TotalMs(Phase::kResourceWait);
  const std::int64_t wall_ms = scope.WallMs();
  if (wall_ms <= 0) return;
  const double wait_seconds = static_cast<double>(wait_ms) / 1000.0;
  const double share = static_cast<double>(wait_ms) / static_cast<double>(wall_ms);
  if (wait_seconds < t.min_wait_seconds || share < t.min_wait_share) return;

  // The first interval, when it is resource_wait from the window's start, is the start-up wait;
  // the rest are periods without any executor while work was pending.
  std::int64_t startup_ms = 0;
  const auto& intervals = scope.phases->intervals;
  if (!intervals.empty() && intervals.front().phase == Phase::kResourceWait &&
      intervals.front().start_ms == scope.phases->window.start_ms) {
    startup_ms = intervals.front().end_ms - intervals.front().start_ms;
  }
  const std::int64_t gaps_ms = wait_ms - startup_ms;
  // Executors that say when they were requested (Spark 3.4+): the slowest request → added.
  std::int64_t slowest_request_ms = -1;
  for (const listener::correlate::ExecutorRecord& executor : scope.model->executors()) {
    if (executor.request_ms && executor.added_ms >= *executor.request_ms) {
      slowest_request_ms = std::max(slowest_request_ms, executor.added_ms - *executor.request_ms);
    }
  }

  Finding finding =
      NewFinding(kResourceWaitLong, scope.base, wait_seconds, SeverityForImpact(scope, wait_seconds));
  finding.title =
      "waited " + Seconds(wait_seconds) + " (" + Percent(share) + " of the wall time) for executors" +
      (startup_ms > 0 ? ": " + Seconds(static_cast<double>(startup_ms) / 1000.0) + " before the first one"
                      : "") +
      (gaps_ms > 0 ? (startup_ms > 0 ? ", " : ": ") + Seconds(static_cast<double>(gaps_ms) / 1000.0) +
                         " with work pending and none alive"
                   : "");
  finding.evidence = {
      Crossed("resource_wait_ms", static_cast<double>(wait_ms), "ms", t.min_wait_seconds * 1000,
              Comparison::kAtLeast),
      Crossed("resource_wait_share", share, "share", t.min_wait_share, Comparison::kAtLeast),
      Figure("startup_wait_ms", static_cast<double>(startup_ms), "ms"),
      Figure("no_executor_wait_ms", static_cast<double>(gaps_ms), "ms"),
      Figure("executors_added", static_cast<double>(scope.model->executors().size()), "count"),
  };
  if (slowest_request_ms >= 0) {
    finding.evidence.push_back(
        Figure("slowest_executor_request_ms", static_cast<double>(slowest_request_ms), "ms"));
  }
  const std::string master = PropertyOr(scope, "spark.master", "");
  const std::string dynamic = PropertyOr(scope, "spark.dynamicAllocation.enabled", "false");
  const std::string min_executors = PropertyOr(scope, "spark.dynamicAllocation.minExecutors", "0");
  for (const char* key : {"spark.master", "spark.dynamicAllocation.enabled",
                          "spark.dynamicAllocation.minExecutors", "spark.dynamicAllocation.initialExecutors",
                          "spark.executor.instances", "spark.dynamicAllocation.executorIdleTimeout"}) {
    if (auto value = scope.model->Property(key))
      finding.evidence.push_back(Setting(key, std::string(*value)));
  }

  if (dynamic == "true") {
    finding.fix.push_back(
        "start with executors: spark.dynamicAllocation.initialExecutors=<executors the first job needs> "
        "and spark.dynamicAllocation.minExecutors=2 (now " +
        min_executors + ")");
  } else {
    finding.fix.push_back("request the executors up front: spark.executor.instances=<n> (now " +
                          PropertyOr(scope, "spark.executor.instances", "unset") + ")");
  }
  if (master.starts_with("k8s://")) {
    finding.fix.push_back(
        "on Kubernetes: spark.kubernetes.allocation.batch.size=10 (default 5) and "
        "spark.kubernetes.allocation.batch.delay=1s; keep warm nodes or a smaller executor pod "
        "(spark.executor.memory, spark.executor.cores) so pods schedule without a node scale-up; "
        "pre-pull the executor image");
  } else if (master == "yarn") {
    finding.fix.push_back(
        "on YARN: check the queue's free capacity (spark.yarn.queue) and ask for containers that fit "
        "free node memory (spark.executor.memory + spark.executor.memoryOverhead)");
  } else {
    finding.fix.push_back(
        "check the cluster manager's free capacity: executors were asked for but not granted");
  }
  if (gaps_ms > 0) {
    finding.fix.push_back(
        "work was pending with no executor alive: keep some (spark.dynamicAllocation.minExecutors=1 or "
        "more) or let idle ones live longer (spark.dynamicAllocation.executorIdleTimeout=300s, now " +
        PropertyOr(scope, "spark.dynamicAllocation.executorIdleTimeout", "60s") + ")");
  }
  findings.push_back(std::move(finding));
}

}  // namespace sparktrace::diagnose::rules
