#pragma once
// A GET of the trace view's API as the admin server hands one over (no headers), for the API tests.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "admin/http_types.h"
#include "traceview/trace_view_api.h"

namespace sparktrace::traceview_test {

// The API's answer; a failed expectation and status 599 when it does not serve `path`.
inline admin::HttpResponse GetFrom(traceview::TraceViewApi& api, const std::string& path,
                                   const std::string& query = "") {
  admin::HttpRequest request;
  request.path = path;
  request.query = query;
  request.header = [](const std::string&) { return std::optional<std::string>(); };
  auto response = api.Handle(request);
  EXPECT_TRUE(response.has_value()) << path;
  return response.value_or(admin::HttpResponse{599, "", "", {}});
}

}  // namespace sparktrace::traceview_test
