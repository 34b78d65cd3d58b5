// The regression finding's detection (diagnose/regression/regression.h): both thresholds, the phases that
// grew ranked, nothing without a baseline or while the run is going on.

#include "diagnose/regression/regression.h"

#include <gtest/gtest.h>

#include <vector>

namespace sparktrace::diagnose::regression {
namespace {

constexpr double kMinute = 60'000;

RunSummary MakeRun(std::string run_id, double start_ms, double wall_ms, double resource_wait_ms,
                   bool current = false, std::string state = "success") {
  RunSummary run;
  run.run_id = std::move(run_id);
  run.state = std::move(state);
  run.start_ms = start_ms;
  run.wall_ms = wall_ms;
  run.phases[static_cast<std::size_t>(ViewPhase::kResourceWait)] = resource_wait_ms;
  run.phases[static_cast<std::size_t>(ViewPhase::kCompute)] = wall_ms - resource_wait_ms;
  run.current = current;
  return run;
}

History Of(double current_wall_ms, double current_wait_ms) {
  return ComputeHistory({MakeRun("r1", 1, 10 * kMinute, 1 * kMinute),
                         MakeRun("r2", 2, 8 * kMinute, 1 * kMinute),
                         MakeRun("r3", 3, 12 * kMinute, 2 * kMinute),
                         MakeRun("r4", 4, current_wall_ms, current_wait_ms, /*current=*/true)});
}

TEST(Regression, NamesThePhaseThatGrewMost) {
  // Median 10 min; this run 14 min (+40 %, +4 min), its resource wait 5 min against a median of 1 min.
  const auto regression = DetectRegression(Of(14 * kMinute, 5 * kMinute), /*finished=*/true);
  ASSERT_TRUE(regression.has_value());
  EXPECT_EQ(regression->baseline_runs, 3u);
  EXPECT_DOUBLE_EQ(regression->median_ms, 10 * kMinute);
  EXPECT_DOUBLE_EQ(regression->delta_ms, 4 * kMinute);
  EXPECT_FALSE(regression->critical);
  ASSERT_FALSE(regression->grown.empty());
  EXPECT_EQ(regression->grown.front().phase, ViewPhase::kResourceWait);
  EXPECT_EQ(RegressionTitle(*regression),
            "took 14m 00s, 40 % longer than its median of 10m 00s over 3 successful runs; resource wait grew "
            "most (+4m 00s)");
  EXPECT_EQ(RegressionEvidence(*regression).front(),
            "resource wait: 5m 00s against a median of 1m 00s (+4m 00s)");
}

TEST(Regression, BothThresholdsMustHold) {
  // +20 %: under the share, though over a minute.
  EXPECT_FALSE(DetectRegression(Of(12 * kMinute, 1 * kMinute), true).has_value());
  // A short task 50 % slower by 30 s: under the time.
  const History short_task =
      ComputeHistory({MakeRun("r1", 1, kMinute, 0), MakeRun("r2", 2, 1.5 * kMinute, 0, true)});
  EXPECT_FALSE(DetectRegression(short_task, true).has_value());
  // Custom thresholds take it.
  EXPECT_TRUE(DetectRegression(short_task, true, {0.25, 20}).has_value());
}

TEST(Regression, TwiceTheBaselineIsCritical) {
  const auto regression = DetectRegression(Of(21 * kMinute, 1 * kMinute), true);
  ASSERT_TRUE(regression.has_value());
  EXPECT_TRUE(regression->critical);
}

TEST(Regression, NothingWithoutABaselineOrBeforeTheEnd) {
  EXPECT_FALSE(DetectRegression(Of(30 * kMinute, 1 * kMinute), /*finished=*/false).has_value());
  const History first_run = ComputeHistory({MakeRun("r1", 1, 30 * kMinute, 0, true)});
  EXPECT_FALSE(DetectRegression(first_run, true).has_value());
  // Earlier runs that failed are no baseline.
  const History after_failures = ComputeHistory(
      {MakeRun("r1", 1, 5 * kMinute, 0, false, "failed"), MakeRun("r2", 2, 30 * kMinute, 0, true)});
  EXPECT_FALSE(DetectRegression(after_failures, true).has_value());
}

}  // namespace
}  // namespace sparktrace::diagnose::regression
