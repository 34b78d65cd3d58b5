// Airflow's task reports (tracing/airflow_task_report.h): what a report must hold, what each bad
// field is answered with, and the span a report becomes.

#include "tracing/airflow_task_report.h"

#include <gtest/gtest.h>

#include <string>

namespace sparktrace::tracing {
namespace {

constexpr std::string_view kValid = R"({
  "dag_id": "daily_sales", "task_id": "load_orders", "run_id": "scheduled__2026-11-27T00:00:00+00:00",
  "try_number": 2, "map_index": 3, "state": "up_for_retry", "operator": "SparkSubmitOperator",
  "hostname": "worker-7", "airflow_version": "3.1.0",
  "start_time_unix_nano": 1764200000000000000, "end_time_unix_nano": 1764200060000000000,
  "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "k=v",
  "a_field_from_a_newer_plugin": {"ignored": true}
})";

std::string Replace(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  const auto at = out.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) out.replace(at, from.size(), to);
  return out;
}

std::string ErrorOf(const std::string& json) {
  auto report = ParseAirflowTaskReport(json);
  EXPECT_FALSE(report.ok()) << json;
  return report.ok() ? std::string() : report.error().message;
}

TEST(AirflowTaskReport, ReadsEveryField) {
  auto report = ParseAirflowTaskReport(kValid);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->identity,
            (AirflowIdentity{"daily_sales", "load_orders", "scheduled__2026-11-27T00:00:00+00:00", 2, 3}));
  EXPECT_EQ(report->state, "up_for_retry");
  EXPECT_EQ(report->operator_class, "SparkSubmitOperator");
  EXPECT_EQ(report->hostname, "worker-7");
  EXPECT_EQ(report->airflow_version, "3.1.0");
  EXPECT_EQ(report->start_unix_nano, 1764200000000000000u);
  EXPECT_EQ(report->end_unix_nano, 1764200060000000000u);
  ASSERT_TRUE(report->traceparent.has_value());
  EXPECT_EQ(ToHex(report->traceparent->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(report->tracestate, "k=v");
  EXPECT_FALSE(report->running());
}

TEST(AirflowTaskReport, RoundTripsThroughItsJson) {
  auto report = ParseAirflowTaskReport(kValid);
  ASSERT_TRUE(report.ok());
  auto again = ParseAirflowTaskReport(AirflowTaskReportJson(*report));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->identity, report->identity);
  EXPECT_EQ(again->state, report->state);
  EXPECT_EQ(again->operator_class, report->operator_class);
  EXPECT_EQ(again->start_unix_nano, report->start_unix_nano);
  EXPECT_EQ(again->end_unix_nano, report->end_unix_nano);
  EXPECT_EQ(again->tracestate, report->tracestate);
  ASSERT_TRUE(again->traceparent.has_value());
  EXPECT_EQ(again->traceparent->parent_span_id, report->traceparent->parent_span_id);
}

TEST(AirflowTaskReport, DefaultsTheOptionalFields) {
  auto report = ParseAirflowTaskReport(
      R"({"dag_id":"etl","task_id":"load","state":"success","start_time_unix_nano":5,"end_time_unix_nano":9})");
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->identity, (AirflowIdentity{"etl", "load", "", 1, -1}));
  EXPECT_TRUE(report->operator_class.empty());
  EXPECT_FALSE(report->traceparent.has_value());
}

TEST(AirflowTaskReport, NamesTheFieldThatIsWrong) {
  const std::string valid(kValid);
  EXPECT_EQ(ErrorOf("[1, 2]"), "the body must be one JSON object");
  EXPECT_EQ(ErrorOf("{\"dag_id\": "), "the body must be one JSON object");
  EXPECT_EQ(ErrorOf(Replace(valid, R"("dag_id": "daily_sales", )", "")), "dag_id: is required");
  EXPECT_EQ(ErrorOf(Replace(valid, R"("task_id": "load_orders")", R"("task_id": 7)")),
            "task_id: must be a string");
  EXPECT_EQ(
      ErrorOf(Replace(valid, R"("dag_id": "daily_sales")", R"("dag_id": "daily sales")")).rfind("dag_id:", 0),
      0u);
  EXPECT_EQ(ErrorOf(Replace(valid, R"("try_number": 2)", R"("try_number": "2")")),
            "try_number: must be an integer");
  EXPECT_EQ(ErrorOf(Replace(valid, R"("try_number": 2)", R"("try_number": -2)")),
            "try_number: must be in [0, 2^31-1]");
  EXPECT_EQ(ErrorOf(Replace(valid, R"("map_index": 3)", R"("map_index": -5)")),
            "map_index: must be -1 or in [0, 2^31-1]");
  EXPECT_EQ(
      ErrorOf(Replace(valid, R"("state": "up_for_retry")", R"("state": "Success!")")).rfind("state:", 0), 0u);
  EXPECT_EQ(ErrorOf(Replace(valid, R"("state": "up_for_retry", )", "")).rfind("state: is required", 0), 0u);
  EXPECT_EQ(ErrorOf(Replace(valid, R"("operator": "SparkSubmitOperator")", "\"operator\": \"a\\u0001b\"")),
            "operator: must be at most 250 printable ASCII characters");
  EXPECT_EQ(
      ErrorOf(Replace(valid, R"("hostname": "worker-7")", "\"hostname\": \"" + std::string(300, 'h') + "\"")),
      "hostname: must be at most 253 printable ASCII characters");
  EXPECT_EQ(ErrorOf(Replace(valid, R"("start_time_unix_nano": 1764200000000000000)",
                            R"("start_time_unix_nano": 0)"))
                .rfind("start_time_unix_nano:", 0),
            0u);
  EXPECT_EQ(
      ErrorOf(Replace(valid, R"("end_time_unix_nano": 1764200060000000000)", R"("end_time_unix_nano": 5)")),
      "end_time_unix_nano: must not be before start_time_unix_nano");
  // 2^63 would wrap negative in the stores' int64 times (and retention would delete the attempt).
  EXPECT_EQ(ErrorOf(Replace(valid, R"("end_time_unix_nano": 1764200060000000000)",
                            R"("end_time_unix_nano": 9223372036854775808)"))
                .rfind("end_time_unix_nano: must be a positive integer", 0),
            0u);
  EXPECT_EQ(ErrorOf(Replace(valid, "-01\"", "-1\"")),
            "traceparent: is not a valid W3C traceparent (bad_length)");
  EXPECT_EQ(ErrorOf(Replace(valid, R"("tracestate": "k=v")", R"("tracestate": "k")")),
            "tracestate: is not a valid W3C tracestate (missing_equals)");
  EXPECT_EQ(ErrorOf(std::string(kMaxAirflowTaskReportBytes + 1, ' ')).rfind("a report is at most", 0), 0u);
}

TEST(AirflowTaskReport, AnEndMoreThanADayAfterTheProxysClockIsRefused) {
  auto report = ParseAirflowTaskReport(kValid);
  ASSERT_TRUE(report.ok()) << report.error().message;
  const std::uint64_t day = kMaxReportClockSkewNanos;
  EXPECT_TRUE(CheckReportEndIsPlausible(*report, report->end_unix_nano).ok());
  EXPECT_TRUE(CheckReportEndIsPlausible(*report, report->end_unix_nano - day).ok());  // skew allowed
  const auto refused = CheckReportEndIsPlausible(*report, report->end_unix_nano - day - 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "end_time_unix_nano: is more than a day after this proxy's clock");
}

// A mapped instance's span is its own, under the traceparent's: Airflow 2.10 gives every mapped
// instance of a task one span id.
TEST(AirflowTaskReport, AMappedInstancesTaskSpanIsItsOwnUnderTheTraceparentsSpan) {
  auto report = ParseAirflowTaskReport(kValid);  // map_index 3
  ASSERT_TRUE(report.ok());
  const TaskSpanContext context = TaskSpanContextOf(*report);
  EXPECT_EQ(ToHex(context.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(context.span_id, DeriveTaskSpanId(report->identity));
  EXPECT_EQ(ToHex(context.parent_span_id), "00f067aa0ba902b7");
  EXPECT_TRUE(context.own_span_id);
  report->identity.map_index = 4;
  const TaskSpanContext sibling = TaskSpanContextOf(*report);
  EXPECT_NE(sibling.span_id, context.span_id);
  EXPECT_EQ(sibling.parent_span_id, context.parent_span_id);
  EXPECT_EQ(ToHex(MakeAirflowTaskSpan(*report, sibling).parent_span_id), "00f067aa0ba902b7");
  // The derived ids sent as the traceparent (the plugin without Airflow's span): taken as they are.
  report->traceparent->trace_id = DeriveTraceId(report->identity);
  report->traceparent->parent_span_id = DeriveTaskSpanId(report->identity);
  const TaskSpanContext derived = TaskSpanContextOf(*report);
  EXPECT_EQ(derived.span_id, DeriveTaskSpanId(report->identity));
  EXPECT_FALSE(IsValid(derived.parent_span_id));
  EXPECT_TRUE(derived.own_span_id);
}

TEST(AirflowTaskReport, TheTaskSpanTakesTheTraceparentsIds) {
  auto report = ParseAirflowTaskReport(kValid);
  ASSERT_TRUE(report.ok());
  report->identity.map_index = -1;
  const TaskSpanContext context = TaskSpanContextOf(*report);
  EXPECT_EQ(ToHex(context.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(ToHex(context.span_id), "00f067aa0ba902b7");
  EXPECT_FALSE(context.own_span_id);
  EXPECT_EQ(context.parent_sampled, true);
  const Span span = MakeAirflowTaskSpan(*report, context);
  EXPECT_EQ(span.name, "airflow.task");
  EXPECT_EQ(span.kind, SpanKind::kInternal);
  EXPECT_FALSE(IsValid(span.parent_span_id));
  EXPECT_EQ(span.trace_state, "k=v");
  EXPECT_EQ(span.status_code, StatusCode::kError);
  EXPECT_EQ(span.status_message, "Airflow task up_for_retry");
  EXPECT_EQ(*AttributeValueOf<std::string>(span.attributes, "airflow.task.state"), "up_for_retry");
  EXPECT_EQ(*AttributeValueOf<std::string>(span.attributes, "airflow.task.operator"), "SparkSubmitOperator");
  EXPECT_EQ(*AttributeValueOf<std::string>(span.attributes, "airflow.task.hostname"), "worker-7");
  EXPECT_EQ(*AttributeValueOf<std::string>(span.attributes, "airflow.dag_id"), "daily_sales");
  EXPECT_EQ(*AttributeValueOf<std::int64_t>(span.attributes, "airflow.try_number"), 2);
  EXPECT_EQ(*AttributeValueOf<std::int64_t>(span.attributes, "airflow.map_index"), -1);
  EXPECT_EQ(*AttributeValueOf<std::string>(span.attributes, "sparktrace.trace_origin"), "client");
}

// Without a traceparent the span takes the attempt's derived ids: the trace the proxy derives for
// the attempt's calls, and the task span id the plugin derives (tested against a vector the test
// recomputes: SHA-256 of the canonical key, bytes 0..15 and 16..23).
TEST(AirflowTaskReport, WithoutATraceparentTheIdsAreTheAttemptsDerivedOnes) {
  auto report = ParseAirflowTaskReport(
      R"({"dag_id":"etl","task_id":"load","state":"success","start_time_unix_nano":5,"end_time_unix_nano":9})");
  ASSERT_TRUE(report.ok());
  const TaskSpanContext context = TaskSpanContextOf(*report);
  EXPECT_EQ(context.trace_id, DeriveTraceId(report->identity));
  EXPECT_EQ(context.span_id, DeriveTaskSpanId(report->identity));
  EXPECT_FALSE(context.parent_sampled.has_value());
  const Span span = MakeAirflowTaskSpan(*report, context);
  EXPECT_EQ(span.status_code, StatusCode::kUnset);
  EXPECT_EQ(*AttributeValueOf<std::string>(span.attributes, "sparktrace.trace_origin"), "airflow");
}

}  // namespace
}  // namespace sparktrace::tracing
