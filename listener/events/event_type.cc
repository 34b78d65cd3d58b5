#include "listener/events/event_type.h"

#include <array>
#include <cstddef>

namespace sparktrace::listener::events {
namespace {

constexpr std::string_view kSqlPackage = "org.apache.spark.sql.execution.ui.";
constexpr std::string_view kConnectPackage = "org.apache.spark.sql.connect.service.";

struct NamedType {
  std::string_view name;
  EventType type;
};

// Most frequent first: task events are nine lines in ten of a typical log.
constexpr std::array<NamedType, 12> kCoreEvents = {{
    {"SparkListenerTaskEnd", EventType::kTaskEnd},
    {"SparkListenerTaskStart", EventType::kTaskStart},
    {"SparkListenerStageSubmitted", EventType::kStageSubmitted},
    {"SparkListenerStageCompleted", EventType::kStageCompleted},
    {"SparkListenerJobStart", EventType::kJobStart},
    {"SparkListenerJobEnd", EventType::kJobEnd},
    {"SparkListenerExecutorAdded", EventType::kExecutorAdded},
    {"SparkListenerExecutorRemoved", EventType::kExecutorRemoved},
    {"SparkListenerApplicationStart", EventType::kApplicationStart},
    {"SparkListenerApplicationEnd", EventType::kApplicationEnd},
    {"SparkListenerLogStart", EventType::kLogStart},
    {"SparkListenerEnvironmentUpdate", EventType::kEnvironmentUpdate},
}};

constexpr std::array<NamedType, 5> kSqlEvents = {{
    {"SparkListenerSQLExecutionStart", EventType::kSqlExecutionStart},
    {"SparkListenerSQLExecutionEnd", EventType::kSqlExecutionEnd},
    {"SparkListenerDriverAccumUpdates", EventType::kDriverAccumUpdates},
    {"SparkListenerSQLAdaptiveExecutionUpdate", EventType::kSqlAdaptiveExecutionUpdate},
    {"SparkListenerSQLAdaptiveSQLMetricUpdates", EventType::kSqlAdaptiveMetricUpdates},
}};

constexpr std::array<NamedType, 9> kConnectEvents = {{
    {"SparkListenerConnectOperationStarted", EventType::kConnectOperationStarted},
    {"SparkListenerConnectOperationAnalyzed", EventType::kConnectOperationAnalyzed},
    {"SparkListenerConnectOperationReadyForExecution", EventType::kConnectOperationReadyForExecution},
    {"SparkListenerConnectOperationFinished", EventType::kConnectOperationFinished},
    {"SparkListenerConnectOperationFailed", EventType::kConnectOperationFailed},
    {"SparkListenerConnectOperationCanceled", EventType::kConnectOperationCanceled},
    {"SparkListenerConnectOperationClosed", EventType::kConnectOperationClosed},
    {"SparkListenerConnectSessionStarted", EventType::kConnectSessionStarted},
    {"SparkListenerConnectSessionClosed", EventType::kConnectSessionClosed},
}};

template <std::size_t N>
EventType Find(const std::array<NamedType, N>& table, std::string_view name) {
  for (const NamedType& entry : table) {
    if (entry.name == name) return entry.type;
  }
  return EventType::kNotModelled;
}

}  // namespace

EventType EventTypeFromName(std::string_view name) {
  if (name.starts_with(kSqlPackage)) return Find(kSqlEvents, name.substr(kSqlPackage.size()));
  if (name.starts_with(kConnectPackage)) return Find(kConnectEvents, name.substr(kConnectPackage.size()));
  return Find(kCoreEvents, name);
}

}  // namespace sparktrace::listener::events
