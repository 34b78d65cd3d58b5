#pragma once
// Retention: what the feed holds stays bounded however long an application runs (a Spark Connect
// server is one application that runs for weeks). Once an operation's spans are final (closed, all
// its jobs ended, `operation_retention` of driver time ago) it is forgotten with its jobs
// (ApplicationModel::ForgetFinishedBefore), its phases folded into fixed totals first; an
// application that ended is dropped `completed_application_retention` after its end was seen, and
// one whose event log was rewritten at once. Whatever is dropped has its final spans submitted
// first.
//
// Not synchronised: the feed thread owns it.

#include <chrono>
#include <string>

#include "feed/feed_applications.h"
#include "feed/feed_metrics.h"
#include "feed/trace_emitter.h"

namespace sparktrace::feed {

class FeedRetention {
 public:
  // `applications`, `emitter` and `totals` (the feed's counters) outlive it.
  FeedRetention(std::chrono::milliseconds operation_retention,
                std::chrono::milliseconds completed_application_retention, FeedApplications& applications,
                TraceEmitter& emitter, EventLogFeedCounters& totals);
  FeedRetention(const FeedRetention&) = delete;
  FeedRetention& operator=(const FeedRetention&) = delete;

  // After each poll's emission: drops the applications past their grace, forgets what is final.
  void Apply();
  // The event log of `source_key` was rewritten and is read again from its start: ends what the
  // old model left open and drops it.
  void DropAbandoned(const std::string& source_key);

 private:
  const std::chrono::milliseconds operation_retention_;
  const std::chrono::milliseconds completed_application_retention_;
  FeedApplications& applications_;
  TraceEmitter& emitter_;
  EventLogFeedCounters& totals_;
};

}  // namespace sparktrace::feed
