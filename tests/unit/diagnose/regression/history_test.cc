// History and the baseline (diagnose/regression/history.h): medians over earlier successful runs, which
// runs are kept, and the per-phase comparison.

#include "diagnose/regression/history.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sparktrace::diagnose::regression {
namespace {

// A run whose wall time and compute phase are both `wall` (the other phases 0).
RunSummary MakeRun(std::string run_id, double start_ms, std::string state, double wall,
                   bool current = false) {
  RunSummary run;
  run.run_id = std::move(run_id);
  run.start_ms = start_ms;
  run.state = std::move(state);
  run.wall_ms = wall;
  run.phases[static_cast<std::size_t>(ViewPhase::kCompute)] = wall;
  run.href = "/tasks/etl/load/" + run.run_id + "/1";
  run.current = current;
  return run;
}

std::vector<std::string> RunIds(const History& history) {
  std::vector<std::string> ids;
  for (const RunSummary& run : history.runs) ids.push_back(run.run_id);
  return ids;
}

double Compute(const std::array<double, kViewPhaseCount>& phases) {
  return phases[static_cast<std::size_t>(ViewPhase::kCompute)];
}

// Earlier successes of 10, 30, 20 ms: median 20; the current 50 is 30 over it in compute.
TEST(TraceviewHistoryTest, MedianOfAnOddCountAndTheComparison) {
  const History history =
      ComputeHistory({MakeRun("c", 400, "success", 50, true), MakeRun("a", 100, "success", 10),
                      MakeRun("b", 200, "success", 30), MakeRun("a2", 300, "success", 20)});
  EXPECT_EQ(RunIds(history), (std::vector<std::string>{"a", "b", "a2", "c"}));  // oldest first
  ASSERT_TRUE(history.baseline.has_value());
  EXPECT_EQ(history.baseline->runs, 3u);
  EXPECT_EQ(history.baseline->median_wall_ms, 20);
  EXPECT_EQ(Compute(history.baseline->phases), 20);
  ASSERT_EQ(history.comparison.size(), kViewPhaseCount);
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    EXPECT_EQ(history.comparison[phase].phase, static_cast<ViewPhase>(phase));
  }
  const PhaseDelta& compute = history.comparison[static_cast<std::size_t>(ViewPhase::kCompute)];
  EXPECT_EQ(compute.current_ms, 50);
  EXPECT_EQ(compute.median_ms, 20);
  EXPECT_EQ(compute.delta_ms, 30);
  EXPECT_EQ(history.comparison[static_cast<std::size_t>(ViewPhase::kIdle)].delta_ms, 0);
}

// 10, 40, 20, 30: median (20 + 30) / 2 = 25.
TEST(TraceviewHistoryTest, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  const History history = ComputeHistory({MakeRun("a", 1, "success", 10), MakeRun("b", 2, "success", 40),
                                          MakeRun("c", 3, "success", 20), MakeRun("d", 4, "success", 30),
                                          MakeRun("e", 5, "running", 99, true)});
  ASSERT_TRUE(history.baseline.has_value());
  EXPECT_EQ(history.baseline->runs, 4u);
  EXPECT_EQ(history.baseline->median_wall_ms, 25);
  EXPECT_EQ(Compute(history.baseline->phases), 25);
}

// Successes 10 and 30 (median 20); the failed 1000 and the running 500 are shown but not counted.
TEST(TraceviewHistoryTest, OnlySuccessfulRunsMakeTheBaseline) {
  const History history = ComputeHistory({MakeRun("a", 1, "success", 10), MakeRun("b", 2, "failed", 1000),
                                          MakeRun("c", 3, "success", 30), MakeRun("d", 4, "running", 500),
                                          MakeRun("e", 5, "failed", 7, true)});
  EXPECT_EQ(history.runs.size(), 5u);
  ASSERT_TRUE(history.baseline.has_value());
  EXPECT_EQ(history.baseline->runs, 2u);
  EXPECT_EQ(history.baseline->median_wall_ms, 20);
}

// Viewing an older attempt: the successes that started after it (300, 400) are left out.
TEST(TraceviewHistoryTest, LaterRunsAreNotPartOfTheBaseline) {
  const History history =
      ComputeHistory({MakeRun("a", 100, "success", 10), MakeRun("b", 200, "success", 50, true),
                      MakeRun("c", 300, "success", 300), MakeRun("d", 400, "success", 400)});
  ASSERT_TRUE(history.baseline.has_value());
  EXPECT_EQ(history.baseline->runs, 1u);
  EXPECT_EQ(history.baseline->median_wall_ms, 10);
  EXPECT_EQ(history.comparison[static_cast<std::size_t>(ViewPhase::kCompute)].delta_ms, 40);
}

TEST(TraceviewHistoryTest, NoBaselineWithoutEarlierSuccess) {
  const History first = ComputeHistory({MakeRun("a", 1, "success", 10, true)});
  EXPECT_FALSE(first.baseline.has_value());
  EXPECT_TRUE(first.comparison.empty());
  const History after_failures =
      ComputeHistory({MakeRun("a", 1, "failed", 10), MakeRun("b", 2, "success", 10, true)});
  EXPECT_FALSE(after_failures.baseline.has_value());
  EXPECT_TRUE(after_failures.comparison.empty());
  const History no_current = ComputeHistory({MakeRun("a", 1, "success", 10), MakeRun("b", 2, "success", 10)});
  EXPECT_EQ(no_current.runs.size(), 2u);
  EXPECT_FALSE(no_current.baseline.has_value());
}

// Five runs, keep 3: the latest three, or, when the current one is older, it and the latest two.
TEST(TraceviewHistoryTest, MaxRunsKeepsTheLatestAndTheCurrent) {
  const auto runs = [](std::size_t current) {
    std::vector<RunSummary> all;
    for (std::size_t i = 0; i < 5; ++i) {
      all.push_back(MakeRun("r" + std::to_string(i), static_cast<double>(i), "success", 10, i == current));
    }
    return all;
  };
  EXPECT_EQ(RunIds(ComputeHistory(runs(4), 3)), (std::vector<std::string>{"r2", "r3", "r4"}));
  EXPECT_EQ(RunIds(ComputeHistory(runs(3), 3)), (std::vector<std::string>{"r2", "r3", "r4"}));
  const History old_current = ComputeHistory(runs(0), 3);
  EXPECT_EQ(RunIds(old_current), (std::vector<std::string>{"r0", "r3", "r4"}));
  EXPECT_TRUE(old_current.runs.front().current);
  EXPECT_FALSE(old_current.baseline.has_value()) << "nothing kept started before r0";
  EXPECT_EQ(RunIds(ComputeHistory(runs(1), 0)), (std::vector<std::string>{"r1"}));
  EXPECT_EQ(ComputeHistory(runs(9), 30).runs.size(), 5u);
}

}  // namespace
}  // namespace sparktrace::diagnose::regression
