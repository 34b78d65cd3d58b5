#pragma once
// Intake: what the driver did, from each source the feed has, applied to the applications' models
// (feed_applications.h) in arrival order on each poll: the events pushed to POST /api/v1/events
// (event_push_endpoint.h, one model per stream), then every line the followed event logs have
// (listener/eventlog, parsed by listener/events, one model per log), then the driver's REST API
// (listener/rest, one model per application attempt). A log rewritten from its start goes to
// `log_restarted`, which ends and drops its old model before the new lines come.
//
// Not synchronised: the feed thread owns it; `log_restarted` is called on it, during Poll().

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "feed/event_push_endpoint.h"
#include "feed/feed_applications.h"
#include "feed/feed_metrics.h"
#include "feed/feed_parser_options.h"
#include "listener/eventlog/event_log_scanner.h"
#include "listener/eventlog/event_log_sink.h"
#include "listener/events/event_parser.h"
#include "listener/rest/rest_poller.h"

namespace sparktrace::feed {

class FeedIntake final : private listener::eventlog::EventLogSink {
 public:
  using LogRestarted = std::function<void(const std::string& source_key)>;

  // Each source may be null (not configured). `applications` and `totals` (the feed's counters)
  // outlive it.
  FeedIntake(std::unique_ptr<listener::eventlog::EventLogScanner> scanner,
             std::unique_ptr<listener::rest::RestPoller> rest, std::shared_ptr<EventPushEndpoint> push,
             FeedApplications& applications, EventLogFeedCounters& totals, LogRestarted log_restarted);
  FeedIntake(const FeedIntake&) = delete;
  FeedIntake& operator=(const FeedIntake&) = delete;

  // Applies what every source has now.
  void Poll();

 private:
  void ApplyPushes();
  void PollRest();

  listener::eventlog::LineVerdict OnLine(const listener::eventlog::LogIdentity& log, std::string_view line,
                                         const listener::eventlog::LinePosition& position) override;
  void OnLogRestarted(const listener::eventlog::LogIdentity& log, std::uint64_t generation,
                      std::string_view reason) override;
  void OnLogCompleted(const listener::eventlog::LogIdentity& log) override;

  std::unique_ptr<listener::eventlog::EventLogScanner> scanner_;  // null without directories
  std::unique_ptr<listener::rest::RestPoller> rest_;              // null without --spark-ui
  const std::shared_ptr<EventPushEndpoint> push_;                 // null without options.push
  FeedApplications& applications_;
  EventLogFeedCounters& totals_;
  const LogRestarted log_restarted_;
  listener::events::EventParser parser_{FeedParserOptions()};
};

}  // namespace sparktrace::feed
