#include "feed/feed_applications.h"

#include <limits>

namespace sparktrace::feed {

using listener::events::EpochMillis;

bool Over(const FeedApplication& application) {
  return application.model.application().end_ms.has_value() || application.log_completed ||
         application.log_abandoned;
}

void NoteAirflowTask(FeedApplication& application, std::optional<EpochMillis> started_ms,
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

FeedApplication* FeedApplications::Find(const std::string& source_key) {
  auto found = applications_.find(source_key);
  return found == applications_.end() ? nullptr : &found->second;
}

void FeedApplications::Apply(FeedApplication& application, const listener::events::SparkEvent& event) {
  application.model.Apply(event);
  application.events.Add(event, application.model);
  application.changed = true;
  application.trace_changed = true;
  application.metrics_changed = true;
  ++totals_.events;
}

void FeedApplications::LogCompleted(const std::string& source_key) {
  FeedApplication* application = Find(source_key);
  if (application == nullptr) return;
  application->log_completed = true;
  application->trace_changed = true;  // its final version, without "running"
  application->metrics_changed = true;
}

}  // namespace sparktrace::feed
