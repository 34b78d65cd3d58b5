// SparkConnectTracer end to end: Airflow task identity, undecodable messages, and sampling.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/unit/tracing/connect/call_tracer_test_support.h"
#include "tracing/airflow_identity.h"
#include "tracing/connect/spark_connect_tracer.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect {
namespace {

using namespace call_tracer_testing;  // NOLINT(google-build-using-namespace): the shared test vocabulary

// ---------------------------------------------------------------------------------------------
// Airflow

AirflowIdentity LoadTaskAttempt() {
  AirflowIdentity identity;
  identity.dag_id = "etl_daily";
  identity.task_id = "load";
  identity.run_id = "scheduled__2024-06-01T00:00:00+00:00";
  identity.try_number = 2;
  return identity;
}

Headers AirflowHeaders() {
  const AirflowIdentity identity = LoadTaskAttempt();
  return {{"x-airflow-dag-id", identity.dag_id},
          {"x-airflow-task-id", identity.task_id},
          {"x-airflow-run-id", identity.run_id},
          {"x-airflow-try-number", std::to_string(identity.try_number)}};
}

TEST_F(CallTracerTest, AirflowIdentityWithoutTraceparentPutsEveryCallInTheTaskAttemptsTrace) {
  const std::string task_trace = ToHex(DeriveTraceId(LoadTaskAttempt()));
  Call execute(tracer_, "ExecutePlan", AirflowHeaders());
  EXPECT_EQ(execute.UpstreamTraceId(), task_trace);
  EXPECT_EQ(execute.UpstreamValue(kTraceparentHeader)->substr(52), "-01");
  execute.Send(ReattachableSqlCommand());
  execute.Receive(ArrowBatch(2, 16, "r-1"));
  execute.End();

  // A reattach that came without the headers still belongs to the task attempt's operation.
  Call reattach(tracer_, "ReattachExecute", {}, "ipv4:127.0.0.1:6666");
  reattach.Send(Reattach("r-1"));
  reattach.Receive(ResultComplete("r-2"));
  reattach.End();

  Call release(tracer_, "ReleaseExecute", AirflowHeaders());
  release.Send(ReleaseAll());
  release.Receive(Released());
  release.End();

  const std::vector<Span> recorded = spans();
  ASSERT_EQ(recorded.size(), 4u);
  const Span operation = OnlySpanNamed(recorded, kOperationSpan);
  EXPECT_FALSE(IsValid(operation.parent_span_id)) << "each operation of an Airflow trace is a root";
  EXPECT_EQ(StringAttribute(operation, "sparktrace.trace_origin"), "airflow");
  for (const Span& span : recorded) {
    EXPECT_EQ(ToHex(span.trace_id), task_trace) << span.name;
    EXPECT_EQ(StringAttribute(span, "airflow.dag_id"), "etl_daily") << span.name;
    EXPECT_EQ(StringAttribute(span, "airflow.task_id"), "load") << span.name;
    EXPECT_EQ(StringAttribute(span, "airflow.run_id"), "scheduled__2024-06-01T00:00:00+00:00") << span.name;
    EXPECT_EQ(IntAttribute(span, "airflow.try_number"), 2) << span.name;
    EXPECT_EQ(IntAttribute(span, "airflow.map_index"), -1) << span.name;
    if (span.name != kOperationSpan) {
      EXPECT_EQ(span.parent_span_id, operation.span_id) << span.name;
    }
  }
  EXPECT_EQ(Metric("sparktrace_traced_calls_total", {{"origin", "airflow"}}), 2);
  EXPECT_EQ(Metric("sparktrace_traced_calls_total", {{"origin", "new"}}), 1);
}

// The driver-event feed reads an operation's Airflow task back through FindOperationSpan
// (spark_application_airflow_info): while it is open and after it ended. Dag and task id only.
TEST_F(CallTracerTest, FindOperationSpanNamesTheAirflowTaskOfTheExecutePlan) {
  Call execute(tracer_, "ExecutePlan", AirflowHeaders());
  execute.Send(ReattachableSqlCommand());
  execute.Receive(ResultComplete("r-1"));
  execute.End();
  const std::optional<OperationSpanInfo> open = tracer_.FindOperationSpan(kOperation);
  ASSERT_TRUE(open);
  EXPECT_EQ(open->airflow_dag_id, "etl_daily");
  EXPECT_EQ(open->airflow_task_id, "load");

  Call release(tracer_, "ReleaseExecute", {});
  release.Send(ReleaseAll());
  release.Receive(Released());
  release.End();
  ASSERT_EQ(SpansNamed(spans(), kOperationSpan).size(), 1u) << "the operation has ended";
  const std::optional<OperationSpanInfo> ended = tracer_.FindOperationSpan(kOperation);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->airflow_dag_id, "etl_daily");
  EXPECT_EQ(ended->airflow_task_id, "load");
}

TEST_F(CallTracerTest, FindOperationSpanOfAnOperationWithoutAirflowHeadersNamesNoTask) {
  Call execute(tracer_, "ExecutePlan", {});
  execute.Send(ReattachableSqlCommand());
  execute.End();
  const std::optional<OperationSpanInfo> span = tracer_.FindOperationSpan(kOperation);
  ASSERT_TRUE(span);
  EXPECT_TRUE(span->airflow_dag_id.empty());
  EXPECT_TRUE(span->airflow_task_id.empty());
}

// "The call forwarded to Spark Connect carries traceparent: 00-<trace id>-<the proxy's RPC span id>"
// so that Spark "continues the same trace under the proxy's span". A reattach that came without
// headers has its RPC span put into its operation's trace, so the traceparent sent upstream must
// name that trace too, or Spark's spans point at a parent in another trace.
// docs/tracing.md, "Limits": the upstream traceparent is fixed before the first message names the
// operation, so a reattach that came without the ExecutePlan's context tells Spark the context it
// came with, while its span is recorded under the operation.
TEST_F(CallTracerTest, ReattachWithoutHeadersTellsSparkItsOwnContextButIsRecordedUnderTheOperation) {
  Call execute(tracer_, "ExecutePlan", AirflowHeaders());
  execute.Send(ReattachableSqlCommand());
  execute.End();
  Call reattach(tracer_, "ReattachExecute", {});
  reattach.Send(Reattach("r-1"));
  reattach.Receive(ResultComplete("r-2"));
  reattach.End();
  const Span reattach_span = OnlySpanNamed(spans(), RpcName("ReattachExecute"));
  // The operation is still open (no release); its ExecutePlan span names it as parent.
  const Span execute_span = OnlySpanNamed(spans(), RpcName("ExecutePlan"));
  EXPECT_EQ(ToHex(reattach_span.span_id), reattach.UpstreamParentId());
  EXPECT_EQ(reattach_span.trace_id, execute_span.trace_id);
  EXPECT_EQ(reattach_span.parent_span_id, execute_span.parent_span_id);
  EXPECT_NE(reattach.UpstreamTraceId(), ToHex(reattach_span.trace_id))
      << "the documented limit no longer holds: update docs/tracing.md";
}

// ---------------------------------------------------------------------------------------------
// Robustness and sampling

TEST_F(CallTracerTest, UndecodableMessagesAreCountedAndNeverThrow) {
  const std::string truncated = std::string("\x0a\x64short", 7);  // session_id says 100 bytes, has 5
  const std::string malformed(11, '\xff');                        // a varint that never ends
  ASSERT_TRUE(spark_connect::IsDecodeFailure(
      spark_connect::DecodeRequestBytes(spark_connect::Method::kExecutePlan, truncated).status));
  ASSERT_TRUE(spark_connect::IsDecodeFailure(
      spark_connect::DecodeResponseBytes(spark_connect::Method::kExecutePlan, malformed).status));

  Call execute(tracer_, "ExecutePlan", {});
  EXPECT_NO_THROW(execute.SendBytes(truncated));
  EXPECT_NO_THROW(execute.ReceiveBytes(malformed));
  EXPECT_NO_THROW(execute.End());
  Call analyze(tracer_, "AnalyzePlan", {});
  EXPECT_NO_THROW(analyze.SendBytes(malformed));
  EXPECT_NO_THROW(analyze.ReceiveBytes(truncated));
  EXPECT_NO_THROW(analyze.End());
  Call empty(tracer_, "Config", {});
  EXPECT_NO_THROW(empty.SendBytes(""));  // an empty message is a valid one with every field unset
  EXPECT_NO_THROW(empty.End());

  EXPECT_EQ(Metric("sparktrace_undecodable_messages_total", {{"method", "ExecutePlan"}, {"direction", "in"}}),
            1);
  EXPECT_EQ(
      Metric("sparktrace_undecodable_messages_total", {{"method", "ExecutePlan"}, {"direction", "out"}}), 1);
  EXPECT_EQ(Metric("sparktrace_undecodable_messages_total", {{"method", "AnalyzePlan"}, {"direction", "in"}}),
            1);
  EXPECT_EQ(
      Metric("sparktrace_undecodable_messages_total", {{"method", "AnalyzePlan"}, {"direction", "out"}}), 1);
  EXPECT_EQ(Metric("sparktrace_undecodable_messages_total", {{"method", "Config"}, {"direction", "in"}}), 0);
  EXPECT_EQ(IntAttribute(OnlySpanNamed(spans(), RpcName("ExecutePlan")), "sparktrace.undecodable_messages"),
            2);
  EXPECT_EQ(IntAttribute(OnlySpanNamed(spans(), RpcName("AnalyzePlan")), "sparktrace.undecodable_messages"),
            2);
  EXPECT_EQ(
      FindAttribute(OnlySpanNamed(spans(), RpcName("Config")).attributes, "sparktrace.undecodable_messages"),
      nullptr);
  // The ExecutePlan still made an operation, ended with its stream.
  EXPECT_EQ(SpansNamed(spans(), kOperationSpan).size(), 1u);
}

TEST_F(CallTracerTest, MessagesThatCameWithoutBytesAreCountedAsUndecodable) {
  Call execute(tracer_, "ExecutePlan", {});
  EXPECT_TRUE(execute.NeedsMessageBytes());
  execute.SendUnreadable(400);  // not read as an empty request: nothing is known of it
  execute.ReceiveUnreadable(900);
  execute.Receive(ArrowBatch(5, 64, "r-2"));  // the stream's later messages are still read
  execute.End();
  Call config(tracer_, "Config", {});
  config.SendUnreadable(120);
  config.ReceiveUnreadable(30);
  config.End();

  for (const char* method : {"ExecutePlan", "Config"}) {
    for (const char* direction : {"in", "out"}) {
      EXPECT_EQ(
          Metric("sparktrace_undecodable_messages_total", {{"method", method}, {"direction", direction}}), 1)
          << method << " " << direction;
    }
  }
  const Span execute_span = OnlySpanNamed(spans(), RpcName("ExecutePlan"));
  EXPECT_EQ(IntAttribute(execute_span, "sparktrace.undecodable_messages"), 2);
  EXPECT_EQ(IntAttribute(execute_span, "rpc.request.bytes"), 400) << "the proxy's count, compressed";
  EXPECT_EQ(IntAttribute(execute_span, "spark.connect.response.rows"), 5);
  EXPECT_EQ(FindAttribute(execute_span.attributes, "spark.connect.session_id"), nullptr);
  const Span config_span = OnlySpanNamed(spans(), RpcName("Config"));
  EXPECT_EQ(IntAttribute(config_span, "sparktrace.undecodable_messages"), 2);
  EXPECT_EQ(StringAttribute(config_span, "spark.connect.config.operation"), "none");
  // As after a request that failed to decode, the ExecutePlan still made an operation.
  EXPECT_EQ(SpansNamed(spans(), kOperationSpan).size(), 1u);
}

TEST(CallTracerSampling, RatioZeroRecordsNoSpansButStillCountsOperations) {
  TracerHarness harness(0.0);
  {
    Call query(harness.tracer, "ExecutePlan", {});
    EXPECT_EQ(query.UpstreamValue(kTraceparentHeader)->substr(52), "-00")
        << "upstream learns it is not sampled";
    query.Send(Spark35Query());
    query.Receive(ArrowBatch(1, 8, "r-1", "server-op"));
    query.End();
  }
  {
    Call failing(harness.tracer, "ExecutePlan", AirflowHeaders());
    failing.Send(ReattachableSqlCommand());
    failing.End(proxy::StatusCode::kInvalidArgument, "[PARSE_SYNTAX_ERROR]");
  }
  {
    Call config(harness.tracer, "Config", {});
    config.End();
  }
  EXPECT_TRUE(harness.spans.spans().empty());
  EXPECT_EQ(harness.Metric("sparktrace_operations_total", {{"outcome", "completed"}}), 1);
  EXPECT_EQ(harness.Metric("sparktrace_operations_total", {{"outcome", "failed"}}), 1);
  EXPECT_EQ(harness.Metric("sparktrace_operations_active"), 0);
  EXPECT_EQ(harness.Metric("sparktrace_traced_calls_total", {{"origin", "new"}}), 2);
  EXPECT_EQ(harness.Metric("sparktrace_traced_calls_total", {{"origin", "airflow"}}), 1);
}

TEST(CallTracerSampling, RatioZeroStillRecordsTracesTheClientSampled) {
  TracerHarness harness(0.0);
  Call call(harness.tracer, "AnalyzePlan", {{"traceparent", kClientTraceparent}});
  EXPECT_EQ(call.UpstreamValue(kTraceparentHeader)->substr(52), "-01");
  call.End();
  ASSERT_EQ(harness.spans.spans().size(), 1u) << "parent-based: the client decided";
  EXPECT_EQ(ToHex(harness.spans.spans()[0].trace_id), kClientTraceId);
}

}  // namespace
}  // namespace sparktrace::tracing::connect
