#include "feed/event_log_feed.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <set>
#include <utility>
#include <variant>

#include "diagnose/diagnose.h"
#include "feed/finding_span_events.h"
#include "listener/correlate/span_builder.h"
#include "listener/correlate/span_ids.h"

namespace sparktrace::feed {

using listener::ApplicationKey;
using listener::ApplicationModel;
using listener::ApplicationRecord;
using listener::ApplicationTraceId;
using listener::BuildApplicationSpans;
using listener::BuildOperationSpans;
using listener::BuiltSpans;
using listener::ConnectOperationRecord;
using listener::EpochMillis;
using listener::IgnoredEvent;
using listener::kPhaseCount;
using listener::OperationSpanRef;
using listener::Phase;
using listener::PhaseName;
using listener::SpanBuildOptions;
using listener::SparkEvent;
using listener::StageAttemptRecord;

namespace {

// An operation the proxy never saw (it ran before the proxy started, or through another one) is
// looked up on a few polls, then left alone.
constexpr int kMaxFailedLookups = 5;

// Forgetting scans the whole model: done when the cutoff moved on by at least this much.
constexpr EpochMillis kForgetStepMs = 60'000;

constexpr std::string_view kLifecycleSpanName = "spark.connect.operation.lifecycle";
constexpr std::string_view kApplicationSpanName = "spark.application";

// The driver said the operation is over: its findings are final and can be counted.
bool OperationEnded(const ConnectOperationRecord& operation) {
  return operation.finished_ms || operation.failed_ms || operation.canceled_ms || operation.closed_ms;
}

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
      if (attribute.key == "spark.phase." + std::string(PhaseName(static_cast<Phase>(phase))) + ".ms") {
        attribute.value = totals.total_ms[phase];
      }
    }
  }
}

}  // namespace

Result<std::unique_ptr<EventLogFeed>> EventLogFeed::Start(EventLogFeedOptions options,
                                                          FindOperationSpan find_operation_span,
                                                          tracing::SpanSink& spans) {
  auto sampler = tracing::Sampler::Create(options.sample_ratio);
  if (!sampler.ok()) return sampler.error();
  std::unique_ptr<eventlog::EventLogScanner> scanner;
  if (!options.directories.empty()) {
    eventlog::ScannerOptions scanner_options;
    scanner_options.directories = options.directories;
    auto created = eventlog::EventLogScanner::Create(std::move(scanner_options));
    if (!created.ok()) return created.error();
    scanner = std::move(*created);
  }
  std::unique_ptr<listener::rest::RestPoller> rest_poller;
  if (!options.spark_ui_url.empty()) {
    listener::rest::RestPollerOptions rest_options;
    rest_options.spark_ui_url = options.spark_ui_url;
    auto created = listener::rest::RestPoller::Create(std::move(rest_options));
    if (!created.ok()) return created.error();
    rest_poller = std::move(*created);
  }
  std::unique_ptr<EventLogFeed> feed(new EventLogFeed(std::move(options), std::move(find_operation_span),
                                                      spans, std::move(scanner), std::move(rest_poller),
                                                      *sampler));  // NOLINT
  feed->thread_ = std::thread([raw = feed.get()] { raw->Run(); });
  return feed;
}

EventLogFeed::EventLogFeed(EventLogFeedOptions options, FindOperationSpan find_operation_span,
                           tracing::SpanSink& spans, std::unique_ptr<eventlog::EventLogScanner> scanner,
                           std::unique_ptr<listener::rest::RestPoller> rest_poller, tracing::Sampler sampler)
    : options_(std::move(options)),
      find_operation_span_(std::move(find_operation_span)),
      spans_(spans),
      sampler_(sampler),
      scanner_(std::move(scanner)),
      rest_(std::move(rest_poller)) {
  if (options_.push) {
    push_ = std::make_shared<EventPushEndpoint>(*options_.push, [this] {
      {
        std::lock_guard lock(mu_);
        pushed_ = true;
      }
      wake_.notify_all();
    });
  }
  metrics_ = std::make_shared<FeedMetrics>(options_.max_metric_applications, push_);
  expiry_announced_.assign(options_.suppressions.size(), false);
}

EventLogFeed::~EventLogFeed() {
  // First, without mu_: a push in progress holds the endpoint's lock and then takes mu_ to wake
  // this thread; once Close() returns, no push will touch this object again.
  if (push_) push_->Close();
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

EventLogFeedCounters EventLogFeed::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

void EventLogFeed::PollNow() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = ++poll_requests_;
  wake_.notify_all();
  polled_.wait(lock, [&] { return polls_done_ >= target || stopping_; });
}

void EventLogFeed::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    const std::uint64_t requested = poll_requests_;
    pushed_ = false;
    lock.unlock();
    PollOnce(false);
    lock.lock();
    polls_done_ = std::max(polls_done_, requested);
    polled_.notify_all();
    if (stopping_) break;
    wake_.wait_for(lock, options_.poll_interval,
                   [&] { return stopping_ || pushed_ || poll_requests_ > polls_done_; });
  }
  // One last pass so that what the driver wrote just before a shutdown is not lost.
  lock.unlock();
  PollOnce(true);
}

void EventLogFeed::PollOnce(bool final_poll) {
  today_ = diagnose::UtcDay(options_.wall_clock());
  AnnounceExpiredSuppressions();
  ApplyPushes();
  // Poll returns true while a log still has bytes beyond its per-poll budget.
  while (scanner_ && scanner_->Poll(*this)) {
  }
  if (rest_) PollRest();
  EmitChangedApplications();
  EmitApplicationTraces(final_poll);
  const std::vector<ApplicationFigures> figures = ChangedApplicationFigures();
  ApplyRetention();
  Publish(figures);
}

void EventLogFeed::Apply(Application& application, const SparkEvent& event) {
  application.model.Apply(event);
  application.events.Add(event, application.model);
  application.changed = true;
  application.trace_changed = true;
  application.metrics_changed = true;
  ++totals_.events;
}

void EventLogFeed::ApplyPushes() {
  if (!push_) return;
  for (PushedBatch& batch : push_->TakeAll()) {
    Application& application = applications_["push:" + batch.stream];
    for (const SparkEvent& event : batch.events) Apply(application, event);
  }
}

void EventLogFeed::PollRest() {
  listener::rest::RestPollResult polled = rest_->Poll();
  for (const Error& error : polled.errors) spdlog::debug("--spark-ui: {}", error.message);
  totals_.rest_events += polled.events.size();
  totals_.rest_errors += polled.errors.size();
  for (listener::rest::RestEvent& rest_event : polled.events) {
    // One model per application attempt, apart from the event logs' (keyed by path).
    Apply(applications_["spark-ui:" + rest_event.application_id + "/" + rest_event.attempt_id.value_or("")],
          rest_event.event);
  }
}

eventlog::LineVerdict EventLogFeed::OnLine(const eventlog::LogIdentity& log, std::string_view line,
                                           const eventlog::LinePosition& /*position*/) {
  auto event = parser_.Parse(line);
  ++totals_.lines;
  if (!event.ok()) {
    ++totals_.malformed_lines;
    return eventlog::LineVerdict::kCorrupt;
  }
  if (std::holds_alternative<IgnoredEvent>(*event)) return eventlog::LineVerdict::kAccepted;
  Apply(applications_[log.id], *event);
  return eventlog::LineVerdict::kAccepted;
}

void EventLogFeed::OnLogRestarted(const eventlog::LogIdentity& log, std::uint64_t generation,
                                  std::string_view reason) {
  spdlog::info("event log {} restarted (generation {}): {}", log.id, generation, reason);
  // A rewritten log is read from its start again: model it afresh, after ending what the old one
  // left open (its spans were submitted live; they are owed a final version).
  auto application = applications_.find(log.id);
  if (application != applications_.end()) {
    application->second.log_abandoned = true;
    application->second.changed = true;
    application->second.trace_changed = true;
    EmitChangedApplications();
    EmitApplicationTrace(application->second);
    applications_.erase(application);
  }
  ForgetProgressOf(log.id, nullptr);
}

void EventLogFeed::OnLogCompleted(const eventlog::LogIdentity& log) {
  spdlog::debug("event log {} is complete", log.id);
  auto application = applications_.find(log.id);
  if (application != applications_.end()) {
    application->second.log_completed = true;
    application->second.trace_changed = true;  // its final version, without "running"
    application->second.metrics_changed = true;
  }
}

void EventLogFeed::EmitChangedApplications() {
  // Operations whose proxy span was not known yet (the driver wrote about them before the proxy
  // saw their ExecutePlan, or a REST poll came first) are looked up again on the next polls.
  for (auto& [key, progress] : progress_) {
    if (progress.emitted || progress.lookups_failed == 0 || progress.lookups_failed >= kMaxFailedLookups)
      continue;
    auto application = applications_.find(progress.log_id);
    if (application != applications_.end()) application->second.changed = true;
  }
  for (auto& [log_id, application] : applications_) {
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

bool EventLogFeed::Over(const Application& application) {
  return application.model.application().end_ms.has_value() || application.log_completed ||
         application.log_abandoned;
}

void EventLogFeed::SubmitBuilt(BuiltSpans built, std::set<tracing::SpanId>& final_submitted) {
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

void EventLogFeed::EmitOperation(const std::string& log_id, Application& application,
                                 const std::string& operation_id) {
  OperationProgress& progress = progress_[log_id + "/" + operation_id];
  progress.log_id = log_id;
  progress.operation_id = operation_id;
  const ApplicationModel& model = application.model;
  const std::vector<std::int32_t> jobs = model.JobsOfOperation(operation_id);
  const ConnectOperationRecord* record = model.FindOperation(operation_id);
  OperationState state = StateOf(model, record, jobs);
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
  BuiltSpans built = BuildOperationSpans(model, operation_id,
                                         OperationSpanRef{target->trace_id, target->span_id}, build_options);
  // Diagnosed once the operation's jobs are done: a running stage's figures would flicker.
  if (options_.rules && record != nullptr && all_ended && !jobs.empty()) {
    std::vector<diagnose::Finding> findings = diagnose::DiagnoseOperation(model, *record, *options_.rules);
    Suppress(findings, target->airflow_task);
    AttachFindings(built.spans, kLifecycleSpanName, findings);
    if (!progress.findings_counted && OperationEnded(*record)) {
      CountFindings(findings);
      progress.findings_counted = true;
    }
  }
  SubmitBuilt(std::move(built), progress.final_submitted);
  if (!progress.emitted) ++totals_.operations_traced;
  progress.emitted = true;
  progress.emitted_state = state;
}

void EventLogFeed::NoteAirflowTask(Application& application, std::optional<EpochMillis> started_ms,
                                   const AirflowTask& task) {
  // Operations are looked up in id order and again whenever their jobs progress, so the lookup
  // order says nothing about which is latest: the driver's start times do. An operation of unknown
  // start only wins over another of unknown start.
  const auto key = [](std::optional<EpochMillis> ms) {
    return ms.value_or(std::numeric_limits<EpochMillis>::min());
  };
  if (application.airflow_task && key(started_ms) < key(application.airflow_task_started_ms)) return;
  application.airflow_task_started_ms = started_ms;
  if (application.airflow_task == task) return;
  application.airflow_task = task;
  application.metrics_changed = true;
}

EventLogFeed::OperationState EventLogFeed::StateOf(const ApplicationModel& model,
                                                   const ConnectOperationRecord* record,
                                                   const std::vector<std::int32_t>& jobs) {
  OperationState state;
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

void EventLogFeed::EmitApplicationTraces(bool force) {
  const Clock::time_point now = Clock::now();
  for (auto& [key, application] : applications_) {
    if (!application.trace_changed) continue;
    const ApplicationRecord& app = application.model.application();
    if (!app.start_ms) continue;  // nothing to root a trace at yet
    const bool ended = Over(application);
    // A running application's trace is rebuilt whole: at most every interval, not every poll.
    if (!force && !ended && application.trace_emitted_at &&
        now - *application.trace_emitted_at < options_.application_trace_interval) {
      continue;
    }
    EmitApplicationTrace(application);
    application.trace_emitted_at = now;
  }
}

void EventLogFeed::EmitApplicationTrace(Application& application) {
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
  // After forgetting, the model's phases cover only what it still holds: the intervals already
  // emitted stay in the store, later ones are not (the totals on the root stay right).
  if (connect_server || application.phases.folded()) build_options.max_phase_spans = 0;
  BuiltSpans built = BuildApplicationSpans(model, build_options);
  if (built.spans.empty()) return;
  // A Connect server's findings are its operations'; a plain application's go on its root.
  if (options_.rules && !connect_server) {
    std::vector<diagnose::Finding> findings = diagnose::DiagnoseApplication(model, *options_.rules);
    Suppress(findings, application.airflow_task);
    AttachFindings(built.spans, kApplicationSpanName, findings);
    if (over && !application.findings_counted) {
      CountFindings(findings);
      application.findings_counted = true;
    }
  }
  if (const std::optional<PhaseTotals> totals = application.phases.Totals(model)) {
    SetRootPhaseTotals(built.spans.front(), *totals);  // the root comes first
  }
  if (!application.trace_submitted) ++totals_.applications_traced;
  application.trace_submitted = true;
  SubmitBuilt(std::move(built), application.final_submitted);
}

std::vector<ApplicationFigures> EventLogFeed::ChangedApplicationFigures() {
  std::vector<ApplicationFigures> figures;
  for (auto& [key, application] : applications_) {
    if (!application.metrics_changed) continue;
    application.metrics_changed = false;
    const std::optional<PhaseTotals> totals = application.phases.Totals(application.model);
    if (!totals) continue;
    const ApplicationRecord& app = application.model.application();
    std::string name = !app.app_name.empty() ? app.app_name : !app.app_id.empty() ? app.app_id : key;
    figures.push_back(
        FiguresOf(std::move(name), application.model, *totals, application.events, Over(application)));
    figures.back().airflow_task = application.airflow_task;
  }
  return figures;
}

void EventLogFeed::ApplyRetention() {
  const Clock::time_point now = Clock::now();
  for (auto it = applications_.begin(); it != applications_.end();) {
    const std::string& key = it->first;
    Application& application = it->second;
    ApplicationModel& model = application.model;
    const ApplicationRecord& app = model.application();
    if (!application.completed_at && (application.log_completed || app.end_ms))
      application.completed_at = now;
    if (application.completed_at &&
        now - *application.completed_at >= options_.completed_application_retention) {
      // Its operations were emitted in this poll; its trace too unless throttled.
      if (application.trace_changed) EmitApplicationTrace(application);
      ForgetProgressOf(key, nullptr);
      ++totals_.applications_forgotten;
      it = applications_.erase(it);
      continue;
    }
    ++it;
    if (!app.last_event_ms) continue;
    const EpochMillis cutoff = *app.last_event_ms - options_.operation_retention.count();
    if (application.forgotten_before_ms && cutoff < *application.forgotten_before_ms + kForgetStepMs)
      continue;
    if (app.start_ms && cutoff <= *app.start_ms) continue;
    // What is about to be dropped must be in the store in its final state first.
    if (application.trace_changed) {
      EmitApplicationTrace(application);
      application.trace_emitted_at = now;
    }
    application.phases.FoldUntil(model, cutoff);
    const ApplicationModel::ForgetStats forgot = model.ForgetFinishedBefore(cutoff);
    application.forgotten_before_ms = cutoff;
    totals_.operations_forgotten += static_cast<std::uint64_t>(forgot.operations);
    totals_.jobs_forgotten += static_cast<std::uint64_t>(forgot.jobs);
    if (forgot.operations > 0) ForgetProgressOf(key, &model);
  }
}

void EventLogFeed::ForgetProgressOf(const std::string& log_id, const ApplicationModel* still_held) {
  for (auto it = progress_.begin(); it != progress_.end();) {
    const bool drop =
        it->second.log_id == log_id &&
        (still_held == nullptr || still_held->FindOperation(it->second.operation_id) == nullptr);
    it = drop ? progress_.erase(it) : std::next(it);
  }
}

void EventLogFeed::CountFindings(const std::vector<diagnose::Finding>& findings) {
  for (const diagnose::Finding& finding : findings) {
    if (finding.suppressed) {
      ++totals_.findings_suppressed[finding.id];
    } else {
      ++totals_.findings[{finding.id, std::string(diagnose::SeverityName(finding.severity))}];
    }
  }
}

void EventLogFeed::Suppress(std::vector<diagnose::Finding>& findings,
                            const std::optional<AirflowTask>& task) const {
  if (options_.suppressions.empty()) return;
  std::optional<diagnose::SuppressionTask> identity;
  if (task) identity = diagnose::SuppressionTask{task->dag_id, task->task_id};
  diagnose::ApplySuppressions(findings, options_.suppressions, identity, today_);
}

void EventLogFeed::AnnounceExpiredSuppressions() {
  for (std::size_t i = 0; i < options_.suppressions.size(); ++i) {
    const diagnose::Suppression& suppression = options_.suppressions[i];
    if (expiry_announced_[i] || !suppression.ExpiredOn(today_)) continue;
    expiry_announced_[i] = true;
    spdlog::warn("rules file: {}", diagnose::ExpiredMessage(suppression));
  }
}

void EventLogFeed::Publish(const std::vector<ApplicationFigures>& figures) {
  EventLogFeedHeld held{applications_.size(), progress_.size()};
  for (const diagnose::Suppression& suppression : options_.suppressions) {
    ++(suppression.ExpiredOn(today_) ? held.suppressions_expired : held.suppressions_active);
  }
  metrics_->Publish(totals_, held, figures);
  std::lock_guard lock(mu_);
  counters_ = totals_;
}

}  // namespace sparktrace::feed
