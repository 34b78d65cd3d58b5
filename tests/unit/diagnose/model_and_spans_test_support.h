#pragma once
// What the tests that hold `sparktrace diagnose`'s figures (read from the listener's model) against
// the page's (read from the spans the live feed builds of the same events) share: the real logs of
// every kind the data holds, a log's model, and the spans the feed builds of a model.

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/span_builder.h"
#include "listener/events/event_parser.h"
#include "tests/unit/listener/events/listener_event_test_data.h"
#include "tracing/span.h"

namespace sparktrace::diagnose::test_support {

// YARN, Kubernetes, local mode, dynamic allocation, executors lost, several attempts, Dataproc, a
// truncated log, spark-shell, and one application finished and still running.
inline constexpr std::array<std::string_view, 11> kRealLogs = {
    "spark-events/application_1553914137147_0018",
    "spark-events/app-20200706201101-0003",
    "spark-events/local-1596020211915",
    "spark-events-problems/eventlog_4nodes_8cores_dynamic_alloc.zstd",
    "spark-events-problems/tasks_executors_fail_compressed_eventlog.zstd",
    "spark-events-problems/multiple_attempts/attempt_2_eventlog.zstd",
    "spark-events-problems/dataproc.zstd",
    "spark-events-problems/truncated_eventlog",
    "spark-events-thirdparty/aws-emr-advisor/job_spark_shell",
    "spark-events-thirdparty/sparkscope/app-20231025121456-0004-eventLog-finished-exec-removed",
    "spark-events-thirdparty/sparkscope/app-20231025121456-0004-eventLog-running-incomplete"};

// The model of the log at `log` under `data_dir`, a corrupt line skipped as the feed skips it;
// nullopt, and the test failed, when the log cannot be read.
inline std::optional<listener::correlate::ApplicationModel> RealLogModel(
    const std::filesystem::path& data_dir, std::string_view log) {
  std::string why;
  const std::optional<std::string> content = listener::events::test_data::ReadLogFile(data_dir / log, why);
  EXPECT_TRUE(content) << why;
  if (!content) return std::nullopt;
  listener::correlate::ApplicationModel model;
  listener::events::EventParser parser;
  for (std::string_view line : listener::events::test_data::SplitLines(*content)) {
    Result<listener::events::SparkEvent> event = parser.Parse(line);
    if (event.ok()) model.Apply(std::move(*event));
  }
  return model;
}

// The spans of an operation live in the attempt's trace, under its span; any ids do here.
inline listener::correlate::OperationSpanRef AnyParent() {
  listener::correlate::OperationSpanRef parent;
  parent.trace[0] = 1;
  parent.parent[0] = 1;
  return parent;
}

// What the feed builds of the application: its own spans and each Connect operation's.
inline std::vector<tracing::Span> FeedSpansOf(const listener::correlate::ApplicationModel& model) {
  std::vector<tracing::Span> spans = listener::correlate::BuildApplicationSpans(model).spans;
  for (const auto& [id, operation] : model.operations()) {
    for (tracing::Span& span : listener::correlate::BuildOperationSpans(model, id, AnyParent()).spans)
      spans.push_back(std::move(span));
  }
  return spans;
}

}  // namespace sparktrace::diagnose::test_support
