#include "spark_connect/method.h"

#include <array>
#include <utility>

namespace sparktrace::spark_connect {
namespace {

constexpr std::string_view kServicePrefix = "/spark.connect.SparkConnectService/";

constexpr std::array<std::pair<std::string_view, Method>, 12> kMethods = {{
    {"ExecutePlan", Method::kExecutePlan},
    {"AnalyzePlan", Method::kAnalyzePlan},
    {"Config", Method::kConfig},
    {"AddArtifacts", Method::kAddArtifacts},
    {"ArtifactStatus", Method::kArtifactStatus},
    {"Interrupt", Method::kInterrupt},
    {"ReattachExecute", Method::kReattachExecute},
    {"ReleaseExecute", Method::kReleaseExecute},
    {"ReleaseSession", Method::kReleaseSession},
    {"FetchErrorDetails", Method::kFetchErrorDetails},
    {"CloneSession", Method::kCloneSession},
    {"GetStatus", Method::kGetStatus},
}};

}  // namespace

Method ClassifyMethod(std::string_view path) {
  if (!path.starts_with(kServicePrefix)) {
    return Method::kUnknown;
  }
  const std::string_view name = path.substr(kServicePrefix.size());
  for (const auto& [method_name, method] : kMethods) {
    if (name == method_name) {
      return method;
    }
  }
  return Method::kUnknown;
}

std::string_view MethodName(Method method) {
  for (const auto& [method_name, known] : kMethods) {
    if (known == method) {
      return method_name;
    }
  }
  return "unknown";
}

bool RespondsWithExecutePlanResponses(Method method) {
  return method == Method::kExecutePlan || method == Method::kReattachExecute;
}

}  // namespace sparktrace::spark_connect
