// SparkConnectTracer end to end: one operation's span across the calls of separate connections.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/connect/call_tracer_test_support.h"
#include "tracing/connect/spark_connect_tracer.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect {
namespace {

using namespace call_tracer_testing;  // NOLINT(google-build-using-namespace): the shared test vocabulary

// ---------------------------------------------------------------------------------------------
// Operations across calls

TEST_F(CallTracerTest, ExecuteReattachAndReleaseOnSeparateConnectionsFormOneOperation) {
  Call execute(tracer_, "ExecutePlan",
               {{"traceparent", kClientTraceparent}, {"tracestate", kClientTracestate}},
               "ipv4:127.0.0.1:5555");
  execute.Send(ReattachableSqlCommand());
  execute.Receive(ArrowBatch(10, 100, "r-1"));
  execute.Receive(ArrowBatch(5, 50, "r-2"));
  execute.End();  // OK without result_complete: the stream was cut
  ASSERT_EQ(SpansNamed(spans(), kOperationSpan).size(), 0u) << "a cut stream does not end the operation";

  // The client reconnects: a new connection, and a new client span in the same trace.
  Call reattach(tracer_, "ReattachExecute",
                {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"}},
                "ipv4:127.0.0.1:6666");
  reattach.Send(Reattach("r-2"));
  reattach.Receive(ArrowBatch(7, 70, "r-3"));
  reattach.Receive(ResultComplete("r-4"));
  reattach.End();
  ASSERT_EQ(SpansNamed(spans(), kOperationSpan).size(), 0u) << "a reattachable result waits for its release";

  Call release(tracer_, "ReleaseExecute", {{"traceparent", kClientTraceparent}}, "ipv4:127.0.0.1:7777");
  release.Send(ReleaseAll());
  release.Receive(Released());
  release.End();

  const std::vector<Span> recorded = spans();
  ASSERT_EQ(recorded.size(), 4u);
  const Span operation = OnlySpanNamed(recorded, kOperationSpan);
  const Span execute_span = OnlySpanNamed(recorded, RpcName("ExecutePlan"));
  const Span reattach_span = OnlySpanNamed(recorded, RpcName("ReattachExecute"));
  const Span release_span = OnlySpanNamed(recorded, RpcName("ReleaseExecute"));

  // The operation: a child of the client's span, parent of every call.
  EXPECT_EQ(operation.kind, SpanKind::kInternal);
  EXPECT_EQ(ToHex(operation.trace_id), kClientTraceId);
  EXPECT_EQ(ToHex(operation.parent_span_id), kClientSpanId);
  EXPECT_EQ(operation.trace_state, kClientTracestate);
  EXPECT_EQ(operation.status_code, StatusCode::kUnset);
  for (const Span& call_span : {execute_span, reattach_span, release_span}) {
    EXPECT_EQ(ToHex(call_span.trace_id), kClientTraceId) << call_span.name;
    EXPECT_EQ(call_span.parent_span_id, operation.span_id) << call_span.name;
    EXPECT_EQ(call_span.kind, SpanKind::kServer) << call_span.name;
    EXPECT_EQ(StringAttribute(call_span, "spark.connect.operation_id"), kOperation) << call_span.name;
  }
  EXPECT_NE(operation.span_id, execute_span.span_id);
  EXPECT_EQ(ToHex(execute_span.span_id), execute.UpstreamParentId());
  EXPECT_EQ(ToHex(reattach_span.span_id), reattach.UpstreamParentId());
  EXPECT_EQ(ToHex(release_span.span_id), release.UpstreamParentId());
  EXPECT_EQ(operation.start_time_unix_nano, execute_span.start_time_unix_nano);
  EXPECT_EQ(operation.end_time_unix_nano, release_span.end_time_unix_nano) << "never before its last child";

  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation_id"), kOperation);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.session_id"), kSession);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.server_side_session_id"), kServerSession);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.user_id"), "etl");
  EXPECT_EQ(StringAttribute(operation, "spark.connect.client_type"), kClientType);
  EXPECT_EQ(StringsAttribute(operation, "spark.connect.tags"),
            (std::vector<std::string>{"airflow_dag=etl_daily", "airflow_task=load"}));
  EXPECT_EQ(StringAttribute(operation, "spark.connect.plan_kind"), "command");
  EXPECT_EQ(StringAttribute(operation, "spark.connect.command"), "sql_command");
  EXPECT_EQ(BoolAttribute(operation, "spark.connect.reattachable"), true);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "completed");
  EXPECT_EQ(IntAttribute(operation, "spark.connect.result.rows"), 22);
  EXPECT_EQ(IntAttribute(operation, "spark.connect.result.arrow_bytes"), 220);
  EXPECT_EQ(IntAttribute(operation, "spark.connect.result.batches"), 3);
  EXPECT_EQ(IntAttribute(operation, "spark.connect.reattach_count"), 1);
  ASSERT_TRUE(DoubleAttribute(operation, "spark.connect.time_to_first_batch_ms").has_value());
  EXPECT_GE(*DoubleAttribute(operation, "spark.connect.time_to_first_batch_ms"), 0.0);

  const std::vector<std::string> events = EventNames(operation);
  for (const char* expected :
       {"first_response", "first_batch", "stream_cut", "reattach", "result_complete", "release"}) {
    EXPECT_NE(std::find(events.begin(), events.end(), expected), events.end())
        << "no " << expected << " event";
  }
  const SpanEvent* reattach_event = FindEvent(operation, "reattach");
  ASSERT_NE(reattach_event, nullptr);
  EXPECT_EQ(AttributeAs<std::string>(reattach_event->attributes, "spark.connect.reattach.last_response_id"),
            "r-2");
  const SpanEvent* release_event = FindEvent(operation, "release");
  ASSERT_NE(release_event, nullptr);
  EXPECT_EQ(AttributeAs<std::string>(release_event->attributes, "spark.connect.release"), "all");

  // Each RPC span counts its own part of the result.
  EXPECT_EQ(StringAttribute(execute_span, "spark.connect.plan_kind"), "command");
  EXPECT_EQ(StringAttribute(execute_span, "spark.connect.command"), "sql_command");
  EXPECT_EQ(IntAttribute(execute_span, "spark.connect.response.rows"), 15);
  EXPECT_EQ(IntAttribute(execute_span, "spark.connect.response.bytes"), 150);
  EXPECT_EQ(IntAttribute(execute_span, "spark.connect.response.batches"), 2);
  EXPECT_EQ(IntAttribute(execute_span, "rpc.response.messages"), 2);
  EXPECT_EQ(IntAttribute(execute_span, "network.peer.port"), 5555);
  EXPECT_EQ(IntAttribute(reattach_span, "spark.connect.response.rows"), 7);
  EXPECT_EQ(IntAttribute(reattach_span, "spark.connect.response.bytes"), 70);
  EXPECT_EQ(IntAttribute(reattach_span, "spark.connect.response.batches"), 1);
  EXPECT_EQ(StringAttribute(reattach_span, "spark.connect.reattach.last_response_id"), "r-2");
  EXPECT_EQ(IntAttribute(reattach_span, "network.peer.port"), 6666);
  EXPECT_EQ(StringAttribute(release_span, "spark.connect.release"), "all");

  EXPECT_EQ(Metric("sparktrace_operations_total", {{"outcome", "completed"}}), 1);
  EXPECT_EQ(Metric("sparktrace_operations_active"), 0);
  EXPECT_EQ(Metric("sparktrace_operation_duration_seconds"), 1);
  EXPECT_EQ(Metric("sparktrace_operation_time_to_first_batch_seconds"), 1);
  EXPECT_EQ(Metric("sparktrace_traced_calls_total", {{"origin", "client"}}), 3);
  EXPECT_EQ(tracer_.operations().open_operations(), 0u);
}

TEST_F(CallTracerTest, ServerPickedOperationIdComesFromTheFirstResponse) {
  Call execute(tracer_, "ExecutePlan", {});
  execute.Send(Spark35Query());
  execute.Receive(ArrowBatch(3, 24, "r-1", "server-op"));
  execute.Receive(ResultComplete("r-2", "server-op"));
  execute.End();
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  const Span execute_span = OnlySpanNamed(spans(), RpcName("ExecutePlan"));
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation_id"), "server-op");
  EXPECT_EQ(StringAttribute(execute_span, "spark.connect.operation_id"), "server-op");
  EXPECT_EQ(StringAttribute(operation, "spark.connect.plan_kind"), "root");
  EXPECT_EQ(FindAttribute(operation.attributes, "spark.connect.command"), nullptr);
  EXPECT_EQ(BoolAttribute(operation, "spark.connect.reattachable"), false);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "completed");
  EXPECT_EQ(StringAttribute(operation, "sparktrace.trace_origin"), "new");
  EXPECT_FALSE(IsValid(operation.parent_span_id));
}

TEST_F(CallTracerTest, FailedExecutionEndsTheOperationWithAnError) {
  Call execute(tracer_, "ExecutePlan", {});
  execute.Send(ReattachableSqlCommand());
  execute.End(proxy::StatusCode::kInternal, "[DIVIDE_BY_ZERO] Division by zero.");
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "failed");
  EXPECT_EQ(operation.status_code, StatusCode::kError);
  EXPECT_EQ(operation.status_message, "[DIVIDE_BY_ZERO] Division by zero.");
  const SpanEvent* error = FindEvent(operation, "error");
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(AttributeAs<std::int64_t>(error->attributes, "rpc.grpc.status_code"), 13);
  const Span execute_span = OnlySpanNamed(spans(), RpcName("ExecutePlan"));
  EXPECT_EQ(execute_span.status_code, StatusCode::kError);
  EXPECT_EQ(Metric("sparktrace_operations_total", {{"outcome", "failed"}}), 1);
}

// PySpark sends ReleaseExecute(release_all) for an operation whose ExecutePlan failed, after the
// failure ended the operation (and its span was sent): the release is still the operation's child.
TEST_F(CallTracerTest, AReleaseAfterAFailedExecutionIsAChildOfTheEndedOperation) {
  Call execute(tracer_, "ExecutePlan", {{"traceparent", kClientTraceparent}}, "ipv4:127.0.0.1:5555");
  execute.Send(ReattachableSqlCommand());
  execute.End(proxy::StatusCode::kInternal, "[DIVIDE_BY_ZERO] Division by zero.");
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  ASSERT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "failed");
  ASSERT_EQ(tracer_.operations().open_operations(), 0u);

  // Another client span of the same trace, as PySpark's release runs in its own call.
  Call release(tracer_, "ReleaseExecute",
               {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"}},
               "ipv4:127.0.0.1:7777");
  release.Send(ReleaseAll());
  release.Receive(Released());
  release.End();
  const Span release_span = OnlySpanNamed(spans(), RpcName("ReleaseExecute"));
  EXPECT_EQ(release_span.trace_id, operation.trace_id);
  EXPECT_EQ(release_span.parent_span_id, operation.span_id);
  const bool* after =
      AttributeValueOf<bool>(release_span.attributes, "spark.connect.operation.ended_before_call");
  ASSERT_NE(after, nullptr);
  EXPECT_TRUE(*after);
  EXPECT_EQ(SpansNamed(spans(), kOperationSpan).size(), 1u) << "the ended operation is not reopened";
  EXPECT_EQ(tracer_.operations().open_operations(), 0u);
}

TEST_F(CallTracerTest, InterruptOnAnotherConnectionEndsTheOperationWhenItsStreamEnds) {
  Call execute(tracer_, "ExecutePlan", {{"traceparent", kClientTraceparent}});
  execute.Send(ReattachableSqlCommand());
  execute.Receive(ArrowBatch(1, 8, "r-1"));

  Call interrupt(tracer_, "Interrupt", {{"traceparent", kClientTraceparent}}, "ipv4:127.0.0.1:6666");
  pb::InterruptRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_interrupt_type(pb::InterruptRequest::INTERRUPT_TYPE_OPERATION_ID);
  request.set_operation_id(kOperation);
  interrupt.Send(request);
  pb::InterruptResponse response;
  response.set_session_id(kSession);
  response.add_interrupted_ids(kOperation);
  interrupt.Receive(response);
  interrupt.End(proxy::StatusCode::kOk, {}, milliseconds(5));
  EXPECT_EQ(SpansNamed(spans(), kOperationSpan).size(), 0u) << "its ExecutePlan is still streaming";

  execute.End(proxy::StatusCode::kUnknown, "[OPERATION_CANCELED]", seconds(10));
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  const Span execute_span = OnlySpanNamed(spans(), RpcName("ExecutePlan"));
  const Span interrupt_span = OnlySpanNamed(spans(), RpcName("Interrupt"));
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "interrupted");
  EXPECT_EQ(operation.status_code, StatusCode::kUnset);
  EXPECT_EQ(operation.end_time_unix_nano, execute_span.end_time_unix_nano) << "ends with its last call";
  EXPECT_EQ(interrupt_span.parent_span_id, operation.span_id);
  EXPECT_EQ(StringAttribute(interrupt_span, "spark.connect.interrupt.type"), "operation_id");
  EXPECT_EQ(StringAttribute(interrupt_span, "spark.connect.interrupt.target"), kOperation);
  EXPECT_EQ(StringsAttribute(interrupt_span, "spark.connect.interrupted_ids"),
            std::vector<std::string>{kOperation});
  const SpanEvent* event = FindEvent(operation, "interrupt");
  ASSERT_NE(event, nullptr);
  EXPECT_EQ(AttributeAs<std::string>(event->attributes, "spark.connect.interrupt.type"), "operation_id");
  EXPECT_EQ(Metric("sparktrace_operations_total", {{"outcome", "interrupted"}}), 1);
}

TEST_F(CallTracerTest, ReleaseSessionReleasesTheSessionsOpenOperations) {
  Call execute(tracer_, "ExecutePlan", {});
  execute.Send(ReattachableSqlCommand());
  execute.Receive(ArrowBatch(1, 8, "r-1"));
  execute.End();  // cut
  Call release_session(tracer_, "ReleaseSession", {}, "ipv4:127.0.0.1:6666");
  pb::ReleaseSessionRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  release_session.Send(request);
  release_session.End();
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "released");
  EXPECT_EQ(Metric("sparktrace_operations_total", {{"outcome", "released"}}), 1);
}

// A ReattachExecute whose ExecutePlan this process never saw: call_tracer_newer_clients_test.cc.

TEST_F(CallTracerTest, ShutdownEndsOpenOperationsAsUnfinished) {
  Call execute(tracer_, "ExecutePlan", {});
  execute.Send(ReattachableSqlCommand());
  execute.End();  // cut, then the proxy stops before anyone comes back
  tracer_.Shutdown();
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "unfinished");
  EXPECT_EQ(Metric("sparktrace_operations_total", {{"outcome", "unfinished"}}), 1);
  EXPECT_EQ(Metric("sparktrace_operations_active"), 0);
}

}  // namespace
}  // namespace sparktrace::tracing::connect
