#include "feed/feed_intake.h"

#include <spdlog/spdlog.h>

#include <utility>
#include <variant>

namespace sparktrace::feed {

FeedIntake::FeedIntake(std::unique_ptr<listener::eventlog::EventLogScanner> scanner,
                       std::unique_ptr<listener::rest::RestPoller> rest,
                       std::shared_ptr<EventPushEndpoint> push, FeedApplications& applications,
                       EventLogFeedCounters& totals, LogRestarted log_restarted)
    : scanner_(std::move(scanner)),
      rest_(std::move(rest)),
      push_(std::move(push)),
      applications_(applications),
      totals_(totals),
      log_restarted_(std::move(log_restarted)) {}

void FeedIntake::Poll() {
  ApplyPushes();
  // Poll returns true while a log still has bytes beyond its per-poll budget.
  while (scanner_ && scanner_->Poll(*this)) {
  }
  if (rest_) PollRest();
}

void FeedIntake::ApplyPushes() {
  if (!push_) return;
  for (PushedBatch& batch : push_->TakeAll()) {
    FeedApplication& application = applications_.Of("push:" + batch.stream);
    for (const listener::events::SparkEvent& event : batch.events) applications_.Apply(application, event);
  }
}

void FeedIntake::PollRest() {
  listener::rest::RestPollResult polled = rest_->Poll();
  for (const Error& error : polled.errors) spdlog::debug("--spark-ui: {}", error.message);
  totals_.rest_events += polled.events.size();
  totals_.rest_errors += polled.errors.size();
  for (listener::rest::RestEvent& rest_event : polled.events) {
    // One model per application attempt, apart from the event logs' (keyed by path).
    applications_.Apply(
        applications_.Of("spark-ui:" + rest_event.application_id + "/" + rest_event.attempt_id.value_or("")),
        rest_event.event);
  }
}

listener::eventlog::LineVerdict FeedIntake::OnLine(const listener::eventlog::LogIdentity& log,
                                                   std::string_view line,
                                                   const listener::eventlog::LinePosition& /*position*/) {
  auto event = parser_.Parse(line);
  ++totals_.lines;
  if (!event.ok()) {
    ++totals_.malformed_lines;
    return listener::eventlog::LineVerdict::kCorrupt;
  }
  if (std::holds_alternative<listener::events::IgnoredEvent>(*event))
    return listener::eventlog::LineVerdict::kAccepted;
  applications_.Apply(applications_.Of(log.id), *event);
  return listener::eventlog::LineVerdict::kAccepted;
}

void FeedIntake::OnLogRestarted(const listener::eventlog::LogIdentity& log, std::uint64_t generation,
                                std::string_view reason) {
  spdlog::info("event log {} restarted (generation {}): {}", log.id, generation, reason);
  // A rewritten log is read from its start again: modelled afresh, once the old model is ended.
  log_restarted_(log.id);
}

void FeedIntake::OnLogCompleted(const listener::eventlog::LogIdentity& log) {
  spdlog::debug("event log {} is complete", log.id);
  applications_.LogCompleted(log.id);
}

}  // namespace sparktrace::feed
