// SparkConnectTracer end to end (see call_tracer_test_support.h): upstream propagation and RPC spans.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/tracing/connect/call_tracer_test_support.h"
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

}  // namespace
}  // namespace sparktrace::tracing::connect
