// OperationProgress: Spark 4's execution_progress kept per operation, thinned into span events.
#include "tracing/connect/operation_progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace sparktrace::tracing::connect {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

spark_connect::ResponseInfo ProgressResponseForThinning(std::vector<spark_connect::StageProgress> stages,
                                                        std::int64_t inflight) {
  spark_connect::ResponseInfo response;
  response.kind = spark_connect::ResponseKind::kExecutionProgress;
  response.stages = std::move(stages);
  response.num_inflight_tasks = inflight;
  return response;
}

// One stage of 100 tasks with `done` completed.
spark_connect::ResponseInfo TasksDoneForThinning(std::int64_t done) {
  return ProgressResponseForThinning({{7, 100, done, done * 10, done == 100}}, 100 - done);
}

ProgressOptions ThinningOptions(milliseconds interval, std::size_t max_events) {
  ProgressOptions options;
  options.event_interval = interval;
  options.max_events = max_events;
  options.snapshot_interval = milliseconds(2000);
  return options;
}

std::vector<std::int64_t> TasksDoneOfSamples(const OperationProgress& progress) {
  std::vector<std::int64_t> done;
  for (const ProgressSample& sample : progress.Samples()) done.push_back(sample.totals.tasks_done);
  return done;
}

TEST(OperationProgressTest, NoUpdateMeansNoProgress) {
  const OperationProgress progress;
  EXPECT_FALSE(progress.any());
  EXPECT_TRUE(progress.Samples().empty());
  EXPECT_EQ(progress.thinned(), 0u);
}

TEST(OperationProgressTest, TotalsSumTheStagesOfTheLatestResponse) {
  OperationProgress progress;
  const ProgressOptions options = ThinningOptions(milliseconds(1000), 8);
  const Clock::time_point t0 = Clock::now();
  progress.Update(ProgressResponseForThinning({{1, 10, 10, 500, true}, {2, 4, 1, 0, false}}, 3), t0, options);
  // The next response lists every stage again (Spark sends them all): it replaces, never adds up.
  progress.Update(
      ProgressResponseForThinning({{1, 10, 10, 500, true}, {2, 4, 3, 0, false}, {3, 2, 0, 0, false}}, 1),
      t0 + milliseconds(10), options);
  const ProgressTotals& latest = progress.latest();
  EXPECT_EQ(latest.stages_done, 1);
  EXPECT_EQ(latest.stages_total, 3);
  EXPECT_EQ(latest.tasks_done, 13);
  EXPECT_EQ(latest.tasks_total, 16);
  EXPECT_EQ(latest.input_bytes_read, 500);
  EXPECT_EQ(latest.inflight_tasks, 1);
  EXPECT_EQ(progress.stages().size(), 3u);
  EXPECT_EQ(progress.updates(), 2u);
}

TEST(OperationProgressTest, AtMostOneEventPerIntervalAndTheLastAlwaysKept) {
  OperationProgress progress;
  const ProgressOptions options = ThinningOptions(milliseconds(1000), 32);
  const Clock::time_point t0 = Clock::now();
  // Every 400 ms: the ones 1 s or more after the last kept are kept, and the very last.
  for (std::int64_t i = 0; i <= 6; ++i)
    progress.Update(TasksDoneForThinning(i * 10), t0 + milliseconds(400 * i), options);
  // Kept: t=0 (first), t=1200 (>= 1000 after 0), t=2400 (>= 1000 after 1200); t=2400 is also the last.
  EXPECT_EQ(TasksDoneOfSamples(progress), (std::vector<std::int64_t>{0, 30, 60}));
  EXPECT_EQ(progress.thinned(), 4u);

  progress.Update(TasksDoneForThinning(70), t0 + milliseconds(2800), options);
  // Too soon after 2400 to be kept on its own, but the last so far: shown as the last event.
  EXPECT_EQ(TasksDoneOfSamples(progress), (std::vector<std::int64_t>{0, 30, 60, 70}));
  EXPECT_EQ(progress.thinned(), 4u);
  progress.Update(TasksDoneForThinning(80), t0 + milliseconds(3000), options);
  EXPECT_EQ(TasksDoneOfSamples(progress), (std::vector<std::int64_t>{0, 30, 60, 80}));
  EXPECT_EQ(progress.thinned(), 5u);
}

TEST(OperationProgressTest, AtMostMaxEventsSpreadOverTheWholeOperation) {
  OperationProgress progress;
  const ProgressOptions options = ThinningOptions(milliseconds(1), 4);
  const Clock::time_point t0 = Clock::now();
  // One update a millisecond. Three samples fill the room (one slot stays for the last); at t=3
  // every second one goes and the interval becomes 2 ms, at t=6 4 ms.
  for (std::int64_t i = 0; i <= 10; ++i)
    progress.Update(TasksDoneForThinning(i * 10), t0 + milliseconds(i), options);
  EXPECT_EQ(TasksDoneOfSamples(progress), (std::vector<std::int64_t>{0, 40, 80, 100}));
  EXPECT_EQ(progress.updates(), 11u);
  EXPECT_EQ(progress.thinned(), 7u);

  // However many updates come, the samples stay within the bound, the first and the last in them.
  for (std::int64_t i = 11; i <= 5000; ++i)
    progress.Update(TasksDoneForThinning(i % 100), t0 + milliseconds(i), options);
  const std::vector<ProgressSample> samples = progress.Samples();
  ASSERT_LE(samples.size(), 4u);
  EXPECT_EQ(samples.front().at, t0);
  EXPECT_EQ(samples.back().at, t0 + milliseconds(5000));
  EXPECT_EQ(progress.thinned(), 5001u - samples.size());
}

TEST(OperationProgressTest, ASingleUpdateIsBothFirstAndLast) {
  OperationProgress progress;
  progress.Update(TasksDoneForThinning(40), Clock::now(), ThinningOptions(milliseconds(1000), 2));
  EXPECT_EQ(TasksDoneOfSamples(progress), (std::vector<std::int64_t>{40}));
  EXPECT_EQ(progress.thinned(), 0u);
}

TEST(OperationProgressTest, SnapshotsAtTheFirstUpdateThenAtMostPerInterval) {
  OperationProgress progress;
  const ProgressOptions options = ThinningOptions(milliseconds(1000), 8);  // snapshots every 2 s
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(progress.TakeSnapshotTurn(t0, options));
  EXPECT_FALSE(progress.TakeSnapshotTurn(t0 + milliseconds(1999), options));
  EXPECT_TRUE(progress.TakeSnapshotTurn(t0 + milliseconds(2000), options));
  EXPECT_FALSE(progress.TakeSnapshotTurn(t0 + milliseconds(2500), options));
}

TEST(OperationProgressTest, StagesTheDecoderLeftOutAreCounted) {
  OperationProgress progress;
  spark_connect::ResponseInfo response = TasksDoneForThinning(5);
  response.dropped_stages = 12;
  progress.Update(response, Clock::now(), ThinningOptions(milliseconds(1000), 8));
  EXPECT_EQ(progress.stages_dropped(), 12u);
}

}  // namespace
}  // namespace sparktrace::tracing::connect
