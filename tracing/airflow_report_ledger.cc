#include "tracing/airflow_report_ledger.h"

#include <array>
#include <string_view>

namespace sparktrace::tracing {
namespace {

Error Conflict(std::string_view field, std::string_view problem) {
  return InvalidArgument(std::string(field) + ": " + std::string(problem));
}

}  // namespace

bool IsFinishedAirflowState(std::string_view state) {
  static constexpr std::array<std::string_view, 6> kFinished = {"success",        "failed",  "skipped",
                                                                 "upstream_failed", "removed", "up_for_retry"};
  for (const std::string_view finished : kFinished) {
    if (state == finished) return true;
  }
  return false;
}

std::string AirflowReportLedger::ContextKey(const TraceId& trace_id, const SpanId& span_id) {
  return ToHex(trace_id) + ToHex(span_id);
}

Result<void> AirflowReportLedger::CheckAgainst(const Attempt& earlier, const AirflowTaskReport& report,
                                               const TaskSpanContext& context) const {
  if (earlier.trace_id != context.trace_id || earlier.span_id != context.span_id) {
    return Conflict("traceparent", "the attempt was reported with another span context; an attempt has one");
  }
  if (earlier.start_unix_nano != report.start_unix_nano) {
    return Conflict("start_time_unix_nano", "differs from the attempt's first report");
  }
  if (!earlier.operator_class.empty() && report.operator_class != earlier.operator_class) {
    return Conflict("operator", "differs from the attempt's first report");
  }
  if (report.end_unix_nano < earlier.end_unix_nano) {
    return Conflict("end_time_unix_nano", "is before the attempt's last reported end");
  }
  if (IsFinishedAirflowState(earlier.state) && report.state != earlier.state) {
    return Conflict("state", "the attempt has finished; a finished state is final");
  }
  return {};
}

Result<void> AirflowReportLedger::Admit(const AirflowTaskReport& report, const TaskSpanContext& context) {
  std::string identity_key = CanonicalTaskAttemptKey(report.identity);
  std::string context_key = ContextKey(context.trace_id, context.span_id);
  const std::lock_guard lock(mu_);
  const auto owner = by_context_.find(context_key);
  if (owner != by_context_.end() && owner->second->identity_key != identity_key) {
    return Conflict("traceparent", "names the span of another task attempt");
  }
  const auto known = by_identity_.find(identity_key);
  if (known != by_identity_.end()) {
    Attempt& attempt = *known->second;
    if (auto checked = CheckAgainst(attempt, report, context); !checked.ok()) return checked;
    attempt.end_unix_nano = report.end_unix_nano;
    attempt.state = report.state;
    if (attempt.operator_class.empty()) attempt.operator_class = report.operator_class;
    recency_.splice(recency_.begin(), recency_, known->second);
    return {};
  }
  if (max_attempts_ == 0) return {};
  if (recency_.size() >= max_attempts_) Forget(std::prev(recency_.end()));
  recency_.push_front(Attempt{identity_key, context.trace_id, context.span_id, report.start_unix_nano,
                              report.end_unix_nano, report.state, report.operator_class});
  by_identity_.emplace(std::move(identity_key), recency_.begin());
  by_context_.emplace(std::move(context_key), recency_.begin());
  return {};
}

void AirflowReportLedger::Forget(Recency::iterator attempt) {
  by_identity_.erase(attempt->identity_key);
  by_context_.erase(ContextKey(attempt->trace_id, attempt->span_id));
  recency_.erase(attempt);
  ++forgotten_;
}

std::size_t AirflowReportLedger::size() const {
  const std::lock_guard lock(mu_);
  return recency_.size();
}

std::uint64_t AirflowReportLedger::forgotten() const {
  const std::lock_guard lock(mu_);
  return forgotten_;
}

}  // namespace sparktrace::tracing
