// The simulator's cluster size (Scenario::executors, cores_per_executor; `sim generate-log
// --executors`): the same workload at two sizes, as the what-if evaluation needs it.

#include <gtest/gtest.h>

#include "tests/unit/sim/eventlog/sim_eventlog_test_support.h"

namespace sparktrace::sim::eventlog::testing {
namespace {

ParsedLog AtSize(int executors, int cores) {
  OfflineLogOptions options = LogOptions("clean", 1.0, 11);
  options.scenario.executors = executors;
  options.scenario.cores_per_executor = cores;
  return GenerateAndParse(options);
}

TEST(SimEventLogClusterSize, SameWorkloadAtTwoSizes) {
  const ParsedLog four = AtSize(4, 4);
  const ParsedLog eight = AtSize(8, 2);
  ASSERT_EQ(four.malformed, 0) << four.first_malformed;
  ASSERT_EQ(eight.malformed, 0) << eight.first_malformed;
  EXPECT_EQ(four.log.knobs.executors, 4);
  EXPECT_EQ(eight.log.knobs.executors, 8);
  EXPECT_EQ(eight.log.knobs.cores_per_executor, 2);
  EXPECT_EQ(four.events.at("ExecutorAdded"), 4);
  EXPECT_EQ(eight.events.at("ExecutorAdded"), 8);
  for (const listener::correlate::ExecutorRecord& executor : eight.model.executors())
    EXPECT_EQ(executor.total_cores, 2);
  // The same jobs, stages and tasks: only where and when the tasks ran differs.
  EXPECT_EQ(four.events.at("TaskEnd"), eight.events.at("TaskEnd"));
  ASSERT_EQ(four.model.stages().size(), eight.model.stages().size());
  auto stage = eight.model.stages().begin();
  for (const auto& [key, record] : four.model.stages()) {
    EXPECT_EQ(record.num_tasks, stage->second.num_tasks);
    EXPECT_EQ(record.tasks.input_bytes, (stage++)->second.tasks.input_bytes);
  }
}

TEST(SimEventLogClusterSize, TwiceTheSlotsRunTheClean4x4WorkloadFaster) {
  const ParsedLog four = AtSize(4, 4);
  const ParsedLog eight = AtSize(8, 4);
  const auto wall = [](const ParsedLog& log) {
    return *log.model.application().end_ms - *log.model.application().start_ms;
  };
  EXPECT_LT(wall(eight), wall(four));
}

}  // namespace
}  // namespace sparktrace::sim::eventlog::testing
