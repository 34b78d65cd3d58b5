#pragma once
// The SparkConnectService methods sparktrace recognises, from the gRPC method path.

#include <cstdint>
#include <string_view>

namespace sparktrace::spark_connect {

enum class Method : std::uint8_t {
  kUnknown,  // another service, or a method newer than this list: forwarded, never decoded
  kExecutePlan,
  kAnalyzePlan,
  kConfig,
  kAddArtifacts,
  kArtifactStatus,
  kInterrupt,
  kReattachExecute,
  kReleaseExecute,
  kReleaseSession,     // Spark 4.0
  kFetchErrorDetails,  // Spark 4.0
  kCloneSession,       // Spark 4.1
  kGetStatus,          // Spark 4.2
};

// "/spark.connect.SparkConnectService/ExecutePlan" → kExecutePlan. Exact, case-sensitive match,
// as gRPC routes; anything else is kUnknown.
Method ClassifyMethod(std::string_view path);

// "ExecutePlan", …, "unknown".
std::string_view MethodName(Method method);

// ExecutePlan and ReattachExecute both answer with a stream of ExecutePlanResponse.
bool RespondsWithExecutePlanResponses(Method method);

}  // namespace sparktrace::spark_connect
