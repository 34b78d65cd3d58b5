// The what-if simulator's input from the listener's model (diagnose/what_if_of_model.h), on a real
// event log: Apache Spark's LargeBlocks test log (application_1553914137147_0018), whose executors
// arrived 10.3 s after its start while its first job waited.

#include "diagnose/what_if_of_model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "diagnose/what_if/what_if_estimates.h"
#include "listener/correlate/application_model.h"
#include "listener/events/event_parser.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::diagnose {
namespace {

namespace test_data = listener::events::test_data;

std::optional<listener::correlate::ApplicationModel> RealModel(const std::string& name) {
  const std::optional<std::filesystem::path> data_dir = test_data::FindDataDir();
  if (!data_dir) return std::nullopt;
  std::string why;
  const std::optional<std::string> content = test_data::ReadLogFile(*data_dir / "spark-events" / name, why);
  EXPECT_TRUE(content.has_value()) << why;
  if (!content) return std::nullopt;
  listener::correlate::ApplicationModel model;
  listener::events::EventParser parser;
  for (std::string_view line : test_data::SplitLines(*content)) {
    Result<listener::events::SparkEvent> event = parser.Parse(line);
    EXPECT_TRUE(event.ok()) << event.error().ToString();
    if (event.ok()) model.Apply(*event);
  }
  return model;
}

TEST(WhatIfOfModel, RealLogWithLateExecutors) {
  const std::optional<listener::correlate::ApplicationModel> model =
      RealModel("application_1553914137147_0018");
  if (!model) GTEST_SKIP() << test_data::DataDirMissingMessage();
  const what_if::AttemptInput input = WhatIfInputOfApplication(*model);
  EXPECT_DOUBLE_EQ(input.start_ms, 1554755984286.0);
  EXPECT_DOUBLE_EQ(input.end_ms, 1554756046454.0);
  ASSERT_EQ(input.jobs.size(), 3u);
  for (const what_if::JobInput& job : input.jobs) {
    ASSERT_EQ(job.stages.size(), 1u);
    EXPECT_EQ(job.stages[0].task_count, 2);
    EXPECT_EQ(job.stages[0].task_ms.size(), 2u);  // every duration, as the log has them
  }
  ASSERT_FALSE(input.slots.empty());
  EXPECT_DOUBLE_EQ(input.slots.front().at_ms, input.start_ms + 10310);  // the first executor
  EXPECT_GT(input.slots_per_executor, 0);
  EXPECT_GT(input.peak_executors, 0);

  const std::vector<what_if::WhatIfEstimate> estimates = what_if::EstimateWhatIf(input);
  ASSERT_FALSE(estimates.empty());
  const what_if::WhatIfEstimate& ready = estimates.front();
  EXPECT_EQ(ready.name, "executors-ready");
  EXPECT_DOUBLE_EQ(ready.measured_ms, 62168);
  // The first job waited for the executors; ready at the start it would not have (at most the
  // 10.3 s of resource wait is saved).
  EXPECT_GT(ready.saving_ms, 5'000);
  EXPECT_LE(ready.saving_ms, 10'310);
}

}  // namespace
}  // namespace sparktrace::diagnose
