// What a task report may change (tracing/airflow_report_ledger.h): only its own attempt's task span,
// one span context per attempt, and never what the attempt's earlier reports fixed.

#include "tracing/airflow_report_ledger.h"

#include <gtest/gtest.h>

#include <string>

namespace sparktrace::tracing {
namespace {

AirflowTaskReport LedgerReport(std::string state, std::int64_t try_number = 1) {
  AirflowTaskReport report;
  report.identity = AirflowIdentity{"etl", "load", "manual__1", try_number, -1};
  report.state = std::move(state);
  report.operator_class = "SparkSubmitOperator";
  report.hostname = "worker-1";
  report.start_unix_nano = 1'000;
  report.end_unix_nano = 5'000;
  return report;
}

TaskSpanContext ContextWithSpan(std::uint8_t last_byte) {
  TaskSpanContext context;
  context.trace_id[0] = 0x4b;
  context.span_id[7] = last_byte;
  return context;
}

std::string FieldOf(const Result<void>& admitted) {
  if (admitted.ok()) return "accepted";
  return admitted.error().message.substr(0, admitted.error().message.find(':'));
}

TEST(AirflowReportLedger, AnAttemptMayReportAgainAndGoOnUntilItFinishes) {
  AirflowReportLedger ledger(10);
  const TaskSpanContext context = ContextWithSpan(1);
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("running"), context)), "accepted");
  AirflowTaskReport later = LedgerReport("running");
  later.end_unix_nano = 7'000;
  later.hostname = "worker-2";  // a rescheduled or resumed try may run on another worker
  EXPECT_EQ(FieldOf(ledger.Admit(later, context)), "accepted");
  later.state = "success";
  later.end_unix_nano = 9'000;
  EXPECT_EQ(FieldOf(ledger.Admit(later, context)), "accepted");
  // A report repeated as it was (the plugin retries one it got no answer to).
  EXPECT_EQ(FieldOf(ledger.Admit(later, context)), "accepted");
  EXPECT_EQ(ledger.size(), 1u);
}

TEST(AirflowReportLedger, AFinishedStateIsFinal) {
  AirflowReportLedger ledger(10);
  const TaskSpanContext context = ContextWithSpan(1);
  ASSERT_TRUE(ledger.Admit(LedgerReport("success"), context).ok());
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("failed"), context)), "state");
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("running"), context)), "state");
  EXPECT_TRUE(IsFinishedAirflowState("up_for_retry"));
  EXPECT_FALSE(IsFinishedAirflowState("up_for_reschedule"));
  EXPECT_FALSE(IsFinishedAirflowState("running"));
}

TEST(AirflowReportLedger, TheStartAndTheOperatorAreFixedAndTheEndNeverMovesEarlier) {
  AirflowReportLedger ledger(10);
  const TaskSpanContext context = ContextWithSpan(1);
  ASSERT_TRUE(ledger.Admit(LedgerReport("running"), context).ok());
  AirflowTaskReport moved = LedgerReport("running");
  moved.start_unix_nano = 500;
  EXPECT_EQ(FieldOf(ledger.Admit(moved, context)), "start_time_unix_nano");
  AirflowTaskReport other_operator = LedgerReport("running");
  other_operator.operator_class = "BashOperator";
  EXPECT_EQ(FieldOf(ledger.Admit(other_operator, context)), "operator");
  AirflowTaskReport earlier = LedgerReport("running");
  earlier.end_unix_nano = 4'000;
  EXPECT_EQ(FieldOf(ledger.Admit(earlier, context)), "end_time_unix_nano");
}

TEST(AirflowReportLedger, AnAttemptHasOneSpanContextAndNoAttemptTakesAnothersSpan) {
  AirflowReportLedger ledger(10);
  ASSERT_TRUE(ledger.Admit(LedgerReport("running"), ContextWithSpan(1)).ok());
  // The same attempt under a second span context: a second trace in the attempt.
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("running"), ContextWithSpan(2))), "traceparent");
  // Another attempt naming the first one's span.
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("failed", 2), ContextWithSpan(1))), "traceparent");
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("failed", 2), ContextWithSpan(3))), "accepted");
}

TEST(AirflowReportLedger, PastItsBoundTheAttemptReportedLeastRecentlyIsForgotten) {
  AirflowReportLedger ledger(2);
  ASSERT_TRUE(ledger.Admit(LedgerReport("success", 1), ContextWithSpan(1)).ok());
  ASSERT_TRUE(ledger.Admit(LedgerReport("success", 2), ContextWithSpan(2)).ok());
  ASSERT_TRUE(ledger.Admit(LedgerReport("success", 1), ContextWithSpan(1)).ok());  // 1 is the most recent now
  ASSERT_TRUE(ledger.Admit(LedgerReport("success", 3), ContextWithSpan(3)).ok());  // forgets 2
  EXPECT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger.forgotten(), 1u);
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("failed", 1), ContextWithSpan(1))), "state");
  EXPECT_EQ(FieldOf(ledger.Admit(LedgerReport("failed", 2), ContextWithSpan(2))), "accepted");
}

}  // namespace
}  // namespace sparktrace::tracing
