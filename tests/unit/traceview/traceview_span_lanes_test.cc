// Lanes and labels of the trace view (traceview/span_lanes.h) for each span kind of
// docs/tracing.md.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "traceview/span_lanes.h"
#include "tracing/span.h"

namespace sparktrace::traceview {
namespace {

tracing::Span Named(std::string name, std::vector<tracing::Attribute> attributes = {}) {
  tracing::Span span;
  span.name = std::move(name);
  span.attributes = std::move(attributes);
  return span;
}

TEST(TraceviewSpanLanesTest, LaneOfEachSpanKind) {
  EXPECT_EQ(LaneOf(Named("airflow.task")), Lane::kTask);
  EXPECT_EQ(LaneOf(Named("spark.connect.SparkConnectService/ExecutePlan")), Lane::kRpc);
  EXPECT_EQ(LaneOf(Named("spark_connect.operation")), Lane::kOperation);
  EXPECT_EQ(LaneOf(Named("spark.connect.operation.lifecycle")), Lane::kLifecycle);
  EXPECT_EQ(LaneOf(Named("spark.job")), Lane::kJob);
  EXPECT_EQ(LaneOf(Named("spark.stage")), Lane::kStage);
  EXPECT_EQ(LaneOf(Named("spark.phase.resource_wait")), Lane::kPhase);
  EXPECT_EQ(LaneOf(Named("spark.application")), Lane::kApplication);
  EXPECT_EQ(LaneOf(Named("my.client.span")), Lane::kOther);
  // Another gRPC service through the proxy: a SERVER span with rpc.method, named by its path.
  tracing::Span health = Named("grpc.health.v1.Health/Check", {{"rpc.method", std::string("Check")}});
  health.kind = tracing::SpanKind::kServer;
  EXPECT_EQ(LaneOf(health), Lane::kRpc);
  health.kind = tracing::SpanKind::kInternal;
  EXPECT_EQ(LaneOf(health), Lane::kOther);
}

TEST(TraceviewSpanLanesTest, LaneNamesInOrder) {
  const std::vector<std::string> expected = {"task",  "rpc",   "operation",   "lifecycle", "job",
                                             "stage", "phase", "application", "other"};
  ASSERT_EQ(expected.size(), kLaneCount);
  for (std::size_t lane = 0; lane < kLaneCount; ++lane) {
    EXPECT_EQ(LaneName(static_cast<Lane>(lane)), expected[lane]);
  }
}

TEST(TraceviewSpanLanesTest, OperationLabelsByPlanKindAndCommand) {
  const tracing::Attribute id{"spark.connect.operation_id",
                              std::string("0924ae17-5c7e-4c1a-9d7f-6f2d1b3c4e5a")};
  EXPECT_EQ(
      SpanLabel(Named("spark_connect.operation", {id, {"spark.connect.plan_kind", std::string("root")}})),
      "query 0924ae17");
  EXPECT_EQ(SpanLabel(Named("spark_connect.operation",
                            {id,
                             {"spark.connect.plan_kind", std::string("command")},
                             {"spark.connect.command", std::string("write_operation_v2")}})),
            "write 0924ae17");
  EXPECT_EQ(
      SpanLabel(Named("spark_connect.operation", {id,
                                                  {"spark.connect.plan_kind", std::string("command")},
                                                  {"spark.connect.command", std::string("sql_command")}})),
      "command sql_command 0924ae17");
  EXPECT_EQ(SpanLabel(Named("spark_connect.operation")), "operation");
  EXPECT_EQ(SpanLabel(Named("spark.connect.operation.lifecycle", {id})), "lifecycle 0924ae17");
}

TEST(TraceviewSpanLanesTest, LabelsOfOtherLanes) {
  EXPECT_EQ(SpanLabel(Named("spark.connect.SparkConnectService/ExecutePlan")), "ExecutePlan");
  EXPECT_EQ(
      SpanLabel(Named("spark.connect.SparkConnectService/X", {{"rpc.method", std::string("AnalyzePlan")}})),
      "AnalyzePlan");
  EXPECT_EQ(SpanLabel(Named("spark.job", {{"spark.job.id", std::int64_t{12}}})), "job 12");
  EXPECT_EQ(SpanLabel(Named("spark.stage",
                            {{"spark.stage.id", std::int64_t{4}}, {"spark.stage.attempt", std::int64_t{1}}})),
            "stage 4 (attempt 1)");
  EXPECT_EQ(SpanLabel(Named("spark.stage", {{"spark.stage.id", std::int64_t{4}},
                                            {"spark.stage.attempt", std::int64_t{0}},
                                            {"spark.stage.name", std::string("collect at etl.py:12")}})),
            "stage 4 (attempt 0): collect at etl.py:12");
  EXPECT_EQ(SpanLabel(Named("spark.phase.resource_wait")), "resource wait");
  EXPECT_EQ(SpanLabel(Named("spark.phase.compute")), "compute");
  EXPECT_EQ(SpanLabel(Named("spark.phase.io_write")), "I/O write");
  EXPECT_EQ(SpanLabel(Named("spark.phase.idle")), "idle");
  EXPECT_EQ(SpanLabel(Named("airflow.task")), "airflow task");
  EXPECT_EQ(SpanLabel(Named("spark.application", {{"spark.app.id", std::string("app-1")},
                                                  {"spark.app.name", std::string("nightly")}})),
            "nightly");
  EXPECT_EQ(SpanLabel(Named("spark.application", {{"spark.app.id", std::string("app-1")}})), "app-1");
  EXPECT_EQ(SpanLabel(Named("my.client.span")), "my.client.span");
}

TEST(TraceviewSpanLanesTest, IntAttributeReadsIntsAndDecimalStrings) {
  const tracing::Span span = Named(
      "spark.job", {{"a", std::int64_t{7}}, {"b", std::string("42")}, {"c", std::string("4x")}, {"d", 1.5}});
  EXPECT_EQ(IntAttribute(span, "a"), 7);
  EXPECT_EQ(IntAttribute(span, "b"), 42);
  EXPECT_EQ(IntAttribute(span, "c"), std::nullopt);
  EXPECT_EQ(IntAttribute(span, "d"), std::nullopt);
  EXPECT_EQ(IntAttribute(span, "missing"), std::nullopt);
}

}  // namespace
}  // namespace sparktrace::traceview
