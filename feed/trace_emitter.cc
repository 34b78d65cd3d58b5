#include "feed/trace_emitter.h"

#include <string_view>
#include <utility>

#include "listener/correlate/span_ids.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::feed {

using listener::correlate::ApplicationKey;
using listener::correlate::ApplicationModel;
using listener::correlate::ApplicationRecord;
using listener::correlate::ApplicationTraceId;
using listener::correlate::BuildApplicationSpans;
using listener::correlate::BuildOperationSpans;
using listener::correlate::BuiltSpans;
using listener::correlate::ConnectOperationRecord;
using listener::correlate::kPhaseCount;
using listener::correlate::OperationSpanRef;
using listener::correlate::Phase;
using listener::correlate::PhaseName;
using listener::correlate::SpanBuildOptions;
using listener::correlate::StageAttemptRecord;
using listener::events::EpochMillis;

namespace {

// An operation the proxy never saw (it ran before the proxy started, or through another one) is
// looked up on a few polls, then left alone.
constexpr int kMaxFailedLookups = 5;

int LifecycleEventCount(const ConnectOperationRecord& operation) {
  int count = 0;
  for (const auto* time :
       {&operation.started_ms, &operation.analyzed_ms, &operation.ready_ms, &operation.finished_ms,
        &operation.failed_ms, &operation.canceled_ms, &operation.closed_ms}) {
    if (time->has_value()) ++count;
  }
  return count;
}

// When the driver started the operation: its Started event, else its earliest job's submission
// (REST polls and older logs have no Connect events).
std::optional<EpochMillis> OperationStartMs(const ApplicationModel& model,
                                            const ConnectOperationRecord* record,
                                            const std::vector<std::int32_t>& jobs) {
  if (record != nullptr && record->started_ms) return record->started_ms;
  std::optional<EpochMillis> earliest;
  for (std::int32_t job_id : jobs) {
    auto job = model.jobs().find(job_id);
    if (job == model.jobs().end() || !job->second.submission_ms) continue;
    if (!earliest || *job->second.submission_ms < *earliest) earliest = job->second.submission_ms;
  }
  return earliest;
}

bool HasJobOfNoOperation(const ApplicationModel& model) {
  for (const auto& [job_id, job] : model.jobs()) {
    if (!model.OperationOfJob(job)) return true;
  }
  return false;
}

// BuildApplicationSpans totals the phases of the stage attempts the model still holds; after
// forgetting, the feed's folded totals are the true ones.
void SetRootPhaseTotals(tracing::Span& root, const PhaseTotals& totals) {
  for (auto& attribute : root.attributes) {
    for (std::size_t phase = 0; phase < kPhaseCount; ++phase) {
      if (attribute.key == std::string(tracing::kSparkPhasePrefix) +
                               std::string(PhaseName(static_cast<Phase>(phase))) + ".ms") {
        attribute.value = totals.total_ms[phase];
      }
    }
  }
}

}  // namespace

TraceEmitter::TraceEmitter(FindOperationSpan find_operation_span, tracing::SpanSink& spans,
                           tracing::Sampler sampler, std::chrono::milliseconds application_trace_interval,
                           FeedApplications& applications, FeedFindings& findings,
                           EventLogFeedCounters& totals, listener::correlate::SqlSpanLimits sql_limits)
    : find_operation_span_(std::move(find_operation_span)),
      spans_(spans),
      sampler_(sampler),
      application_trace_interval_(application_trace_interval),
      sql_limits_(sql_limits),
      applications_(applications),
      findings_(findings),
      totals_(totals) {}

void TraceEmitter::EmitChangedOperations() {
  // Operations whose proxy span was not known yet (the driver wrote about them before the proxy
  // saw their ExecutePlan, or a REST poll came first) are looked up again on the next polls.
  for (auto& [key, progress] : progress_) {
    if (progress.emitted || progress.lookups_failed == 0 || progress.lookups_failed >= kMaxFailedLookups)
      continue;
    if (FeedApplication* application = applications_.Find(progress.log_id)) application->changed = true;
  }
  for (auto& [log_id, application] : applications_.all()) {
    if (!application.changed) continue;
    application.changed = false;
    std::set<std::string> operation_ids;
    for (const auto& [job_id, job] : application.model.jobs()) {
      if (auto operation_id = application.model.OperationOfJob(job)) operation_ids.insert(*operation_id);
    }
    for (const auto& [operation_id, record] : application.model.operations())
      operation_ids.insert(operation_id);
    for (const std::string& operation_id : operation_ids) EmitOperation(log_id, application, operation_id);
  }
}

void TraceEmitter::SubmitBuilt(BuiltSpans built, std::set<tracing::SpanId>& final_submitted) {
  totals_.sql_plans_reduced += static_cast<std::uint64_t>(built.sql_plans_reduced);
  std::set<tracing::SpanId> still_built;
  for (tracing::Span& span : built.spans) {
    still_built.insert(span.span_id);
    const bool first_final = !built.IsOpen(span.span_id) && final_submitted.insert(span.span_id).second;
    ++(first_final ? totals_.spans_submitted : totals_.live_spans_submitted);
    if (first_final) {
      spans_.Submit(std::move(span));
    } else {
      spans_.SubmitLive(std::move(span));
    }
  }
  std::erase_if(final_submitted, [&](const tracing::SpanId& id) { return !still_built.contains(id); });
}

void TraceEmitter::EmitOperation(const std::string& log_id, FeedApplication& application,
                                 const std::string& operation_id) {
  OperationProgress& progress = progress_[log_id + "/" + operation_id];
  progress.log_id = log_id;
  progress.operation_id = operation_id;
  const ApplicationModel& model = application.model;
  const std::vector<std::int32_t> jobs = model.JobsOfOperation(operation_id);
  const ConnectOperationRecord* record = model.FindOperation(operation_id);
  OperationState state = StateOf(model, record, jobs, operation_id);
  state.application_over = Over(application);
  const bool all_ended = state.all_jobs_ended;
  // Finished and emitted in that state already: nothing new to say.
  if (progress.emitted && all_ended && state == progress.emitted_state) return;
  if (progress.lookups_failed >= kMaxFailedLookups) return;

  const auto target = find_operation_span_(operation_id);
  if (!target) {
    if (++progress.lookups_failed == kMaxFailedLookups) ++totals_.operations_unknown;
    return;
  }
  // Before the sampling decision: metrics are not sampled, an unsampled operation still ran the task.
  if (target->airflow_task) {
    NoteAirflowTask(application, OperationStartMs(model, record, jobs), *target->airflow_task);
  }
  if (!target->sampled) return;
  SpanBuildOptions build_options;
  build_options.application_over = state.application_over;
  build_options.sql = sql_limits_;
  BuiltSpans built = BuildOperationSpans(model, operation_id,
                                         OperationSpanRef{target->trace_id, target->span_id}, build_options);
  // Diagnosed once the operation's jobs are done: a running stage's figures would flicker.
  if (record != nullptr && all_ended && !jobs.empty()) {
    findings_.AttachToOperation(model, *record, target->airflow_task, built.spans, progress.findings_counted);
  }
  SubmitBuilt(std::move(built), progress.final_submitted);
  if (!progress.emitted) ++totals_.operations_traced;
  progress.emitted = true;
  progress.emitted_state = state;
}

TraceEmitter::OperationState TraceEmitter::StateOf(const ApplicationModel& model,
                                                   const ConnectOperationRecord* record,
                                                   const std::vector<std::int32_t>& jobs,
                                                   std::string_view operation_id) {
  OperationState state;
  for (std::int64_t execution_id : listener::correlate::SqlExecutionsOfOperation(model, operation_id)) {
    ++state.sql_executions;
    if (model.sql_executions().at(execution_id).end_ms) ++state.sql_executions_ended;
  }
  state.jobs = jobs.size();
  state.all_jobs_ended = true;
  state.lifecycle_events = record == nullptr ? 0 : LifecycleEventCount(*record);
  for (std::int32_t job_id : jobs) {
    auto job = model.jobs().find(job_id);
    if (job == model.jobs().end() || !job->second.completion_ms) state.all_jobs_ended = false;
    for (const StageAttemptRecord* stage : model.StagesOfJob(job_id)) {
      ++state.stage_attempts;
      state.tasks_ended += stage->tasks.tasks_ended;
    }
  }
  return state;
}

void TraceEmitter::EmitApplicationTraces(bool force) {
  const FeedClock::time_point now = FeedClock::now();
  for (auto& [key, application] : applications_.all()) {
    if (!application.trace_changed) continue;
    const ApplicationRecord& app = application.model.application();
    if (!app.start_ms) continue;  // nothing to root a trace at yet
    const bool ended = Over(application);
    // A running application's trace is rebuilt whole: at most every interval, not every poll.
    if (!force && !ended && application.trace_emitted_at &&
        now - *application.trace_emitted_at < application_trace_interval_) {
      continue;
    }
    EmitApplicationTrace(application);
    application.trace_emitted_at = now;
  }
}

void TraceEmitter::EmitApplicationTrace(FeedApplication& application) {
  application.trace_changed = false;
  const ApplicationModel& model = application.model;
  const ApplicationRecord& app = model.application();
  if (!sampler_.ShouldSampleRoot(ApplicationTraceId(ApplicationKey(app.app_id, app.attempt_id)))) return;
  // A Spark Connect server's jobs are in their operations' traces, and so is its driver-level time
  // (each operation's lifecycle span carries the executors, its phases the resource wait): its own
  // trace only holds jobs of no operation, and no phase intervals (weeks of them, churning as
  // operations come and go). An application shows what it is with its first job (a plain one's
  // have no operation) or its first operation; until then, or its end, there is no trace to start,
  // so a Connect server waiting for its first client leaves no stray trace behind.
  const bool connect_server = !model.operations().empty();
  const bool over = Over(application);
  if (!HasJobOfNoOperation(model) && (connect_server || !over)) return;
  SpanBuildOptions build_options;
  build_options.application_over = over;
  build_options.sql = sql_limits_;
  // After forgetting, the model's phases cover only what it still holds: the intervals already
  // emitted stay in the store, later ones are not (the totals on the root stay right).
  if (connect_server || application.phases.folded()) build_options.max_phase_spans = 0;
  BuiltSpans built = BuildApplicationSpans(model, build_options);
  if (built.spans.empty()) return;
  // A Connect server's findings are its operations'; a plain application's go on its root.
  if (!connect_server) {
    findings_.AttachToApplication(model, application.airflow_task, over, built.spans,
                                  application.findings_counted);
  }
  if (const std::optional<PhaseTotals> totals = application.phases.Totals(model)) {
    SetRootPhaseTotals(built.spans.front(), *totals);  // the root comes first
  }
  if (!application.trace_submitted) ++totals_.applications_traced;
  application.trace_submitted = true;
  SubmitBuilt(std::move(built), application.final_submitted);
}

void TraceEmitter::ForgetProgressOf(const std::string& source_key, const ApplicationModel* still_held) {
  for (auto it = progress_.begin(); it != progress_.end();) {
    const bool drop =
        it->second.log_id == source_key &&
        (still_held == nullptr || still_held->FindOperation(it->second.operation_id) == nullptr);
    it = drop ? progress_.erase(it) : std::next(it);
  }
}

}  // namespace sparktrace::feed
