#include "feed/feed_metrics.h"

#include <algorithm>
#include <utility>

#include "common/metric_family_builders.h"
#include "feed/application_metric_families.h"

namespace sparktrace::feed {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

using metric_builders::Counter;
using metric_builders::Family;
using metric_builders::Gauge;

MetricFamily CounterOf(std::string name, std::string help, std::uint64_t value) {
  MetricFamily family = Family(std::move(name), std::move(help), MetricType::Counter);
  family.metric.push_back(Counter({}, value));
  return family;
}

}  // namespace

FeedMetrics::FeedMetrics(std::size_t max_applications, std::shared_ptr<const EventPushEndpoint> push)
    : max_applications_(std::max<std::size_t>(max_applications, 1)), push_(std::move(push)) {}

void FeedMetrics::Publish(const EventLogFeedCounters& totals, const EventLogFeedHeld& held,
                          const std::vector<ApplicationFigures>& changed) {
  std::lock_guard lock(mu_);
  totals_ = totals;
  held_ = held;
  for (const ApplicationFigures& figures : changed) {
    ++sequence_;
    auto found = applications_.find(figures.app_name);
    if (found == applications_.end()) {
      if (applications_.size() >= max_applications_) {
        // Weeks of applications must not grow the label sets without bound: the one updated
        // longest ago makes room.
        auto oldest = std::min_element(
            applications_.begin(), applications_.end(),
            [](const auto& a, const auto& b) { return a.second.updated < b.second.updated; });
        applications_.erase(oldest);
        ++evicted_;
      }
      found = applications_.emplace(figures.app_name, Entry{}).first;
    }
    found->second.figures = figures;
    found->second.updated = sequence_;
  }
}

std::vector<std::string> FeedMetrics::application_names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : applications_) names.push_back(name);
  return names;
}

std::uint64_t FeedMetrics::applications_evicted() const {
  std::lock_guard lock(mu_);
  return evicted_;
}

std::vector<MetricFamily> FeedMetrics::Collect() const {
  const EventPushCounters push = push_ ? push_->counters() : EventPushCounters{};
  std::lock_guard lock(mu_);
  std::vector<MetricFamily> families;

  std::vector<const ApplicationFigures*> applications;
  applications.reserve(applications_.size());
  for (const auto& [name, entry] : applications_) applications.push_back(&entry.figures);
  families = ApplicationMetricFamilies(applications);

  MetricFamily findings =
      Family("sparktrace_findings_total",
             "Diagnosis findings of ended Spark Connect operations and applications, by rule "
             "id and severity (docs/diagnose-rules.md)",
             MetricType::Counter);
  for (const auto& [id_severity, count] : totals_.findings) {
    findings.metric.push_back(Counter({{"id", id_severity.first}, {"severity", id_severity.second}}, count));
  }
  families.push_back(std::move(findings));
  MetricFamily suppressed =
      Family("sparktrace_findings_suppressed_total",
             "Diagnosis findings of ended operations and applications that a rules-file suppression muted, "
             "by rule id: not in sparktrace_findings_total (docs/diagnose-rules.md, Suppressions)",
             MetricType::Counter);
  for (const auto& [id, count] : totals_.findings_suppressed) {
    suppressed.metric.push_back(Counter({{"id", id}}, count));
  }
  families.push_back(std::move(suppressed));
  MetricFamily suppressions = Family("sparktrace_suppressions",
                                     "Suppressions in the rules file (--rules), by state: active, or "
                                     "expired (past their until day, ignored)",
                                     MetricType::Gauge);
  suppressions.metric.push_back(Gauge({{"state", "active"}}, static_cast<double>(held_.suppressions_active)));
  suppressions.metric.push_back(
      Gauge({{"state", "expired"}}, static_cast<double>(held_.suppressions_expired)));
  families.push_back(std::move(suppressions));

  MetricFamily lines =
      Family("sparktrace_listener_lines_total", "Driver-event lines received, by source (event_log, push)",
             MetricType::Counter);
  lines.metric.push_back(Counter({{"source", "event_log"}}, totals_.lines));
  lines.metric.push_back(Counter({{"source", "push"}}, push.lines + push.malformed_lines));
  families.push_back(std::move(lines));
  MetricFamily malformed =
      Family("sparktrace_listener_malformed_lines_total",
             "Driver-event lines that are not Spark events: counted and skipped", MetricType::Counter);
  malformed.metric.push_back(Counter({{"source", "event_log"}}, totals_.malformed_lines));
  malformed.metric.push_back(Counter({{"source", "push"}}, push.malformed_lines));
  families.push_back(std::move(malformed));
  MetricFamily pushes = Family("sparktrace_listener_pushes_total", "POST /api/v1/events requests, by result",
                               MetricType::Counter);
  pushes.metric.push_back(Counter({{"result", "accepted"}}, push.pushes));
  pushes.metric.push_back(Counter({{"result", "too_large"}}, push.rejected_too_large));
  pushes.metric.push_back(Counter({{"result", "bad_request"}}, push.rejected_bad_request));
  pushes.metric.push_back(Counter({{"result", "busy"}}, push.rejected_busy));
  families.push_back(std::move(pushes));
  families.push_back(CounterOf("sparktrace_listener_events_total",
                               "Spark events applied to an application model, from any source",
                               totals_.events));
  families.push_back(CounterOf("sparktrace_listener_rest_events_total",
                               "Events derived from the driver's REST API (--spark-ui)",
                               totals_.rest_events));
  families.push_back(CounterOf("sparktrace_listener_rest_errors_total",
                               "Failed polls of the driver's REST API (--spark-ui)", totals_.rest_errors));
  families.push_back(CounterOf("sparktrace_listener_operations_traced_total",
                               "Spark Connect operations given job, stage and phase spans",
                               totals_.operations_traced));
  families.push_back(CounterOf("sparktrace_listener_operations_unknown_total",
                               "Spark Connect operations in the driver's events that this proxy never saw",
                               totals_.operations_unknown));
  families.push_back(CounterOf("sparktrace_listener_applications_traced_total",
                               "Applications given a spark.application trace", totals_.applications_traced));
  MetricFamily submitted = Family("sparktrace_listener_spans_submitted_total",
                                  "Spans built from driver events and handed to the sinks: final (once per "
                                  "span, when it has ended) or live (store only)",
                                  MetricType::Counter);
  submitted.metric.push_back(Counter({{"version", "final"}}, totals_.spans_submitted));
  submitted.metric.push_back(Counter({{"version", "live"}}, totals_.live_spans_submitted));
  families.push_back(std::move(submitted));
  families.push_back(CounterOf("sparktrace_listener_sql_plans_reduced_total",
                               "Spans of SQL executions whose plan attribute lost its metric lists or "
                               "operators to --sql-plan-max-bytes (each build)",
                               totals_.sql_plans_reduced));
  MetricFamily forgotten = Family(
      "sparktrace_listener_forgotten_total",
      "Finished operations, jobs and applications dropped from memory (retention)", MetricType::Counter);
  forgotten.metric.push_back(Counter({{"what", "operations"}}, totals_.operations_forgotten));
  forgotten.metric.push_back(Counter({{"what", "jobs"}}, totals_.jobs_forgotten));
  forgotten.metric.push_back(Counter({{"what", "applications"}}, totals_.applications_forgotten));
  families.push_back(std::move(forgotten));
  families.push_back(CounterOf(
      "sparktrace_listener_metric_applications_evicted_total",
      "Application names dropped from the spark_* gauges to keep their label sets bounded", evicted_));
  MetricFamily held_applications =
      Family("sparktrace_listener_applications", "Application models held in memory", MetricType::Gauge);
  held_applications.metric.push_back(Gauge({}, static_cast<double>(held_.applications)));
  families.push_back(std::move(held_applications));
  MetricFamily held_operations = Family("sparktrace_listener_operations",
                                        "Spark Connect operations tracked in memory", MetricType::Gauge);
  held_operations.metric.push_back(Gauge({}, static_cast<double>(held_.operations)));
  families.push_back(std::move(held_operations));
  return families;
}

}  // namespace sparktrace::feed
