#include "listener/feed/event_log_feed.h"

#include <spdlog/spdlog.h>

#include "listener/correlate/span_builder.h"

namespace sparktrace::listener {
namespace {

// An operation the proxy never saw (it ran before the proxy started, or through another one) is
// looked up on a few polls, then left alone.
constexpr int kMaxFailedLookups = 5;

}  // namespace

Result<std::unique_ptr<EventLogFeed>> EventLogFeed::Start(EventLogFeedOptions options,
                                                          FindOperationSpan find_operation_span,
                                                          tracing::SpanSink& spans) {
  std::unique_ptr<eventlog::EventLogScanner> scanner;
  if (!options.directories.empty()) {
    eventlog::ScannerOptions scanner_options;
    scanner_options.directories = options.directories;
    auto created = eventlog::EventLogScanner::Create(std::move(scanner_options));
    if (!created.ok()) return created.error();
    scanner = std::move(*created);
  }
  std::unique_ptr<rest::RestPoller> rest_poller;
  if (!options.spark_ui_url.empty()) {
    rest::RestPollerOptions rest_options;
    rest_options.spark_ui_url = options.spark_ui_url;
    auto created = rest::RestPoller::Create(std::move(rest_options));
    if (!created.ok()) return created.error();
    rest_poller = std::move(*created);
  }
  std::unique_ptr<EventLogFeed> feed(new EventLogFeed(std::move(options), std::move(find_operation_span),
                                                      spans, std::move(scanner),
                                                      std::move(rest_poller)));  // NOLINT
  feed->thread_ = std::thread([raw = feed.get()] { raw->Run(); });
  return feed;
}

EventLogFeed::EventLogFeed(EventLogFeedOptions options, FindOperationSpan find_operation_span,
                           tracing::SpanSink& spans, std::unique_ptr<eventlog::EventLogScanner> scanner,
                           std::unique_ptr<rest::RestPoller> rest_poller)
    : options_(std::move(options)),
      find_operation_span_(std::move(find_operation_span)),
      spans_(spans),
      scanner_(std::move(scanner)),
      rest_(std::move(rest_poller)) {}

EventLogFeed::~EventLogFeed() {
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
    lock.unlock();
    PollOnce();
    lock.lock();
    polls_done_ = std::max(polls_done_, requested);
    polled_.notify_all();
    if (stopping_) break;
    wake_.wait_for(lock, options_.poll_interval, [&] { return stopping_ || poll_requests_ > polls_done_; });
  }
  // One last pass so that what the driver wrote just before a shutdown is not lost.
  lock.unlock();
  PollOnce();
}

void EventLogFeed::PollOnce() {
  // Poll returns true while a log still has bytes beyond its per-poll budget.
  while (scanner_ && scanner_->Poll(*this)) {
  }
  if (rest_) PollRest();
  EmitChangedApplications();
}

void EventLogFeed::PollRest() {
  rest::RestPollResult polled = rest_->Poll();
  for (const Error& error : polled.errors) spdlog::debug("--spark-ui: {}", error.message);
  {
    std::lock_guard lock(mu_);
    counters_.rest_events += polled.events.size();
    counters_.rest_errors += polled.errors.size();
  }
  for (rest::RestEvent& rest_event : polled.events) {
    // One model per application attempt, apart from the event logs' (keyed by path).
    Application& application =
        applications_["spark-ui:" + rest_event.application_id + "/" + rest_event.attempt_id.value_or("")];
    application.model.Apply(rest_event.event);
    application.changed = true;
  }
}

eventlog::LineVerdict EventLogFeed::OnLine(const eventlog::LogIdentity& log, std::string_view line,
                                           const eventlog::LinePosition& /*position*/) {
  auto event = parser_.Parse(line);
  std::lock_guard lock(mu_);
  ++counters_.lines;
  if (!event.ok()) {
    ++counters_.malformed_lines;
    return eventlog::LineVerdict::kCorrupt;
  }
  if (std::holds_alternative<IgnoredEvent>(*event)) return eventlog::LineVerdict::kAccepted;
  ++counters_.events;
  Application& application = applications_[log.id];
  application.model.Apply(*event);
  application.changed = true;
  return eventlog::LineVerdict::kAccepted;
}

void EventLogFeed::OnLogRestarted(const eventlog::LogIdentity& log, std::uint64_t generation,
                                  std::string_view reason) {
  spdlog::info("event log {} restarted (generation {}): {}", log.id, generation, reason);
  // A rewritten log is read from its start again: model it afresh.
  applications_.erase(log.id);
}

void EventLogFeed::OnLogCompleted(const eventlog::LogIdentity& log) {
  spdlog::debug("event log {} is complete", log.id);
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
    for (const std::string& operation_id : operation_ids)
      EmitOperation(log_id, application.model, operation_id);
  }
}

void EventLogFeed::EmitOperation(const std::string& log_id, const ApplicationModel& model,
                                 const std::string& operation_id) {
  OperationProgress& progress = progress_[log_id + "/" + operation_id];
  progress.log_id = log_id;
  progress.operation_id = operation_id;
  const std::vector<std::int32_t> jobs = model.JobsOfOperation(operation_id);
  bool all_ended = true;
  for (std::int32_t job_id : jobs) {
    auto job = model.jobs().find(job_id);
    if (job == model.jobs().end() || !job->second.completion_ms) all_ended = false;
  }
  // Finished and emitted in that state already: nothing new to say.
  if (progress.emitted && progress.all_jobs_ended && progress.jobs_emitted == jobs.size() && all_ended)
    return;
  if (progress.lookups_failed >= kMaxFailedLookups) return;

  const auto target = find_operation_span_(operation_id);
  if (!target) {
    if (++progress.lookups_failed == kMaxFailedLookups) {
      std::lock_guard lock(mu_);
      ++counters_.operations_unknown;
    }
    return;
  }
  if (!target->sampled) return;
  BuiltSpans built =
      BuildOperationSpans(model, operation_id, OperationSpanRef{target->trace_id, target->span_id});
  const std::size_t count = built.spans.size();
  for (auto& span : built.spans) spans_.Submit(std::move(span));
  {
    std::lock_guard lock(mu_);
    if (!progress.emitted) ++counters_.operations_traced;
    counters_.spans_submitted += count;
  }
  progress.emitted = true;
  progress.jobs_emitted = jobs.size();
  progress.all_jobs_ended = all_ended;
}

}  // namespace sparktrace::listener
