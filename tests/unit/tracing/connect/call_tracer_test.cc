// SparkConnectTracer and its CallTracers end to end, in process: calls are started as the proxy
// starts them (a CallStart with the client's metadata), fed real serialized Spark Connect messages
// and ended, and the spans, upstream header overrides and metrics are checked against
// docs/tracing.md. Each call gets its own CallStart, as calls on separate connections do.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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
// Upstream propagation

TEST_F(CallTracerTest, UpstreamTraceparentNamesTheClientsTraceAndTheRpcSpan) {
  Call call(tracer_, "AnalyzePlan", {{"traceparent", kClientTraceparent}, {"tracestate", kClientTracestate}});
  ASSERT_TRUE(call.tapped());
  const std::optional<std::string> traceparent = call.UpstreamValue(kTraceparentHeader);
  ASSERT_TRUE(traceparent.has_value());
  EXPECT_EQ(traceparent->substr(0, 36), std::string("00-") + kClientTraceId + "-");
  EXPECT_EQ(traceparent->substr(52), "-01");
  EXPECT_NE(call.UpstreamParentId(), kClientSpanId) << "the client's span is replaced by ours";
  EXPECT_FALSE(call.Overrides(kTracestateHeader)) << "a valid tracestate goes on unchanged";

  call.Send(SparkVersionRequest());
  call.End();
  const Span span = OnlySpanNamed(spans(), RpcName("AnalyzePlan"));
  EXPECT_EQ(ToHex(span.trace_id), kClientTraceId);
  EXPECT_EQ(ToHex(span.span_id), call.UpstreamParentId()) << "Spark continues the trace under the RPC span";
  EXPECT_EQ(ToHex(span.parent_span_id), kClientSpanId);
  EXPECT_EQ(span.trace_state, kClientTracestate);
  EXPECT_EQ(StringAttribute(span, "sparktrace.trace_origin"), "client");
  EXPECT_EQ(Metric("sparktrace_traced_calls_total", {{"origin", "client"}}), 1);
}

TEST_F(CallTracerTest, InvalidTracestateIsDroppedUpstreamAndCounted) {
  Call call(tracer_, "AnalyzePlan", {{"traceparent", kClientTraceparent}, {"tracestate", "congo"}});
  EXPECT_TRUE(call.Overrides(kTracestateHeader));
  EXPECT_EQ(call.UpstreamValue(kTracestateHeader), std::nullopt) << "removed, not replaced";
  EXPECT_EQ(call.UpstreamTraceId(), kClientTraceId) << "the traceparent is kept";
  call.Send(SparkVersionRequest());
  call.End();
  const Span span = OnlySpanNamed(spans(), RpcName("AnalyzePlan"));
  EXPECT_EQ(span.trace_state, "");
  EXPECT_EQ(Metric("sparktrace_invalid_tracestate_total", {{"reason", "missing_equals"}}), 1);
}

TEST_F(CallTracerTest, TracestateIsRemovedWhenTheTraceDidNotComeFromTheClient) {
  Call call(tracer_, "AnalyzePlan", {{"tracestate", kClientTracestate}});
  EXPECT_TRUE(call.Overrides(kTracestateHeader));
  EXPECT_EQ(call.UpstreamValue(kTracestateHeader), std::nullopt);
  ASSERT_TRUE(call.UpstreamValue(kTraceparentHeader).has_value());
  call.Send(SparkVersionRequest());
  call.End();
  const Span span = OnlySpanNamed(spans(), RpcName("AnalyzePlan"));
  EXPECT_EQ(call.UpstreamTraceId(), ToHex(span.trace_id));
  EXPECT_EQ(span.trace_id[0], 0x7e) << "a new trace from the id generator";
  EXPECT_FALSE(IsValid(span.parent_span_id)) << "a root span";
  EXPECT_EQ(span.trace_state, "");
  EXPECT_EQ(StringAttribute(span, "sparktrace.trace_origin"), "new");
  EXPECT_EQ(Metric("sparktrace_traced_calls_total", {{"origin", "new"}}), 1);
}

TEST_F(CallTracerTest, InvalidTraceparentIsCountedByReasonAndTracedAsNew) {
  const std::vector<std::pair<Headers, std::string>> cases = {
      {{{"traceparent", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}}, "upper_case_hex"},
      {{{"traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}}, "zero_trace_id"},
      {{{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}}, "zero_parent_id"},
      {{{"traceparent", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}, "forbidden_version"},
      {{{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736"}}, "bad_length"},
      {{{"traceparent", ""}}, "empty"},
      {{{"traceparent", kClientTraceparent}, {"traceparent", kClientTraceparent}}, "multiple_headers"},
  };
  for (const auto& [headers, reason] : cases) {
    Headers with_tracestate = headers;
    with_tracestate.emplace_back("tracestate", kClientTracestate);
    Call call(tracer_, "AnalyzePlan", with_tracestate);
    EXPECT_NE(call.UpstreamTraceId(), kClientTraceId) << reason;
    EXPECT_EQ(call.UpstreamTraceId().substr(0, 2), "7e") << reason << ": a new trace";
    EXPECT_TRUE(call.Overrides(kTracestateHeader))
        << reason << ": tracestate belongs to the ignored traceparent";
    EXPECT_EQ(call.UpstreamValue(kTracestateHeader), std::nullopt) << reason;
    call.Send(SparkVersionRequest());
    call.End();
    EXPECT_EQ(Metric("sparktrace_invalid_traceparent_total", {{"reason", reason}}), 1) << reason;
  }
  for (const Span& span : spans()) {
    EXPECT_EQ(StringAttribute(span, "sparktrace.trace_origin"), "new");
    EXPECT_FALSE(IsValid(span.parent_span_id));
  }
  EXPECT_EQ(spans().size(), cases.size());
  EXPECT_EQ(Metric("sparktrace_traced_calls_total", {{"origin", "new"}}), static_cast<double>(cases.size()));
}

TEST_F(CallTracerTest, UnsampledClientTraceIsPropagatedButNotRecorded) {
  Call call(tracer_, "ExecutePlan",
            {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}});
  EXPECT_EQ(call.UpstreamValue(kTraceparentHeader)->substr(52), "-00");
  EXPECT_EQ(call.UpstreamTraceId(), kClientTraceId);
  call.Send(Spark35Query());
  call.Receive(ArrowBatch(1, 8, "r-1", "server-op"));
  call.End();
  EXPECT_TRUE(spans().empty());
  EXPECT_EQ(Metric("sparktrace_operations_total", {{"outcome", "completed"}}), 1);
}

// ---------------------------------------------------------------------------------------------
// RPC spans

TEST_F(CallTracerTest, RpcSpanCarriesTheRpcAttributes) {
  Call call(tracer_, "AnalyzePlan", {});
  call.Send(SparkVersionRequest());
  pb::AnalyzePlanResponse response;
  response.set_session_id(kSession);
  call.Receive(response);
  call.End(proxy::StatusCode::kOk, {}, milliseconds(25));

  const std::vector<Span> recorded = spans();
  ASSERT_EQ(recorded.size(), 1u);
  const Span& span = recorded[0];
  EXPECT_EQ(span.name, "spark.connect.SparkConnectService/AnalyzePlan");
  EXPECT_EQ(span.kind, SpanKind::kServer);
  EXPECT_EQ(span.end_time_unix_nano - span.start_time_unix_nano, 25'000'000u)
      << "ends when its status is sent";
  EXPECT_EQ(span.status_code, StatusCode::kUnset);
  EXPECT_EQ(StringAttribute(span, "rpc.system"), "grpc");
  EXPECT_EQ(StringAttribute(span, "rpc.service"), "spark.connect.SparkConnectService");
  EXPECT_EQ(StringAttribute(span, "rpc.method"), "AnalyzePlan");
  EXPECT_EQ(IntAttribute(span, "rpc.grpc.status_code"), 0);
  EXPECT_EQ(StringAttribute(span, "server.address"), "proxy");
  EXPECT_EQ(IntAttribute(span, "server.port"), 15002);
  EXPECT_EQ(StringAttribute(span, "network.peer.address"), "127.0.0.1");
  EXPECT_EQ(IntAttribute(span, "network.peer.port"), 5555);
  EXPECT_EQ(IntAttribute(span, "rpc.request.messages"), 1);
  EXPECT_EQ(IntAttribute(span, "rpc.request.bytes"), static_cast<std::int64_t>(call.requests().bytes));
  EXPECT_EQ(IntAttribute(span, "rpc.response.messages"), 1);
  EXPECT_EQ(IntAttribute(span, "rpc.response.bytes"), static_cast<std::int64_t>(call.responses().bytes));
  EXPECT_EQ(DoubleAttribute(span, "rpc.time_to_first_response_ms"), 3.0);
  EXPECT_EQ(StringAttribute(span, "spark.connect.session_id"), kSession);
  EXPECT_EQ(StringAttribute(span, "spark.connect.user_id"), "etl");
  EXPECT_EQ(StringAttribute(span, "spark.connect.client_type"), kClientType);
  EXPECT_EQ(StringAttribute(span, "spark.connect.analyze"), "spark_version");
  EXPECT_EQ(FindAttribute(span.attributes, "spark.connect.operation_id"), nullptr) << "not an execution call";
  EXPECT_EQ(FindAttribute(span.attributes, "sparktrace.undecodable_messages"), nullptr);
  EXPECT_EQ(FindAttribute(span.attributes, "airflow.dag_id"), nullptr);
}

TEST_F(CallTracerTest, ServerAddressesOfIpv6Peers) {
  Call call(tracer_, "AnalyzePlan", {}, "ipv6:[::1]:40404");
  call.End();
  const Span span = OnlySpanNamed(spans(), RpcName("AnalyzePlan"));
  EXPECT_EQ(StringAttribute(span, "network.peer.address"), "::1");
  EXPECT_EQ(IntAttribute(span, "network.peer.port"), 40404);
  EXPECT_EQ(FindAttribute(span.attributes, "rpc.time_to_first_response_ms"), nullptr)
      << "there was no response";
}

TEST_F(CallTracerTest, ConfigSpanNamesTheOperationButNeverKeysOrValues) {
  constexpr char kSecretKey[] = "spark.hadoop.fs.s3a.secret.key";
  constexpr char kSecretValue[] = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";
  Call set(tracer_, "Config", {});
  pb::ConfigRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_client_type(kClientType);
  pb::KeyValue* pair = request.mutable_operation()->mutable_set()->add_pairs();
  pair->set_key(kSecretKey);
  pair->set_value(kSecretValue);
  set.Send(request);
  pb::ConfigResponse response;
  response.set_session_id(kSession);
  response.set_server_side_session_id(kServerSession);
  set.Receive(response);
  set.End();

  Call get(tracer_, "Config", {});
  pb::ConfigRequest get_request;
  get_request.set_session_id(kSession);
  get_request.mutable_operation()->mutable_get()->add_keys(kSecretKey);
  get.Send(get_request);
  pb::ConfigResponse get_response;
  get_response.set_session_id(kSession);
  pb::KeyValue* echoed = get_response.add_pairs();
  echoed->set_key(kSecretKey);
  echoed->set_value(kSecretValue);
  get.Receive(get_response);
  get.End();

  const std::vector<Span> recorded = SpansNamed(spans(), RpcName("Config"));
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(StringAttribute(recorded[0], "spark.connect.config.operation"), "set");
  EXPECT_EQ(StringAttribute(recorded[0], "spark.connect.server_side_session_id"), kServerSession);
  EXPECT_EQ(StringAttribute(recorded[1], "spark.connect.config.operation"), "get");
  for (const Span& span : recorded) {
    for (const std::string& text : EveryString(span)) {
      EXPECT_EQ(text.find(kSecretValue), std::string::npos) << "config value recorded in " << span.name;
      EXPECT_EQ(text.find(kSecretKey), std::string::npos) << "config key recorded in " << span.name;
    }
  }
}

TEST_F(CallTracerTest, StatusIsErrorOnlyForServerErrorCodes) {
  const std::string long_message = std::string(300, 'e');
  for (int code = 1; code <= 16; ++code) {
    Call call(tracer_, "AnalyzePlan", {});
    call.Send(SparkVersionRequest());
    call.End(static_cast<proxy::StatusCode>(code), long_message);
  }
  const std::vector<Span> recorded = spans();
  ASSERT_EQ(recorded.size(), 16u);
  for (const Span& span : recorded) {
    const std::int64_t code = IntAttribute(span, "rpc.grpc.status_code").value_or(-1);
    const bool server_error = code == 2 || code == 4 || code == 12 || code == 13 || code == 14 || code == 15;
    if (server_error) {
      EXPECT_EQ(span.status_code, StatusCode::kError) << "code " << code;
      EXPECT_EQ(span.status_message, std::string(256, 'e')) << "code " << code << ": cut at 256 bytes";
    } else {
      EXPECT_EQ(span.status_code, StatusCode::kUnset) << "code " << code << " is the client's doing";
      EXPECT_EQ(span.status_message, "") << "code " << code;
    }
  }
}

TEST_F(CallTracerTest, OtherServicesAreNamedByTheirPathAndNeverDecoded) {
  Call call(tracer_, "/grpc.health.v1.Health/Check", {});
  EXPECT_TRUE(call.Overrides(kTraceparentHeader)) << "every proxied call is traced";
  EXPECT_FALSE(call.NeedsMessageBytes()) << "the proxy need not keep bytes nobody reads";
  call.SendBytes("\xff\xff\xff");
  call.ReceiveBytes("\xff\xff\xff");
  call.ReceiveUnreadable(40);
  call.End();
  const Span span = OnlySpanNamed(spans(), "grpc.health.v1.Health/Check");
  EXPECT_EQ(StringAttribute(span, "rpc.service"), "grpc.health.v1.Health");
  EXPECT_EQ(StringAttribute(span, "rpc.method"), "Check");
  EXPECT_EQ(FindAttribute(span.attributes, "sparktrace.undecodable_messages"), nullptr);
  EXPECT_EQ(Metric("sparktrace_undecodable_messages_total", {{"method", "other"}, {"direction", "in"}}), 0);
}

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
