#include "feed/feed_findings.h"

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>
#include <utility>

#include "diagnose/diagnose.h"
#include "feed/finding_span_events.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::ConnectOperationRecord;

namespace {

// The driver said the operation is over: its findings are final and can be counted.
bool OperationEnded(const ConnectOperationRecord& operation) {
  return operation.finished_ms || operation.failed_ms || operation.canceled_ms || operation.closed_ms;
}

}  // namespace

FeedFindings::FeedFindings(std::optional<diagnose::RuleThresholds> rules,
                           std::vector<diagnose::Suppression> suppressions, EventLogFeedCounters& totals)
    : rules_(std::move(rules)),
      suppressions_(std::move(suppressions)),
      totals_(totals),
      expiry_announced_(suppressions_.size(), false) {}

void FeedFindings::BeginPoll(std::chrono::sys_days today) {
  today_ = today;
  // Logged once, the first poll it is found expired (at start, or when its day passes).
  for (std::size_t i = 0; i < suppressions_.size(); ++i) {
    const diagnose::Suppression& suppression = suppressions_[i];
    if (expiry_announced_[i] || !suppression.ExpiredOn(today_)) continue;
    expiry_announced_[i] = true;
    spdlog::warn("rules file: {}", diagnose::ExpiredMessage(suppression));
  }
}

void FeedFindings::AttachToOperation(const ApplicationModel& model, const ConnectOperationRecord& record,
                                     const std::optional<AirflowTask>& task,
                                     std::vector<tracing::Span>& spans, bool& counted) {
  if (!rules_) return;
  std::vector<diagnose::Finding> findings = diagnose::DiagnoseOperation(model, record, *rules_);
  Suppress(findings, task);
  AttachFindings(spans, tracing::kSparkConnectLifecycleSpanName, findings);
  if (!counted && OperationEnded(record)) {
    Count(findings);
    counted = true;
  }
}

void FeedFindings::AttachToApplication(const ApplicationModel& model, const std::optional<AirflowTask>& task,
                                       bool over, std::vector<tracing::Span>& spans, bool& counted) {
  if (!rules_) return;
  std::vector<diagnose::Finding> findings = diagnose::DiagnoseApplication(model, *rules_);
  Suppress(findings, task);
  AttachFindings(spans, tracing::kSparkApplicationSpanName, findings);
  if (over && !counted) {
    Count(findings);
    counted = true;
  }
}

void FeedFindings::CountSuppressions(EventLogFeedHeld& held) const {
  for (const diagnose::Suppression& suppression : suppressions_) {
    ++(suppression.ExpiredOn(today_) ? held.suppressions_expired : held.suppressions_active);
  }
}

void FeedFindings::Suppress(std::vector<diagnose::Finding>& findings,
                            const std::optional<AirflowTask>& task) const {
  if (suppressions_.empty()) return;
  std::optional<diagnose::SuppressionTask> identity;
  if (task) identity = diagnose::SuppressionTask{task->dag_id, task->task_id};
  diagnose::ApplySuppressions(findings, suppressions_, identity, today_);
}

void FeedFindings::Count(const std::vector<diagnose::Finding>& findings) {
  for (const diagnose::Finding& finding : findings) {
    if (finding.suppressed) {
      ++totals_.findings_suppressed[finding.id];
    } else {
      ++totals_.findings[{finding.id, std::string(diagnose::SeverityName(finding.severity))}];
    }
  }
}

}  // namespace sparktrace::feed
