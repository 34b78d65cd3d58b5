// What-if estimates from stored spans (traceview/what_if_of_spans.h): hand-built spans whose
// answer is computed by hand, and a real log's spans against the estimates from its model.

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/what_if/what_if_estimates.h"
#include "diagnose/what_if_of_model.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/span_builder.h"
#include "listener/events/event_parser.h"
#include "tests/unit/listener/events/listener_event_test_data.h"
#include "traceview/what_if_of_spans.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

constexpr std::uint64_t kMs = 1'000'000;

tracing::Span SpanOf(std::string name, std::uint8_t id, std::uint8_t parent, std::uint64_t start_ms,
                     std::uint64_t end_ms) {
  tracing::Span span;
  span.name = std::move(name);
  span.span_id[7] = id;
  span.parent_span_id[7] = parent;
  span.start_time_unix_nano = start_ms * kMs;
  span.end_time_unix_nano = end_ms * kMs;
  return span;
}

// One executor of 2 cores for the whole second; job 0 runs stage 0: 4 tasks of 100 ms in 400 ms.
std::vector<tracing::Span> HandBuilt() {
  tracing::Span app = SpanOf("spark.application", 1, 0, 0, 1000);
  app.attributes.push_back({std::string(tracing::kExecutorsActiveAtStart), std::int64_t{1}});
  app.attributes.push_back({std::string(tracing::kExecutorCoresAtStart), std::int64_t{2}});
  tracing::Span job = SpanOf("spark.job", 2, 1, 0, 400);
  job.attributes.push_back({"spark.job.id", std::int64_t{0}});
  tracing::Span stage = SpanOf("spark.stage", 3, 2, 0, 400);
  stage.attributes.push_back({"spark.stage.id", std::int64_t{0}});
  stage.attributes.push_back({"spark.stage.tasks_ended", std::int64_t{4}});
  stage.attributes.push_back(
      {std::string(tracing::kStageTaskDurationProfile), std::vector<std::string>(21, "100")});
  return {app, job, stage};
}

TEST(TraceviewWhatIfOfSpans, HandBuiltAttempt) {
  const std::vector<tracing::Span> spans = HandBuilt();
  const diagnose::what_if::AttemptInput input = WhatIfInputOfSpans(spans, 0, 1000);
  ASSERT_EQ(input.jobs.size(), 1u);
  ASSERT_EQ(input.jobs[0].stages.size(), 1u);
  EXPECT_EQ(input.jobs[0].stages[0].task_count, 4);
  EXPECT_EQ(input.jobs[0].stages[0].task_time_ms, 400);
  EXPECT_EQ(input.peak_executors, 1);
  EXPECT_EQ(input.slots_per_executor, 2);

  std::vector<std::string> names;
  double two_executors = -1;
  for (const diagnose::what_if::WhatIfEstimate& estimate : EstimatesOfSpans(spans, 0, 1000)) {
    names.push_back(estimate.name);
    if (estimate.name == "executors-2") two_executors = estimate.estimated_ms;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"executors-ready", "executors-1", "executors-2", "executors-4"}));
  // Simulated: today 2 waves of 100 ms on 2 slots (800 ms in all: the stage's 200 ms after its tasks
  // is lost), 1 wave on 4 (700 ms); anchored by ratio, 1000 × 700 / 800.
  EXPECT_DOUBLE_EQ(two_executors, 875);
  const nlohmann::ordered_json json = WhatIfJsonOfSpans(spans, 0, 1000);
  EXPECT_EQ(json["estimates"][2]["sentence"], "with 2 executors from the start: ~0.9 s instead of 1.0 s");
  EXPECT_TRUE(json["replay"].is_null());
}

TEST(TraceviewWhatIfOfSpans, NoEstimateWithoutTheExecutorsCores) {
  std::vector<tracing::Span> spans = HandBuilt();
  spans[0].attributes.clear();
  EXPECT_TRUE(EstimatesOfSpans(spans, 0, 1000).empty());
  EXPECT_TRUE(WhatIfJsonOfSpans(spans, 0, 1000).is_null());
}

// The spans the feed builds for a real log give the estimates the model gives, within the
// profile's resolution (21 quantiles instead of every duration).
TEST(TraceviewWhatIfOfSpans, RealLogSpansAgreeWithTheModel) {
  const std::optional<std::filesystem::path> data_dir = listener::events::test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << listener::events::test_data::DataDirMissingMessage();
  std::string why;
  const std::optional<std::string> content = listener::events::test_data::ReadLogFile(
      *data_dir / "spark-events/application_1553914137147_0018", why);
  ASSERT_TRUE(content) << why;
  listener::correlate::ApplicationModel model;
  listener::events::EventParser parser;
  for (std::string_view line : listener::events::test_data::SplitLines(*content)) {
    Result<listener::events::SparkEvent> event = parser.Parse(line);
    ASSERT_TRUE(event.ok());
    model.Apply(*event);
  }
  const std::vector<diagnose::what_if::WhatIfEstimate> from_model =
      diagnose::what_if::EstimateWhatIf(diagnose::WhatIfInputOfApplication(model));
  const listener::correlate::BuiltSpans built = listener::correlate::BuildApplicationSpans(model);
  const tracing::Span& root = built.spans.front();
  const std::vector<diagnose::what_if::WhatIfEstimate> from_spans =
      EstimatesOfSpans(built.spans, static_cast<double>(root.start_time_unix_nano) / 1e6,
                       static_cast<double>(root.end_time_unix_nano) / 1e6);
  ASSERT_EQ(from_spans.size(), from_model.size());
  for (std::size_t i = 0; i < from_model.size(); ++i) {
    EXPECT_EQ(from_spans[i].name, from_model[i].name);
    EXPECT_NEAR(from_spans[i].estimated_ms, from_model[i].estimated_ms, 0.05 * from_model[i].measured_ms)
        << from_model[i].name;
  }
}

}  // namespace
}  // namespace sparktrace::traceview
