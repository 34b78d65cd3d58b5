#include "tracing/airflow/airflow_task_route.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

#include "common/json_writer.h"
#include "tracing/airflow_task_report.h"

namespace sparktrace::tracing::airflow {
namespace {

std::uint64_t UnixNanosNow() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

struct ReportCounters {
  prometheus::Counter* accepted = nullptr;
  prometheus::Counter* not_sampled = nullptr;
  prometheus::Counter* invalid = nullptr;
  prometheus::Counter* conflict = nullptr;
  prometheus::Gauge* remembered = nullptr;
};

ReportCounters RegisterCounters(prometheus::Registry& registry) {
  auto& family = prometheus::BuildCounter()
                     .Name("sparktrace_airflow_task_reports_total")
                     .Help(
                         "Airflow task attempt reports received (POST /api/v1/airflow/task-attempts), by "
                         "result: accepted, not_sampled (the attempt's trace is not sampled), invalid (400), "
                         "conflict (409: the report would rewrite another attempt's span or its own attempt's "
                         "first report)")
                     .Register(registry);
  auto& remembered = prometheus::BuildGauge()
                         .Name("sparktrace_airflow_task_report_attempts")
                         .Help("Task attempts whose reports the route remembers to refuse conflicting ones "
                               "(at most --max-reported-attempts; past it the least recently reported is "
                               "forgotten)")
                         .Register(registry)
                         .Add({});
  return ReportCounters{&family.Add({{"result", "accepted"}}), &family.Add({{"result", "not_sampled"}}),
                        &family.Add({{"result", "invalid"}}), &family.Add({{"result", "conflict"}}),
                        &remembered};
}

admin::HttpResponse JsonAnswer(int status, std::string body) {
  return admin::HttpResponse{status, "application/json", std::move(body) + "\n", {}};
}

admin::HttpResponse ErrorAnswer(int status, const Error& problem) {
  JsonWriter error;
  error.BeginObject().Key("error").String(problem.message).EndObject();
  return JsonAnswer(status, error.Take());
}

}  // namespace

admin::PostRoute AirflowTaskRoute(tracing::SpanSink& sink, tracing::Sampler sampler,
                                  tracing::AirflowReportLedger& ledger, prometheus::Registry& registry) {
  admin::PostRoute route;
  route.path = std::string(kAirflowTaskReportPath);
  route.max_body_bytes = tracing::kMaxAirflowTaskReportBytes;
  route.content_types = {"application/json"};
  route.needs_admin_token = true;
  route.handler = [&sink, sampler, &ledger,
                   counters = RegisterCounters(registry)](const admin::HttpRequest& request) {
    const auto invalid = [&counters](const Error& problem) {
      counters.invalid->Increment();
      return ErrorAnswer(400, problem);
    };
    auto report = tracing::ParseAirflowTaskReport(request.body);
    if (!report.ok()) return invalid(report.error());
    if (auto plausible = tracing::CheckReportEndIsPlausible(*report, UnixNanosNow()); !plausible.ok()) {
      return invalid(plausible.error());
    }
    const tracing::TaskSpanContext context = tracing::TaskSpanContextOf(*report);
    if (!sampler.ShouldSample(context.trace_id, context.parent_sampled)) {
      counters.not_sampled->Increment();
      return JsonAnswer(202,
                        R"({"accepted":true,"stored":false,"reason":"the attempt's trace is not sampled"})");
    }
    if (auto admitted = ledger.Admit(*report, context); !admitted.ok()) {
      counters.conflict->Increment();
      return ErrorAnswer(409, admitted.error());
    }
    counters.remembered->Set(static_cast<double>(ledger.size()));
    tracing::Span span = tracing::MakeAirflowTaskSpan(*report, context);
    const std::string trace_id = tracing::ToHex(span.trace_id);
    const std::string span_id = tracing::ToHex(span.span_id);
    if (report->running() || !context.own_span_id) {
      sink.SubmitLive(std::move(span));
    } else {
      sink.Submit(std::move(span));
    }
    counters.accepted->Increment();
    JsonWriter answer;
    answer.BeginObject().Key("accepted").Bool(true).Key("stored").Bool(true);
    answer.Key("trace_id").String(trace_id).Key("span_id").String(span_id).EndObject();
    return JsonAnswer(202, answer.Take());
  };
  return route;
}

}  // namespace sparktrace::tracing::airflow
