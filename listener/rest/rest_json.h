#pragma once
// Reads the JSON bodies of the driver REST API endpoints into rest_model.h values.
//
// Lenient where Spark versions differ (unknown keys are ignored, optional keys may be absent or
// null), strict where a wrong value would join wrongly: a body that is not JSON, not the expected
// top-level array/object, or has a required id missing or of the wrong type fails as a whole, with
// a message that names the field. Nothing is thrown.
//
// One RestJsonReader per thread (it reuses its parser's buffers between calls); not thread-safe.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "listener/rest/rest_model.h"

namespace sparktrace::listener::rest {

class RestJsonReader {
 public:
  RestJsonReader();
  ~RestJsonReader();
  RestJsonReader(const RestJsonReader&) = delete;
  RestJsonReader& operator=(const RestJsonReader&) = delete;

  // /applications: an array of ApplicationInfo.
  Result<std::vector<RestApplication>> Applications(std::string_view body);
  // /applications/<app>/jobs: an array of JobData.
  Result<std::vector<RestJob>> Jobs(std::string_view body);
  // /applications/<app>/stages: an array of StageData.
  Result<std::vector<RestStage>> Stages(std::string_view body);
  // /applications/<app>/allexecutors (or /executors): an array of ExecutorSummary.
  Result<std::vector<RestExecutor>> Executors(std::string_view body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sparktrace::listener::rest
