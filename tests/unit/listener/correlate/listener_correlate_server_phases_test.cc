// The Spark Connect server's own split of an operation (connect_server_phases.h), from the times of
// its operation events as ApplicationModel keeps them.
#include "listener/correlate/connect_server_phases.h"

#include <gtest/gtest.h>

namespace sparktrace::listener::correlate {
namespace {

TEST(ConnectServerPhases, EachPhaseIsTheTimeBetweenItsTwoEvents) {
  ConnectOperationRecord operation;
  operation.started_ms = 1'000;
  operation.analyzed_ms = 1'040;
  operation.ready_ms = 1'100;
  operation.finished_ms = 9'100;
  operation.closed_ms = 9'600;
  const ConnectServerPhases phases = ServerPhasesOf(operation);
  EXPECT_EQ(phases.analysis_ms, 40);
  EXPECT_EQ(phases.planning_ms, 60);
  EXPECT_EQ(phases.execution_ms, 8'000);
  EXPECT_EQ(phases.results_ms, 500);
}

TEST(ConnectServerPhases, AFailedOrCanceledExecutionEndsThereAndMissingEventsAreUnknown) {
  ConnectOperationRecord failed;
  failed.started_ms = 1'000;
  failed.ready_ms = 1'200;
  failed.failed_ms = 1'700;
  failed.closed_ms = 1'750;
  ConnectServerPhases phases = ServerPhasesOf(failed);
  EXPECT_FALSE(phases.analysis_ms.has_value());  // no Analyzed: failed in analysis, or not logged
  EXPECT_FALSE(phases.planning_ms.has_value());
  EXPECT_EQ(phases.execution_ms, 500);
  EXPECT_EQ(phases.results_ms, 50);

  ConnectOperationRecord canceled;
  canceled.ready_ms = 2'000;
  canceled.canceled_ms = 2'300;
  EXPECT_EQ(ServerPhasesOf(canceled).execution_ms, 300);

  EXPECT_FALSE(ServerPhasesOf(ConnectOperationRecord{}).any());
}

TEST(ConnectServerPhases, EventsOutOfOrderGiveZeroNotANegativePhase) {
  ConnectOperationRecord stepped;
  stepped.started_ms = 5'000;
  stepped.analyzed_ms = 4'990;  // the server's clock stepped back
  EXPECT_EQ(ServerPhasesOf(stepped).analysis_ms, 0);
}

}  // namespace
}  // namespace sparktrace::listener::correlate
