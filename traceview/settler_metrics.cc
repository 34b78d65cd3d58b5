#include "traceview/settler_metrics.h"

#include <algorithm>

namespace sparktrace::traceview {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

ClientMetric Counter(std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.counter.value = value;
  return metric;
}

MetricFamily Single(std::string name, std::string help, double value, MetricType type) {
  MetricFamily family = Family(std::move(name), std::move(help), type);
  ClientMetric metric;
  if (type == MetricType::Gauge) {
    metric.gauge.value = value;
  } else {
    metric.counter.value = value;
  }
  family.metric.push_back(std::move(metric));
  return family;
}

}  // namespace

SettlerMetrics::SettlerMetrics(std::size_t max_series, bool priced)
    : max_series_(std::max<std::size_t>(max_series, 1)), priced_(priced) {}

void SettlerMetrics::AddSettled(const std::string& dag_id, const std::string& task_id,
                                const TaskIncrement& increment) {
  std::lock_guard lock(mu_);
  ++settled_;
  auto found = tasks_.find(std::make_pair(dag_id, task_id));
  if (found == tasks_.end()) {
    if (named_series_ >= max_series_) {
      ++overflowed_;
      found = tasks_.try_emplace({std::string(kOverflowLabel), std::string(kOverflowLabel)}).first;
    } else {
      ++named_series_;
      found = tasks_.try_emplace({dag_id, task_id}).first;
    }
  }
  Totals& totals = found->second;
  totals.core_seconds += increment.core_seconds;
  totals.gib_seconds += increment.gib_seconds;
  totals.money += increment.money;
  if (increment.regression) ++totals.regressions;
}

void SettlerMetrics::AddSettledTrace() {
  std::lock_guard lock(mu_);
  ++settled_;
}

void SettlerMetrics::AddConflict() {
  std::lock_guard lock(mu_);
  ++conflicts_;
}

void SettlerMetrics::AddError() {
  std::lock_guard lock(mu_);
  ++errors_;
}

void SettlerMetrics::SetBacklog(std::int64_t backlog) {
  std::lock_guard lock(mu_);
  backlog_ = backlog;
}

std::vector<MetricFamily> SettlerMetrics::Collect() const {
  std::lock_guard lock(mu_);
  std::vector<MetricFamily> families;
  families.push_back(
      Single("sparktrace_attempts_settled_total",
             "Task attempts whose final cost and regression this process computed and recorded",
             static_cast<double>(settled_), MetricType::Counter));
  families.push_back(Single("sparktrace_attempts_settle_conflicts_total",
                            "Attempts another settler recorded first, or that changed between listing and "
                            "recording (not counted here)",
                            static_cast<double>(conflicts_), MetricType::Counter));
  families.push_back(Single("sparktrace_attempts_settle_errors_total",
                            "Settling passes or attempts that failed on the store",
                            static_cast<double>(errors_), MetricType::Counter));
  families.push_back(
      Single("sparktrace_attempts_unsettled",
             "Attempts that ended but are not settled at their latest version, left after the last pass",
             static_cast<double>(backlog_), MetricType::Gauge));
  families.push_back(Single("sparktrace_task_metric_series_overflow_total",
                            "Settled attempts counted under dag=\"(other)\",task=\"(other)\" because "
                            "--task-metric-series (dag, task) pairs were in use",
                            static_cast<double>(overflowed_), MetricType::Counter));

  MetricFamily cores =
      Family("sparktrace_task_core_seconds_total",
             "Core-seconds allocated to settled task attempts, by DAG and task", MetricType::Counter);
  MetricFamily memory = Family("sparktrace_task_gib_seconds_total",
                               "GiB-seconds of memory allocated to settled task attempts, by DAG and task",
                               MetricType::Counter);
  MetricFamily money = Family("sparktrace_task_cost_total",
                              "Cost of settled task attempts at --cost-core-hour and --cost-gib-hour, by DAG "
                              "and task",
                              MetricType::Counter);
  MetricFamily regressions =
      Family("sparktrace_task_regressions_total",
             "Settled task attempts with the regression finding, by DAG and task", MetricType::Counter);
  for (const auto& [key, totals] : tasks_) {
    const std::vector<ClientMetric::Label> labels = {{"dag", key.first}, {"task", key.second}};
    cores.metric.push_back(Counter(labels, totals.core_seconds));
    memory.metric.push_back(Counter(labels, totals.gib_seconds));
    if (priced_) money.metric.push_back(Counter(labels, totals.money));
    regressions.metric.push_back(Counter(labels, static_cast<double>(totals.regressions)));
  }
  families.push_back(std::move(cores));
  families.push_back(std::move(memory));
  families.push_back(std::move(money));
  families.push_back(std::move(regressions));
  return families;
}

}  // namespace sparktrace::traceview
