// POST /api/v1/airflow/task-attempts (tracing/airflow/airflow_task_route.h): a report becomes the attempt's
// task span, sent where it may go (the store only for "running" and for Airflow's own span ids),
// counted by result; a bad report is a 400 naming the field; an unsampled trace stores nothing.
// Through the real admin server: the route needs the admin token when there is one.

#include "tracing/airflow/airflow_task_route.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

#include "admin/admin_server.h"
#include "tests/unit/admin/raw_http_client.h"
#include "tracing/airflow_report_ledger.h"
#include "tracing/airflow_task_report.h"

namespace sparktrace::tracing::airflow {
namespace {

class RecordingSink final : public tracing::SpanSink {
 public:
  void Submit(tracing::Span span) override { final_spans.push_back(std::move(span)); }
  void SubmitLive(tracing::Span span) override { live_spans.push_back(std::move(span)); }
  std::vector<tracing::Span> final_spans;
  std::vector<tracing::Span> live_spans;
};

std::string Report(std::string_view state, std::string_view traceparent_field = "", int try_number = 1) {
  return std::string(R"({"dag_id":"etl","task_id":"load","run_id":"manual__1","try_number":)") +
         std::to_string(try_number) + R"(,"map_index":-1,)" + R"("state":")" + std::string(state) +
         R"(","operator":"PySparkOperator","start_time_unix_nano":1000,"end_time_unix_nano":5000)" +
         std::string(traceparent_field) + "}";
}

admin::HttpRequest Request(std::string body) {
  admin::HttpRequest request;
  request.path = std::string(kAirflowTaskReportPath);
  request.body = std::move(body);
  request.header = [](const std::string&) { return std::optional<std::string>(); };
  return request;
}

double Counted(prometheus::Registry& registry, const std::string& result) {
  for (const auto& family : registry.Collect()) {
    if (family.name != "sparktrace_airflow_task_reports_total") continue;
    for (const auto& metric : family.metric) {
      if (!metric.label.empty() && metric.label[0].value == result) return metric.counter.value;
    }
  }
  return -1;
}

tracing::Sampler SampleAll() { return *tracing::Sampler::Create(1.0); }

TEST(AirflowTaskRoute, AFinalReportWithDerivedIdsGoesToEverySink) {
  RecordingSink sink;
  tracing::AirflowReportLedger ledger(100);
  prometheus::Registry registry;
  const admin::PostRoute route = AirflowTaskRoute(sink, SampleAll(), ledger, registry);
  EXPECT_EQ(route.path, "/api/v1/airflow/task-attempts");
  EXPECT_TRUE(route.needs_admin_token);
  const admin::HttpResponse answer = route.handler(Request(Report("success")));
  EXPECT_EQ(answer.status, 202) << answer.body;
  ASSERT_EQ(sink.final_spans.size(), 1u);
  EXPECT_TRUE(sink.live_spans.empty());
  const tracing::Span& span = sink.final_spans[0];
  const tracing::AirflowIdentity identity{"etl", "load", "manual__1", 1, -1};
  EXPECT_EQ(span.trace_id, tracing::DeriveTraceId(identity));
  EXPECT_EQ(span.span_id, tracing::DeriveTaskSpanId(identity));
  EXPECT_NE(answer.body.find(tracing::ToHex(span.span_id)), std::string::npos) << answer.body;
  EXPECT_EQ(Counted(registry, "accepted"), 1);
}

TEST(AirflowTaskRoute, RunningReportsAndAirflowsOwnSpanIdsGoToTheStoreOnly) {
  RecordingSink sink;
  tracing::AirflowReportLedger ledger(100);
  prometheus::Registry registry;
  const admin::PostRoute route = AirflowTaskRoute(sink, SampleAll(), ledger, registry);
  EXPECT_EQ(route.handler(Request(Report("running"))).status, 202);
  // Airflow exports its own task span; a tracing backend must not get the id twice.
  const std::string airflow_span =
      R"(,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")";
  EXPECT_EQ(route.handler(Request(Report("failed", airflow_span, /*try_number=*/2))).status, 202);
  EXPECT_TRUE(sink.final_spans.empty());
  ASSERT_EQ(sink.live_spans.size(), 2u);
  EXPECT_EQ(tracing::ToHex(sink.live_spans[1].span_id), "00f067aa0ba902b7");
  EXPECT_EQ(Counted(registry, "accepted"), 2);
}

TEST(AirflowTaskRoute, ABadReportIsA400NamingTheField) {
  RecordingSink sink;
  tracing::AirflowReportLedger ledger(100);
  prometheus::Registry registry;
  const admin::PostRoute route = AirflowTaskRoute(sink, SampleAll(), ledger, registry);
  const admin::HttpResponse answer = route.handler(Request(Report("Not A State")));
  EXPECT_EQ(answer.status, 400);
  EXPECT_NE(answer.body.find("\"error\":\"state:"), std::string::npos) << answer.body;
  EXPECT_TRUE(sink.final_spans.empty() && sink.live_spans.empty());
  EXPECT_EQ(Counted(registry, "invalid"), 1);
}

// A report speaks only for its own attempt (tracing/airflow_report_ledger.h): a conflict is a 409
// naming the field, counted, and nothing reaches the sinks.
TEST(AirflowTaskRoute, AReportThatWouldRewriteAnotherAttemptIsA409) {
  RecordingSink sink;
  tracing::AirflowReportLedger ledger(100);
  prometheus::Registry registry;
  const admin::PostRoute route = AirflowTaskRoute(sink, SampleAll(), ledger, registry);
  const std::string victim_span = R"(,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")";
  ASSERT_EQ(route.handler(Request(Report("success", victim_span))).status, 202);
  const admin::HttpResponse taken = route.handler(Request(Report("failed", victim_span, /*try_number=*/2)));
  EXPECT_EQ(taken.status, 409);
  EXPECT_NE(taken.body.find("\"error\":\"traceparent:"), std::string::npos) << taken.body;
  const admin::HttpResponse rewritten = route.handler(Request(Report("failed", victim_span)));
  EXPECT_EQ(rewritten.status, 409);
  EXPECT_NE(rewritten.body.find("\"error\":\"state:"), std::string::npos) << rewritten.body;
  EXPECT_EQ(sink.live_spans.size(), 1u);
  EXPECT_EQ(Counted(registry, "conflict"), 2);
  EXPECT_EQ(Counted(registry, "accepted"), 1);
}

// The decision the attempt's calls got: a trace the proxy does not sample stores no task span.
TEST(AirflowTaskRoute, AnUnsampledTraceStoresNothing) {
  RecordingSink sink;
  tracing::AirflowReportLedger ledger(100);
  prometheus::Registry registry;
  const admin::PostRoute route = AirflowTaskRoute(sink, *tracing::Sampler::Create(0.0), ledger, registry);
  EXPECT_EQ(route.handler(Request(Report("success"))).status, 202);
  const std::string unsampled = R"(,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")";
  EXPECT_EQ(route.handler(Request(Report("success", unsampled))).status, 202);
  EXPECT_TRUE(sink.final_spans.empty() && sink.live_spans.empty());
  EXPECT_EQ(Counted(registry, "not_sampled"), 2);
}

TEST(AirflowTaskRoute, NeedsTheAdminTokenWhenThereIsOne) {
  RecordingSink sink;
  tracing::AirflowReportLedger ledger(100);
  auto registry = std::make_shared<prometheus::Registry>();
  std::vector<admin::PostRoute> routes = {AirflowTaskRoute(sink, SampleAll(), ledger, *registry)};
  admin::AdminUi ui;
  ui.token = "a-token-of-sixteen-chars";
  auto server = admin::AdminServer::Start(
      "127.0.0.1:0", [] { return std::string(); }, registry, {}, std::move(routes), std::move(ui));
  ASSERT_TRUE(server.ok()) << server.error().message;
  std::unique_ptr<admin::AdminServer> admin_server = std::move(*server);
  const std::string address = admin_server->address();
  const std::string json = "Content-Type: application/json\r\n";
  using admin::test_client::Send;

  EXPECT_EQ(Send(address, "POST", "/api/v1/airflow/task-attempts", Report("success"), json).status, 401);
  EXPECT_EQ(Send(address, "POST", "/api/v1/airflow/task-attempts", Report("success"),
                 json + "Authorization: Bearer not-the-token-at-all\r\n")
                .status,
            401);
  // The browser's cookie does not carry a write.
  EXPECT_EQ(Send(address, "POST", "/api/v1/airflow/task-attempts", Report("success"),
                 json + "Cookie: sparktrace_token=a-token-of-sixteen-chars\r\n")
                .status,
            401);
  EXPECT_TRUE(sink.final_spans.empty());
  EXPECT_EQ(Send(address, "POST", "/api/v1/airflow/task-attempts", Report("success"),
                 json + "Authorization: Bearer a-token-of-sixteen-chars\r\n")
                .status,
            202);
  EXPECT_EQ(Send(address, "POST", "/api/v1/airflow/task-attempts", Report("success"),
                 "Content-Type: text/plain\r\nAuthorization: Bearer a-token-of-sixteen-chars\r\n")
                .status,
            415);
  admin_server.reset();  // joins the admin thread that ran the handler
  EXPECT_EQ(sink.final_spans.size(), 1u);
}

}  // namespace
}  // namespace sparktrace::tracing::airflow
