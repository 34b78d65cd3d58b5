#include "listener/events/spark_event.h"

#include <type_traits>

namespace sparktrace::listener::events {

std::string_view SparkEventName(const SparkEvent& event) {
  return std::visit(
      [](const auto& alternative) -> std::string_view {
        using Alternative = std::decay_t<decltype(alternative)>;
        if constexpr (std::is_same_v<Alternative, IgnoredEvent>) {
          return alternative.type;
        } else if constexpr (std::is_same_v<Alternative, LogStart>) {
          return "LogStart";
        } else if constexpr (std::is_same_v<Alternative, ApplicationStart>) {
          return "ApplicationStart";
        } else if constexpr (std::is_same_v<Alternative, ApplicationEnd>) {
          return "ApplicationEnd";
        } else if constexpr (std::is_same_v<Alternative, ExecutorAdded>) {
          return "ExecutorAdded";
        } else if constexpr (std::is_same_v<Alternative, ExecutorRemoved>) {
          return "ExecutorRemoved";
        } else if constexpr (std::is_same_v<Alternative, JobStart>) {
          return "JobStart";
        } else if constexpr (std::is_same_v<Alternative, JobEnd>) {
          return "JobEnd";
        } else if constexpr (std::is_same_v<Alternative, StageSubmitted>) {
          return "StageSubmitted";
        } else if constexpr (std::is_same_v<Alternative, StageCompleted>) {
          return "StageCompleted";
        } else if constexpr (std::is_same_v<Alternative, TaskStart>) {
          return "TaskStart";
        } else if constexpr (std::is_same_v<Alternative, TaskEnd>) {
          return "TaskEnd";
        } else if constexpr (std::is_same_v<Alternative, SqlExecutionStart>) {
          return "SqlExecutionStart";
        } else if constexpr (std::is_same_v<Alternative, SqlExecutionEnd>) {
          return "SqlExecutionEnd";
        } else if constexpr (std::is_same_v<Alternative, SqlAdaptiveExecutionUpdate>) {
          return "SqlAdaptiveExecutionUpdate";
        } else if constexpr (std::is_same_v<Alternative, SqlAdaptiveMetricUpdates>) {
          return "SqlAdaptiveMetricUpdates";
        } else if constexpr (std::is_same_v<Alternative, DriverAccumUpdates>) {
          return "DriverAccumUpdates";
        } else if constexpr (std::is_same_v<Alternative, ConnectSessionEvent>) {
          return "ConnectSession";
        } else if constexpr (std::is_same_v<Alternative, ConnectOperationEvent>) {
          return "ConnectOperation";
        } else {
          static_assert(std::is_same_v<Alternative, EnvironmentUpdate>, "name every alternative");
          return "EnvironmentUpdate";
        }
      },
      event);
}

std::string_view TaskEndReasonName(TaskEndReason reason) {
  switch (reason) {
    case TaskEndReason::kSuccess:
      return "Success";
    case TaskEndReason::kResubmitted:
      return "Resubmitted";
    case TaskEndReason::kFetchFailed:
      return "FetchFailed";
    case TaskEndReason::kExceptionFailure:
      return "ExceptionFailure";
    case TaskEndReason::kTaskResultLost:
      return "TaskResultLost";
    case TaskEndReason::kTaskKilled:
      return "TaskKilled";
    case TaskEndReason::kTaskCommitDenied:
      return "TaskCommitDenied";
    case TaskEndReason::kExecutorLostFailure:
      return "ExecutorLostFailure";
    case TaskEndReason::kUnknownReason:
      return "UnknownReason";
    case TaskEndReason::kOther:
      return "Other";
  }
  return "Other";
}

std::string_view ConnectOperationPhaseName(ConnectOperationPhase phase) {
  switch (phase) {
    case ConnectOperationPhase::kStarted:
      return "started";
    case ConnectOperationPhase::kAnalyzed:
      return "analyzed";
    case ConnectOperationPhase::kReadyForExecution:
      return "ready_for_execution";
    case ConnectOperationPhase::kFinished:
      return "finished";
    case ConnectOperationPhase::kFailed:
      return "failed";
    case ConnectOperationPhase::kCanceled:
      return "canceled";
    case ConnectOperationPhase::kClosed:
      return "closed";
  }
  return "unknown";
}

}  // namespace sparktrace::listener::events
