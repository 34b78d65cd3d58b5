// What newer Spark Connect clients and servers bring, against docs/tracing.md: the
// spark-connect-operation-id header (Spark's clients from 4.3), operations whose first call here
// is a ReattachExecute (another replica or an earlier proxy process saw the ExecutePlan), and
// methods the decoder does not know (newer SparkConnectService methods, other services).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/tracing/connect/call_tracer_test_support.h"
#include "tracing/connect/spark_connect_tracer.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect {
namespace {

using namespace call_tracer_testing;  // NOLINT(google-build-using-namespace): the shared test vocabulary

constexpr char kOperationIdHeader[] = "spark-connect-operation-id";
// Another valid operation id than kOperation (the one the test messages' bodies carry).
constexpr char kOtherOperation[] = "0f0e0d0c-0b0a-4908-8706-050403020100";
constexpr char kHeaderIgnored[] = "sparktrace_operation_id_header_ignored_total";
constexpr char kFirstSeenOnReattach[] = "sparktrace_operations_first_seen_on_reattach_total";
constexpr char kUnknownMethods[] = "sparktrace_unknown_methods_total";

class NewerClientsTest : public CallTracerTest {
 protected:
  double Ignored(const std::string& reason) const { return Metric(kHeaderIgnored, {{"reason", reason}}); }
  double UnknownMethods(const std::string& service) const {
    return Metric(kUnknownMethods, {{"service", service}});
  }
};

pb::ExecutePlanRequest WithoutOperationId(pb::ExecutePlanRequest request) {
  request.clear_operation_id();
  return request;
}

// ---------------------------------------------------------------------------------------------
// The operation id header

// The header keys the operation from the first request on, before any response names it.
TEST_F(NewerClientsTest, HeaderKeysAnExecutePlanWhoseBodyNamesNoOperation) {
  Call execute(tracer_, "ExecutePlan", {{kOperationIdHeader, kOperation}});
  execute.Send(WithoutOperationId(ReattachableSqlCommand()));
  ASSERT_TRUE(tracer_.operations().SpanOf(kOperation).has_value()) << "keyed before any response";
  execute.Receive(ArrowBatch(2, 16, "r-1"));
  execute.End();  // cut

  // A PySpark-shaped reattach (id in the body) finds it, and so does a release.
  Call reattach(tracer_, "ReattachExecute", {{kOperationIdHeader, kOperation}}, "ipv4:127.0.0.1:6666");
  reattach.Send(Reattach("r-1"));
  reattach.Receive(ResultComplete("r-2"));
  reattach.End();
  Call release(tracer_, "ReleaseExecute", {{kOperationIdHeader, kOperation}}, "ipv4:127.0.0.1:7777");
  release.Send(ReleaseAll());
  release.Receive(Released());
  release.End();

  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation_id"), kOperation);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "completed");
  EXPECT_EQ(IntAttribute(operation, "spark.connect.reattach_count"), 1);
  EXPECT_EQ(FindAttribute(operation.attributes, "spark.connect.operation.first_seen"), nullptr);
  for (const char* method : {"ExecutePlan", "ReattachExecute", "ReleaseExecute"}) {
    const Span call = OnlySpanNamed(spans(), RpcName(method));
    EXPECT_EQ(call.parent_span_id, operation.span_id) << method;
    EXPECT_EQ(StringAttribute(call, "spark.connect.operation_id"), kOperation) << method;
    EXPECT_EQ(FindAttribute(call.attributes, "spark.connect.operation_id_header"), nullptr) << method;
  }
  EXPECT_EQ(Metric(kHeaderIgnored, {{"reason", "mismatch"}}), 0);
}

// What the header is for: calls whose bodies the proxy cannot read still find their operation.
TEST_F(NewerClientsTest, ReattachAndReleaseWithUnreadableBodiesAreKeyedByTheHeader) {
  Call execute(tracer_, "ExecutePlan", {{kOperationIdHeader, kOperation}});
  execute.Send(ReattachableSqlCommand());
  execute.Receive(ArrowBatch(2, 16, "r-1"));
  execute.End();  // cut

  Call reattach(tracer_, "ReattachExecute", {{kOperationIdHeader, kOperation}}, "ipv4:127.0.0.1:6666");
  reattach.SendUnreadable(60);  // compressed with an encoding the proxy cannot undo
  reattach.Receive(ArrowBatch(3, 24, "r-2"));
  reattach.End();  // cut again
  ASSERT_EQ(SpansNamed(spans(), kOperationSpan).size(), 0u) << "the reattach kept it open, as a stream";

  Call release(tracer_, "ReleaseExecute", {{kOperationIdHeader, kOperation}}, "ipv4:127.0.0.1:7777");
  release.SendUnreadable(40);
  release.End();
  Call release_all(tracer_, "ReleaseExecute", {{kOperationIdHeader, kOperation}}, "ipv4:127.0.0.1:7778");
  release_all.Send(ReleaseAll());
  release_all.End();

  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "released");
  EXPECT_EQ(IntAttribute(operation, "spark.connect.reattach_count"), 1);
  EXPECT_EQ(IntAttribute(operation, "spark.connect.result.rows"), 5) << "the reattach's rows count too";
  const Span reattach_span = OnlySpanNamed(spans(), RpcName("ReattachExecute"));
  EXPECT_EQ(reattach_span.parent_span_id, operation.span_id);
  EXPECT_EQ(StringAttribute(reattach_span, "spark.connect.operation_id"), kOperation);
  EXPECT_EQ(IntAttribute(reattach_span, "sparktrace.undecodable_messages"), 1);
  const std::vector<Span> releases = SpansNamed(spans(), RpcName("ReleaseExecute"));
  ASSERT_EQ(releases.size(), 2u);
  for (const Span& span : releases) EXPECT_EQ(span.parent_span_id, operation.span_id);
}

// Spark's server acts on the body: the call is traced under the body's operation, and the header
// that said otherwise is recorded on its span and counted.
TEST_F(NewerClientsTest, HeaderThatDisagreesWithTheBodyIsOverruledAndCounted) {
  Call execute(tracer_, "ExecutePlan", {{kOperationIdHeader, kOtherOperation}});
  execute.Send(ReattachableSqlCommand());
  execute.Receive(ArrowBatch(1, 8, "r-1"));
  execute.End();  // cut
  EXPECT_TRUE(tracer_.operations().SpanOf(kOperation).has_value());
  EXPECT_FALSE(tracer_.operations().SpanOf(kOtherOperation).has_value());

  Call reattach(tracer_, "ReattachExecute", {{kOperationIdHeader, kOtherOperation}}, "ipv4:127.0.0.1:6666");
  reattach.Send(Reattach("r-1"));
  reattach.Receive(ResultComplete("r-2"));
  reattach.End();
  Call release(tracer_, "ReleaseExecute", {{kOperationIdHeader, kOperation}}, "ipv4:127.0.0.1:7777");
  release.Send(ReleaseAll());
  release.End();

  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation_id"), kOperation);
  EXPECT_EQ(IntAttribute(operation, "spark.connect.reattach_count"), 1);
  for (const char* method : {"ExecutePlan", "ReattachExecute"}) {
    const Span call = OnlySpanNamed(spans(), RpcName(method));
    EXPECT_EQ(call.parent_span_id, operation.span_id) << method;
    EXPECT_EQ(StringAttribute(call, "spark.connect.operation_id"), kOperation) << method;
    EXPECT_EQ(StringAttribute(call, "spark.connect.operation_id_header"), kOtherOperation) << method;
  }
  const Span release_span = OnlySpanNamed(spans(), RpcName("ReleaseExecute"));
  EXPECT_EQ(FindAttribute(release_span.attributes, "spark.connect.operation_id_header"), nullptr)
      << "a header that agrees is not repeated";
  EXPECT_EQ(Ignored("mismatch"), 2);
  EXPECT_EQ(tracer_.operations().open_operations(), 0u);
}

TEST_F(NewerClientsTest, InvalidHeadersAreIgnoredAndCountedByReason) {
  const std::vector<std::pair<Headers, std::string>> cases = {
      {{{kOperationIdHeader, "not-an-operation-id"}}, "malformed"},
      {{{kOperationIdHeader, ""}}, "malformed"},
      // A UUID's length, but not its shape: a hyphen out of place, a letter that is not hex.
      {{{kOperationIdHeader, "1b2c3d4e5-f60-4718-8293-a4b5c6d7e8f9"}}, "malformed"},
      {{{kOperationIdHeader, "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8fg"}}, "malformed"},
      {{{kOperationIdHeader, std::string(kOperation) + "0"}}, "too_long"},
      {{{kOperationIdHeader, std::string(4096, 'a')}}, "too_long"},
      {{{kOperationIdHeader, kOperation}, {kOperationIdHeader, kOperation}}, "repeated"},
  };
  for (const auto& [headers, reason] : cases) {
    const double before = Ignored(reason);
    // The body cannot be read, so only a valid header could key the operation.
    Call execute(tracer_, "ExecutePlan", headers);
    execute.SendUnreadable(80);
    execute.End();
    EXPECT_EQ(Ignored(reason), before + 1) << reason << " " << headers.front().second.substr(0, 40);
    EXPECT_FALSE(tracer_.operations().SpanOf(kOperation).has_value()) << reason;
  }
  // Every ExecutePlan above still became an operation, without an id.
  const std::vector<Span> operations = SpansNamed(spans(), kOperationSpan);
  EXPECT_EQ(operations.size(), cases.size());
  for (const Span& operation : operations) {
    EXPECT_EQ(FindAttribute(operation.attributes, "spark.connect.operation_id"), nullptr);
  }
  EXPECT_EQ(Ignored("mismatch"), 0);
}

TEST_F(NewerClientsTest, TheHeaderIsOnlyReadOnCallsThatNameAnOperation) {
  Call config(tracer_, "Config", {{kOperationIdHeader, "garbage"}});
  config.End();
  Call interrupt(tracer_, "Interrupt", {{kOperationIdHeader, "garbage"}});
  interrupt.End();
  for (const char* reason : {"malformed", "too_long", "repeated", "mismatch"}) {
    EXPECT_EQ(Ignored(reason), 0) << reason;
  }
}

// ---------------------------------------------------------------------------------------------
// Operations first seen on a ReattachExecute

// The proxy restarted mid-operation, another replica saw the ExecutePlan, or the client began with
// a reattach: the operation is traced from the reattach on, and says so.
TEST_F(NewerClientsTest, ReattachOfAnOperationNeverSeenStartsItThenReleaseEndsIt) {
  Call reattach(tracer_, "ReattachExecute", {{"traceparent", kClientTraceparent}});
  reattach.Send(Reattach("r-9"));
  reattach.Receive(ArrowBatch(4, 32, "r-10"));
  reattach.End();  // cut: the operation waits for the client to come back
  EXPECT_EQ(SpansNamed(spans(), kOperationSpan).size(), 0u);
  EXPECT_EQ(tracer_.operations().open_operations(), 1u);
  EXPECT_EQ(Metric(kFirstSeenOnReattach), 1);
  EXPECT_EQ(Metric("sparktrace_operations_active"), 1);

  // Later calls attach to it as usual, on other connections, also without the headers.
  Call again(tracer_, "ReattachExecute", {}, "ipv4:127.0.0.1:6666");
  again.Send(Reattach("r-10"));
  again.Receive(ResultComplete("r-11"));
  again.End();
  Call release(tracer_, "ReleaseExecute", {{"traceparent", kClientTraceparent}}, "ipv4:127.0.0.1:7777");
  release.Send(ReleaseAll());
  release.Receive(Released());
  release.End();

  const std::vector<Span> recorded = spans();
  ASSERT_EQ(recorded.size(), 4u);
  const Span operation = OnlySpanNamed(recorded, kOperationSpan);
  EXPECT_EQ(ToHex(operation.trace_id), kClientTraceId) << "the trace of the call that started it";
  EXPECT_EQ(ToHex(operation.parent_span_id), kClientSpanId);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.first_seen"), "reattach");
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation_id"), kOperation);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.session_id"), kSession);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.user_id"), "etl");
  EXPECT_EQ(StringAttribute(operation, "spark.connect.client_type"), kClientType);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.server_side_session_id"), kServerSession);
  EXPECT_EQ(StringAttribute(operation, "sparktrace.trace_origin"), "client");
  EXPECT_EQ(BoolAttribute(operation, "spark.connect.reattachable"), true);
  EXPECT_EQ(FindAttribute(operation.attributes, "spark.connect.plan_kind"), nullptr) << "never seen";
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "completed");
  EXPECT_EQ(IntAttribute(operation, "spark.connect.reattach_count"), 2);
  EXPECT_EQ(IntAttribute(operation, "spark.connect.result.rows"), 4);
  EXPECT_EQ(operation.status_code, StatusCode::kUnset);
  const std::vector<std::string> events = EventNames(operation);
  EXPECT_EQ(std::count(events.begin(), events.end(), "reattach"), 2);
  EXPECT_EQ(std::count(events.begin(), events.end(), "release"), 1);

  const std::vector<Span> reattaches = SpansNamed(recorded, RpcName("ReattachExecute"));
  ASSERT_EQ(reattaches.size(), 2u);
  for (const Span& span : reattaches) {
    EXPECT_EQ(span.trace_id, operation.trace_id);
    EXPECT_EQ(span.parent_span_id, operation.span_id);
  }
  EXPECT_EQ(operation.start_time_unix_nano, reattaches[0].start_time_unix_nano) << "starts with the reattach";
  const Span release_span = OnlySpanNamed(recorded, RpcName("ReleaseExecute"));
  EXPECT_EQ(release_span.parent_span_id, operation.span_id);
  EXPECT_EQ(operation.end_time_unix_nano, release_span.end_time_unix_nano);

  EXPECT_EQ(Metric(kFirstSeenOnReattach), 1) << "the second reattach attached";
  EXPECT_EQ(Metric("sparktrace_operations_total", {{"outcome", "completed"}}), 1);
  EXPECT_EQ(Metric("sparktrace_operations_active"), 0);
  EXPECT_EQ(tracer_.operations().open_operations(), 0u);
}

// An operation that ended here is not started again by a late reattach: that call is a child of
// the ended operation's span, as before.
TEST_F(NewerClientsTest, ReattachAfterTheOperationEndedHereStartsNoOperation) {
  Call execute(tracer_, "ExecutePlan", {{"traceparent", kClientTraceparent}});
  execute.Send(ReattachableSqlCommand());
  execute.End(proxy::StatusCode::kInternal, "[DIVIDE_BY_ZERO] Division by zero.");
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);

  Call reattach(tracer_, "ReattachExecute", {});
  reattach.Send(Reattach("r-1"));
  reattach.End(proxy::StatusCode::kInternal, "[INVALID_HANDLE.OPERATION_NOT_FOUND]");
  EXPECT_EQ(SpansNamed(spans(), kOperationSpan).size(), 1u);
  const Span reattach_span = OnlySpanNamed(spans(), RpcName("ReattachExecute"));
  EXPECT_EQ(reattach_span.parent_span_id, operation.span_id);
  EXPECT_EQ(BoolAttribute(reattach_span, "spark.connect.operation.ended_before_call"), true);
  EXPECT_EQ(Metric(kFirstSeenOnReattach), 0);
  EXPECT_EQ(tracer_.operations().open_operations(), 0u);
}

// A reattach-first operation that cannot be kept open any longer: the server says it does not know
// it (a client that began with a reattach for nothing). It ends as failed, like any execution
// whose stream fails for good, and it is not left open.
TEST_F(NewerClientsTest, ReattachFirstOperationTheServerDoesNotKnowEndsAsFailed) {
  Call reattach(tracer_, "ReattachExecute", {{kOperationIdHeader, kOperation}});
  reattach.Send(Reattach("r-1"));
  reattach.End(proxy::StatusCode::kInternal, "[INVALID_HANDLE.OPERATION_NOT_FOUND] The handle is unknown.");
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.first_seen"), "reattach");
  EXPECT_EQ(StringAttribute(operation, "spark.connect.operation.outcome"), "failed");
  EXPECT_EQ(tracer_.operations().open_operations(), 0u);
  EXPECT_EQ(Metric("sparktrace_operations_active"), 0);
}

// ---------------------------------------------------------------------------------------------
// Methods the decoder does not know

TEST_F(NewerClientsTest, NewerSparkConnectMethodIsNamedByItsPathAndCounted) {
  Call call(tracer_, "/spark.connect.SparkConnectService/ListSqlExecutions",
            {{"traceparent", kClientTraceparent}});
  EXPECT_TRUE(call.Overrides(kTraceparentHeader)) << "traced, and its context passed on, like any call";
  EXPECT_FALSE(call.NeedsMessageBytes()) << "never decoded: nothing to keep";
  call.SendBytes(
      "\x0a\x03"
      "abc");
  call.End(proxy::StatusCode::kUnimplemented, "Method not found");

  const Span span = OnlySpanNamed(spans(), "spark.connect.SparkConnectService/ListSqlExecutions");
  EXPECT_EQ(StringAttribute(span, "rpc.service"), "spark.connect.SparkConnectService");
  EXPECT_EQ(StringAttribute(span, "rpc.method"), "ListSqlExecutions");
  EXPECT_EQ(IntAttribute(span, "rpc.grpc.status_code"), 12);
  EXPECT_EQ(ToHex(span.parent_span_id), kClientSpanId);
  EXPECT_EQ(UnknownMethods("spark_connect"), 1);
  EXPECT_EQ(UnknownMethods("other"), 0);
  EXPECT_EQ(UnknownMethods("unnamed"), 0);
}

TEST_F(NewerClientsTest, OtherServicesAreCountedApartFromSparkConnect) {
  Call call(tracer_, "/grpc.health.v1.Health/Check", {});
  call.End();
  EXPECT_EQ(OnlySpanNamed(spans(), "grpc.health.v1.Health/Check").name, "grpc.health.v1.Health/Check");
  EXPECT_EQ(UnknownMethods("other"), 1);
  EXPECT_EQ(UnknownMethods("spark_connect"), 0);
}

// A client may put anything in :path: span names stay bounded and free of odd text.
TEST_F(NewerClientsTest, PathsTooLongOrOddAreNamedOther) {
  const std::vector<std::string> paths = {
      "/spark.connect.SparkConnectService/" + std::string(200, 'A'),
      "/" + std::string(130, 'a') + ".S/M",
      "/spark.connect.SparkConnectService/List Sql",
      "/spark.connect.SparkConnectService/List\nSql",
      "/spark.connect.SparkConnectService/a/b",
      "/spark..connect.S/M",
      "/spark.connect.SparkConnectService/",
      "/",
  };
  for (const std::string& path : paths) {
    Call call(tracer_, path, {});
    call.End();
  }
  const std::vector<Span> recorded = spans();
  ASSERT_EQ(recorded.size(), paths.size());
  for (const Span& span : recorded) {
    EXPECT_EQ(span.name, "_OTHER");
    EXPECT_EQ(StringAttribute(span, "rpc.method"), "_OTHER");
    EXPECT_EQ(FindAttribute(span.attributes, "rpc.service"), nullptr);
  }
  EXPECT_EQ(UnknownMethods("unnamed"), static_cast<double>(paths.size()));
  EXPECT_EQ(UnknownMethods("spark_connect"), 0);
}

TEST_F(NewerClientsTest, KnownMethodsAreNotCountedAsUnknown) {
  Call call(tracer_, "AnalyzePlan", {});
  call.Send(SparkVersionRequest());
  call.End();
  for (const char* service : {"spark_connect", "other", "unnamed"}) EXPECT_EQ(UnknownMethods(service), 0);
}

}  // namespace
}  // namespace sparktrace::tracing::connect
