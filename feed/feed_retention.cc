#include "feed/feed_retention.h"

#include <cstdint>

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::ApplicationRecord;
using listener::events::EpochMillis;

namespace {

// Forgetting scans the whole model: done when the cutoff moved on by at least this much.
constexpr EpochMillis kForgetStepMs = 60'000;

}  // namespace

FeedRetention::FeedRetention(std::chrono::milliseconds operation_retention,
                             std::chrono::milliseconds completed_application_retention,
                             FeedApplications& applications, TraceEmitter& emitter,
                             EventLogFeedCounters& totals)
    : operation_retention_(operation_retention),
      completed_application_retention_(completed_application_retention),
      applications_(applications),
      emitter_(emitter),
      totals_(totals) {}

void FeedRetention::Apply() {
  const FeedClock::time_point now = FeedClock::now();
  auto& all = applications_.all();
  for (auto it = all.begin(); it != all.end();) {
    const std::string& key = it->first;
    FeedApplication& application = it->second;
    ApplicationModel& model = application.model;
    const ApplicationRecord& app = model.application();
    if (!application.completed_at && (application.log_completed || app.end_ms))
      application.completed_at = now;
    if (application.completed_at && now - *application.completed_at >= completed_application_retention_) {
      // Its operations were emitted in this poll; its trace too unless throttled.
      if (application.trace_changed) emitter_.EmitApplicationTrace(application);
      emitter_.ForgetProgressOf(key, nullptr);
      ++totals_.applications_forgotten;
      it = all.erase(it);
      continue;
    }
    ++it;
    if (!app.last_event_ms) continue;
    const EpochMillis cutoff = *app.last_event_ms - operation_retention_.count();
    if (application.forgotten_before_ms && cutoff < *application.forgotten_before_ms + kForgetStepMs)
      continue;
    if (app.start_ms && cutoff <= *app.start_ms) continue;
    // What is about to be dropped must be in the store in its final state first.
    if (application.trace_changed) {
      emitter_.EmitApplicationTrace(application);
      application.trace_emitted_at = now;
    }
    application.phases.FoldUntil(model, cutoff);
    const ApplicationModel::ForgetStats forgot = model.ForgetFinishedBefore(cutoff);
    application.forgotten_before_ms = cutoff;
    totals_.operations_forgotten += static_cast<std::uint64_t>(forgot.operations);
    totals_.jobs_forgotten += static_cast<std::uint64_t>(forgot.jobs);
    if (forgot.operations > 0) emitter_.ForgetProgressOf(key, &model);
  }
}

void FeedRetention::DropAbandoned(const std::string& source_key) {
  // Its spans were submitted live; they are owed a final version, with what is still open ended.
  if (FeedApplication* application = applications_.Find(source_key)) {
    application->log_abandoned = true;
    application->changed = true;
    application->trace_changed = true;
    emitter_.EmitChangedOperations();
    emitter_.EmitApplicationTrace(*application);
    applications_.all().erase(source_key);
  }
  emitter_.ForgetProgressOf(source_key, nullptr);
}

}  // namespace sparktrace::feed
