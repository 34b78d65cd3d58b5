// Airflow's own task on the attempt page (traceview/airflow_task_view.h): which span is the task,
// and the time outside Spark split before the first call, between calls and after the last.

#include "traceview/airflow_task_view.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/traceview/traceview_span_builders.h"
#include "traceview/span_parents.h"

namespace sparktrace::traceview {
namespace {

using traceview_test::kOriginMs;
using traceview_test::MakeSpan;

tracing::Span Task(std::uint32_t id, double start, double end, const std::string& state = "success") {
  return MakeSpan("airflow.task", id, 0, start, end,
                  {{"airflow.task.state", state}, {"airflow.task.operator", std::string("PySparkOperator")}});
}

tracing::Span Rpc(std::uint32_t id, std::uint32_t parent, double start, double end) {
  return MakeSpan("spark.connect.SparkConnectService/AnalyzePlan", id, parent, start, end);
}

std::optional<AirflowTaskView> Find(const std::vector<tracing::Span>& spans) {
  return FindAirflowTask(spans, ParentIndices(spans), ComputeBreakdown(spans));
}

// task [0,100]; calls [10,30] and [50,70]: outside Spark 10 before, 20 between, 30 after.
TEST(AirflowTaskView, SplitsTheTimeOutsideSpark) {
  const std::vector<tracing::Span> spans = {Task(1, 0, 100), Rpc(2, 1, 10, 30), Rpc(3, 1, 50, 70)};
  const auto task = Find(spans);
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->state, "success");
  EXPECT_EQ(task->operator_class, "PySparkOperator");
  EXPECT_EQ(task->span_id, "0000000000000001");
  EXPECT_DOUBLE_EQ(task->start_ms, static_cast<double>(kOriginMs));
  EXPECT_DOUBLE_EQ(task->wall_ms(), 100);
  EXPECT_FALSE(task->running);
  EXPECT_DOUBLE_EQ(task->outside_spark.before_first_call_ms, 10);
  EXPECT_DOUBLE_EQ(task->outside_spark.between_calls_ms, 20);
  EXPECT_DOUBLE_EQ(task->outside_spark.after_last_call_ms, 30);
  EXPECT_DOUBLE_EQ(task->spark_ms, 40);
}

// Overlapping calls are one stretch of Spark work: no "between" time inside it.
TEST(AirflowTaskView, OverlappingCallsLeaveNoGap) {
  const std::vector<tracing::Span> spans = {Task(1, 0, 50), Rpc(2, 1, 5, 30), Rpc(3, 1, 20, 40)};
  const auto task = Find(spans);
  ASSERT_TRUE(task.has_value());
  EXPECT_DOUBLE_EQ(task->outside_spark.before_first_call_ms, 5);
  EXPECT_DOUBLE_EQ(task->outside_spark.between_calls_ms, 0);
  EXPECT_DOUBLE_EQ(task->outside_spark.after_last_call_ms, 10);
  EXPECT_DOUBLE_EQ(task->spark_ms, 35);
}

TEST(AirflowTaskView, ATaskWithoutSparkCallsIsAllBeforeTheFirstCall) {
  const auto task = Find({Task(1, 0, 80, "failed")});
  ASSERT_TRUE(task.has_value());
  EXPECT_EQ(task->state, "failed");
  EXPECT_DOUBLE_EQ(task->outside_spark.before_first_call_ms, 80);
  EXPECT_DOUBLE_EQ(task->outside_spark.ms(), 80);
  EXPECT_DOUBLE_EQ(task->spark_ms, 0);
}

// Spark work past Airflow's end (another clock, an operation the task left running) is not
// counted against the task: the parts stay inside Airflow's own start and end.
TEST(AirflowTaskView, PartsStayInsideTheTasksOwnTimes) {
  const std::vector<tracing::Span> spans = {Task(1, 10, 60), Rpc(2, 1, 0, 20), Rpc(3, 1, 40, 90)};
  const auto task = Find(spans);
  ASSERT_TRUE(task.has_value());
  EXPECT_DOUBLE_EQ(task->outside_spark.before_first_call_ms, 0);
  EXPECT_DOUBLE_EQ(task->outside_spark.between_calls_ms, 20);
  EXPECT_DOUBLE_EQ(task->outside_spark.after_last_call_ms, 0);
  EXPECT_DOUBLE_EQ(task->spark_ms, 30);
}

TEST(AirflowTaskView, ARunningReportIsMarked) {
  const auto task = Find({Task(1, 0, 10, "running"), Rpc(2, 1, 2, 8)});
  ASSERT_TRUE(task.has_value());
  EXPECT_TRUE(task->running);
}

// The demo's span before reports existed (no state), a task span under another span, other roots:
// none is the reported task.
TEST(AirflowTaskView, OnlyAReportedRootTaskSpanCounts) {
  EXPECT_FALSE(Find({MakeSpan("airflow.task", 1, 0, 0, 10), Rpc(2, 1, 2, 8)}).has_value());
  EXPECT_FALSE(Find({Rpc(9, 0, 0, 20),
                     MakeSpan("airflow.task", 1, 9, 0, 10, {{"airflow.task.state", std::string("success")}})})
                   .has_value());
  EXPECT_FALSE(Find({Rpc(2, 0, 2, 8)}).has_value());
}

}  // namespace
}  // namespace sparktrace::traceview
