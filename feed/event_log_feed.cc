#include "feed/event_log_feed.h"

#include <algorithm>
#include <utility>

#include "feed/changed_figures.h"
#include "feed/feed_applications.h"
#include "feed/feed_findings.h"
#include "feed/feed_intake.h"
#include "feed/feed_retention.h"
#include "feed/trace_emitter.h"
#include "listener/eventlog/event_log_scanner.h"
#include "listener/rest/rest_poller.h"

namespace sparktrace::feed {

Result<std::unique_ptr<EventLogFeed>> EventLogFeed::Start(EventLogFeedOptions options,
                                                          FindOperationSpan find_operation_span,
                                                          tracing::SpanSink& spans) {
  auto sampler = tracing::Sampler::Create(options.sample_ratio);
  if (!sampler.ok()) return sampler.error();
  std::unique_ptr<listener::eventlog::EventLogScanner> scanner;
  if (!options.directories.empty()) {
    listener::eventlog::ScannerOptions scanner_options;
    scanner_options.directories = options.directories;
    auto created = listener::eventlog::EventLogScanner::Create(std::move(scanner_options));
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
                           tracing::SpanSink& spans,
                           std::unique_ptr<listener::eventlog::EventLogScanner> scanner,
                           std::unique_ptr<listener::rest::RestPoller> rest_poller, tracing::Sampler sampler)
    : options_(std::move(options)) {
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
  applications_ = std::make_unique<FeedApplications>(totals_);
  findings_ = std::make_unique<FeedFindings>(options_.rules, options_.suppressions, totals_);
  emitter_ = std::make_unique<TraceEmitter>(std::move(find_operation_span), spans, sampler,
                                            options_.application_trace_interval, *applications_, *findings_,
                                            totals_, options_.sql_spans);
  retention_ =
      std::make_unique<FeedRetention>(options_.operation_retention, options_.completed_application_retention,
                                      *applications_, *emitter_, totals_);
  intake_ =
      std::make_unique<FeedIntake>(std::move(scanner), std::move(rest_poller), push_, *applications_, totals_,
                                   [this](const std::string& key) { retention_->DropAbandoned(key); });
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
  // Today's suppressions first: a log restarted during intake emits (and diagnoses) its old model.
  findings_->BeginPoll(diagnose::UtcDay(options_.wall_clock()));
  intake_->Poll();
  emitter_->EmitChangedOperations();
  emitter_->EmitApplicationTraces(final_poll);
  // Before retention: an application dropped in this poll still publishes its final figures.
  const std::vector<ApplicationFigures> figures = TakeChangedFigures(*applications_);
  retention_->Apply();
  Publish(figures);
}

void EventLogFeed::Publish(const std::vector<ApplicationFigures>& figures) {
  EventLogFeedHeld held{applications_->size(), emitter_->operations_held()};
  findings_->CountSuppressions(held);
  metrics_->Publish(totals_, held, figures);
  std::lock_guard lock(mu_);
  counters_ = totals_;
}

}  // namespace sparktrace::feed
