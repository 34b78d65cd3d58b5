#pragma once
// Internal to sparktrace_listener_events: the "Event" values the parser reads, by name.
//
// Core events are written with their simple class name ("SparkListenerTaskEnd"); every other event
// (SQL, Spark Connect) with its fully-qualified class name. Names are matched exactly.

#include <cstdint>
#include <string_view>

namespace sparktrace::listener::events {

enum class EventType : std::uint8_t {
  kNotModelled,  // known but not needed, or unknown: reported as IgnoredEvent
  kLogStart,
  kApplicationStart,
  kApplicationEnd,
  kEnvironmentUpdate,
  kExecutorAdded,
  kExecutorRemoved,
  kJobStart,
  kJobEnd,
  kStageSubmitted,
  kStageCompleted,
  kTaskStart,
  kTaskEnd,
  kSqlExecutionStart,
  kSqlExecutionEnd,
  kSqlAdaptiveExecutionUpdate,
  kSqlAdaptiveMetricUpdates,
  kDriverAccumUpdates,
  kConnectSessionStarted,
  kConnectSessionClosed,
  kConnectOperationStarted,
  kConnectOperationAnalyzed,
  kConnectOperationReadyForExecution,
  kConnectOperationFinished,
  kConnectOperationFailed,
  kConnectOperationCanceled,
  kConnectOperationClosed,
};

EventType EventTypeFromName(std::string_view name);

}  // namespace sparktrace::listener::events
