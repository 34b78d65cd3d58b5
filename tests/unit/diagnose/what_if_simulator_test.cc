// The what-if simulator (diagnose/what_if) on hand-built DAGs whose answer is computed by hand.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "diagnose/what_if/schedule_simulator.h"
#include "diagnose/what_if/what_if_estimates.h"

namespace sparktrace::diagnose::what_if {
namespace {

constexpr double kAlways = std::numeric_limits<double>::lowest();

StageInput Stage(std::int32_t id, std::vector<std::int64_t> tasks, double submitted, double completed,
                 std::vector<std::int32_t> parents = {}) {
  StageInput stage;
  stage.stage_id = id;
  stage.parent_ids = std::move(parents);
  stage.task_count = static_cast<std::int64_t>(tasks.size());
  stage.task_time_ms = std::accumulate(tasks.begin(), tasks.end(), std::int64_t{0});
  stage.task_ms = std::move(tasks);
  stage.submission_ms = submitted;
  stage.completion_ms = completed;
  return stage;
}

AttemptInput OneJob(std::vector<StageInput> stages, double job_end, double window_end) {
  AttemptInput input;
  input.start_ms = 0;
  input.end_ms = window_end;
  JobInput job;
  job.job_id = 0;
  job.submission_ms = 0;
  job.completion_ms = job_end;
  job.stages = std::move(stages);
  input.jobs.push_back(std::move(job));
  return input;
}

double WallOn(const AttemptInput& input, std::int64_t slots) {
  return Simulate(input, SimulationOptions{{SlotStep{kAlways, slots}}, {}}).wall_ms;
}

TEST(WhatIfSimulator, ChainRunsStageAfterStage) {
  // 0: two tasks of 100 ms → 1: one task of 50 ms. Measured on 2 slots: [0, 150], window 200.
  const AttemptInput input = OneJob({Stage(0, {100, 100}, 0, 100), Stage(1, {50}, 100, 150, {0})}, 150, 200);
  EXPECT_DOUBLE_EQ(WallOn(input, 2), 200);  // as measured
  EXPECT_DOUBLE_EQ(WallOn(input, 1), 300);  // 200 + 50, and the driver's 50 ms after the job
}

TEST(WhatIfSimulator, FanInWaitsForTheLastParentInFifoOrder) {
  // A (300 ms) and B (100 ms) → C (10 ms).
  const AttemptInput input =
      OneJob({Stage(0, {300}, 0, 300), Stage(1, {100}, 0, 100), Stage(2, {10}, 300, 310, {0, 1})}, 310, 310);
  EXPECT_DOUBLE_EQ(WallOn(input, 2), 310);
  EXPECT_DOUBLE_EQ(WallOn(input, 1), 410);  // A, then B, then C on one slot
}

TEST(WhatIfSimulator, MoreTasksThanSlotsRunInWaves) {
  const AttemptInput input = OneJob({Stage(0, {100, 100, 100, 100, 100}, 0, 300)}, 300, 300);
  EXPECT_DOUBLE_EQ(WallOn(input, 2), 300);  // ⌈5 / 2⌉ = 3 waves
  EXPECT_DOUBLE_EQ(WallOn(input, 5), 100);
  EXPECT_DOUBLE_EQ(WallOn(input, 16), 100);
}

TEST(WhatIfSimulator, DriverDelaysAndTailsAreKept) {
  // Stage 1 submitted 20 ms after stage 0 completed; the job ends 30 ms after its last stage.
  const AttemptInput input = OneJob({Stage(0, {100}, 0, 100), Stage(1, {100}, 120, 220, {0})}, 250, 250);
  EXPECT_DOUBLE_EQ(WallOn(input, 1), 250);
}

TEST(WhatIfSimulator, OverlappingJobsShareTheSlots) {
  AttemptInput input;
  input.end_ms = 200;
  for (std::int32_t id : {0, 1}) {
    JobInput job;
    job.job_id = id;
    job.submission_ms = 0;
    job.completion_ms = 200;
    job.stages.push_back(Stage(id, {200}, 0, 200));
    input.jobs.push_back(job);
  }
  EXPECT_DOUBLE_EQ(WallOn(input, 2), 200);
  EXPECT_DOUBLE_EQ(WallOn(input, 1), 400);
}

TEST(WhatIfSimulator, SlotsArriveAtTheirOwnTimes) {
  // No slot until 1000 ms, then two: the stage waits; ready at the start it does not.
  AttemptInput input = OneJob({Stage(0, {100, 100}, 0, 1100)}, 1100, 1200);
  input.slots = {{0, 0}, {1000, 2}};
  input.slots_per_executor = 2;
  input.peak_executors = 1;
  EXPECT_DOUBLE_EQ(Simulate(input, SimulationOptions{input.slots, {}}).wall_ms, 1200);
  const std::vector<WhatIfEstimate> estimates = EstimateWhatIf(input);
  ASSERT_FALSE(estimates.empty());
  EXPECT_EQ(estimates[0].name, "executors-ready");
  EXPECT_DOUBLE_EQ(estimates[0].simulated_today_ms, 1200);
  EXPECT_DOUBLE_EQ(estimates[0].simulated_ms, 200);
  EXPECT_DOUBLE_EQ(estimates[0].estimated_ms, 200);
  EXPECT_DOUBLE_EQ(estimates[0].saving_ms, 1000);
  EXPECT_EQ(estimates[0].answers, std::vector<std::string>{"resource-wait-long"});
}

TEST(WhatIfSimulator, TheDriversWaitForTheFirstExecutorIsLeftOutFromTheStart) {
  // The driver held the job back until the executor came at 1000 ms (as Spark's
  // minRegisteredResourcesRatio does): no stage waited, but the lead was resource wait.
  AttemptInput input = OneJob({Stage(0, {100}, 1200, 1300)}, 1300, 1400);
  input.jobs[0].submission_ms = 1200;
  input.slots = {{1000, 1}};
  input.slots_per_executor = 1;
  input.peak_executors = 1;
  EXPECT_DOUBLE_EQ(LeadWithoutSlots(input), 1000);
  const std::vector<WhatIfEstimate> estimates = EstimateWhatIf(input);
  ASSERT_EQ(estimates.size(), 4u);  // ready; 1 (½× and 1×), 2 and 4 executors
  EXPECT_DOUBLE_EQ(estimates[0].estimated_ms, 400);
  EXPECT_DOUBLE_EQ(estimates[1].estimated_ms, 400);
  // The executor came after the job was submitted: its stage waited 300 ms for it, which the
  // scenarios save (the driver was not waiting, so no lead is left out).
  input.slots = {{1500, 1}};
  input.end_ms = 1700;
  input.jobs[0].completion_ms = 1600;
  input.jobs[0].stages[0].completion_ms = 1600;
  EXPECT_DOUBLE_EQ(LeadWithoutSlots(input), 0);
  EXPECT_DOUBLE_EQ(EstimateWhatIf(input)[0].simulated_today_ms, 1700);
  EXPECT_DOUBLE_EQ(EstimateWhatIf(input)[0].estimated_ms, 1400);
}

TEST(WhatIfSimulator, NoSlotEverAssumesOne) {
  const AttemptInput input = OneJob({Stage(0, {100, 100}, 0, 100)}, 100, 100);
  EXPECT_DOUBLE_EQ(Simulate(input, SimulationOptions{}).wall_ms, 200);
}

TEST(WhatIfSimulator, ExecutorCountsAroundTodaysPeakAreDeduplicated) {
  AttemptInput input = OneJob({Stage(0, std::vector<std::int64_t>(8, 100), 0, 400)}, 400, 400);
  input.slots = {{0, 2}};
  input.slots_per_executor = 2;
  input.peak_executors = 1;  // ½× rounds to 1 as well
  std::vector<std::string> names;
  for (const WhatIfEstimate& estimate : EstimateWhatIf(input)) names.push_back(estimate.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"executors-ready", "executors-1", "executors-2", "executors-4"}));
  const std::vector<WhatIfEstimate> estimates = EstimateWhatIf(input);
  EXPECT_DOUBLE_EQ(estimates[3].estimated_ms, 100);  // 4 executors × 2 slots: one wave
  EXPECT_EQ(estimates[3].executors, 4);
  EXPECT_EQ(EstimateSentence(estimates[3]), "with 4 executors from the start: ~0.1 s instead of 0.4 s");
}

TEST(WhatIfSimulator, AnchoringsDiffer) {
  AttemptInput input = OneJob({Stage(0, {100, 100, 100, 100}, 0, 500)}, 500, 600);
  input.slots = {{kAlways, 1}};
  input.slots_per_executor = 1;
  input.peak_executors = 1;
  // Simulated today: 400 + 100 after the job (the 100 ms of driver overhead in the stage is lost).
  const double today = WallOn(input, 1);
  EXPECT_DOUBLE_EQ(today, 500);
  const auto two = [&](Anchoring anchoring) {
    for (const WhatIfEstimate& estimate : EstimateWhatIf(input, {anchoring})) {
      if (estimate.name == "executors-2") return estimate.estimated_ms;
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(two(Anchoring::kRaw), 300);         // 200 + 100
  EXPECT_DOUBLE_EQ(two(Anchoring::kDifference), 400);  // 600 − (500 − 300)
  EXPECT_DOUBLE_EQ(two(Anchoring::kRatio), 360);       // 600 × 300 / 500
}

TEST(WhatIfSimulator, WriteAtComputePaceScalesWritingStages) {
  StageInput compute = Stage(0, {500, 500}, 0, 500);
  compute.read_bytes = 10 << 20;
  StageInput write = Stage(1, {2000, 2000}, 500, 2500, {0});
  write.writes_output = true;
  write.read_bytes = 10 << 20;  // the same bytes took 4× the task time: ¼ at the compute pace
  AttemptInput input = OneJob({compute, write}, 2500, 2500);
  input.slots = {{kAlways, 2}};
  const auto factors = WriteAtComputePace(input);
  ASSERT_EQ(factors.size(), 1u);
  EXPECT_EQ(factors[0].first, 1);
  EXPECT_DOUBLE_EQ(factors[0].second, 0.25);
  const std::vector<WhatIfEstimate> estimates = EstimateWhatIf(input);
  ASSERT_EQ(estimates.back().name, "write-at-compute-pace");
  EXPECT_DOUBLE_EQ(estimates.back().estimated_ms, 1000);  // 500 + 2000 / 4
  EXPECT_EQ(estimates.back().answers, std::vector<std::string>{"s3-write-slow"});
}

TEST(WhatIfSimulator, NoWriteScenarioWithoutAWrite) {
  StageInput compute = Stage(0, {500}, 0, 500);
  compute.read_bytes = 10 << 20;
  AttemptInput input = OneJob({compute}, 500, 500);
  input.slots = {{kAlways, 1}};
  for (const WhatIfEstimate& estimate : EstimateWhatIf(input))
    EXPECT_NE(estimate.name, "write-at-compute-pace");
}

TEST(WhatIfSimulator, LargeStagesAreSimulatedInCappedUnits) {
  // 10,000 tasks of 10 ms on 10 slots: 10 s of work; 4096 units of 2–3 tasks each.
  AttemptInput input = OneJob({Stage(0, std::vector<std::int64_t>(10'000, 10), 0, 10'000)}, 10'000, 10'000);
  const SimulationResult result = Simulate(input, SimulationOptions{{SlotStep{kAlways, 10}}, {}});
  EXPECT_EQ(result.units, kMinUnitsPerStage);
  EXPECT_NEAR(result.wall_ms, 10'000, 30);
  EXPECT_EQ(UnitsPerStage(10'000, 2000), 8000);  // 4 × peak slots when that is more
  EXPECT_EQ(UnitsPerStage(3, 2000), 3);
}

TEST(WhatIfSimulator, AMillionTasksFromASampleStayCheap) {
  StageInput stage;
  stage.stage_id = 0;
  stage.task_count = 1'000'000;
  for (std::int64_t ms = 1; ms <= 100; ++ms) stage.task_ms.push_back(ms);  // a profile, not every task
  stage.completion_ms = 1e6;
  const std::vector<double> units = StageUnits(stage, UnitsPerStage(stage.task_count, 100));
  ASSERT_EQ(units.size(), static_cast<std::size_t>(kMinUnitsPerStage));
  const double total = std::accumulate(units.begin(), units.end(), 0.0);
  EXPECT_NEAR(total, 50.5e6, 1e3);  // the sample's mean (50.5 ms) × a million
  AttemptInput input = OneJob({stage}, 1e6, 1e6);
  const auto started = std::chrono::steady_clock::now();
  const SimulationResult result = Simulate(input, SimulationOptions{{SlotStep{kAlways, 100}}, {}});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_NEAR(result.job_groups_ms, 50.5e6 / 100, 50.5e6 / 100 * 0.01);
}

TEST(WhatIfSimulator, ReplayCheckUsesTheJobsAfterTheExecutorsArrived) {
  AttemptInput input;
  input.end_ms = 3000;
  input.slots = {{0, 1}, {1000, 2}};
  JobInput early;
  early.job_id = 0;
  early.completion_ms = 800;
  early.stages.push_back(Stage(0, {400, 400}, 0, 800));
  JobInput late;
  late.job_id = 1;
  late.submission_ms = 2000;
  late.completion_ms = 2150;
  late.stages.push_back(Stage(1, {100, 100}, 2000, 2150));
  input.jobs = {early, late};
  const std::optional<ReplayCheck> check = CheckAgainstSettledJobs(input);
  ASSERT_TRUE(check);
  EXPECT_DOUBLE_EQ(check->settled_at_ms, 1000);
  EXPECT_EQ(check->jobs, 1);
  EXPECT_DOUBLE_EQ(check->measured_ms, 150);
  EXPECT_DOUBLE_EQ(check->simulated_ms, 100);  // the stage's 50 ms after its tasks is not simulated
  input.slots = {{0, 2}};
  EXPECT_FALSE(CheckAgainstSettledJobs(input));  // no ramp-up: nothing to check
}

TEST(WhatIfSimulator, RoughDurations) {
  EXPECT_EQ(RoughDuration(112'000), "~1 min 52 s");
  EXPECT_EQ(RoughDuration(45'200), "~45 s");
  EXPECT_EQ(RoughDuration(4'240), "~4.2 s");
  EXPECT_EQ(RoughDuration(7'500'000), "~2 h 5 min");
}

}  // namespace
}  // namespace sparktrace::diagnose::what_if
