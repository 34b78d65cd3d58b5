#pragma once
// Hand-made spans for the task index and trace view API tests: Airflow attempts in the shapes the
// proxy and the listener store them (identity on the proxy's spans, none on the driver's).

#include <cstdint>
#include <string>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::traceview_test {

inline constexpr std::uint64_t kBase = 1'764'050'400'000'000'000ULL;  // 2025-11-25T06:00:00Z in ns
inline constexpr std::uint64_t kMs = 1'000'000ULL;

inline tracing::TraceId TraceNumber(std::uint8_t n) {
  tracing::TraceId id{};
  id[0] = 0xab;
  id[15] = n;
  return id;
}

inline tracing::SpanId SpanNumber(std::uint8_t trace, std::uint16_t n) {
  tracing::SpanId id{};
  id[0] = trace;
  id[6] = static_cast<std::uint8_t>(n >> 8);
  id[7] = static_cast<std::uint8_t>(n & 0xff);
  return id;
}

inline tracing::Span NewSpan(std::uint8_t trace, std::uint16_t id, std::uint16_t parent, std::string name,
                             std::uint64_t start_ms, std::uint64_t end_ms) {
  tracing::Span span;
  span.trace_id = TraceNumber(trace);
  span.span_id = SpanNumber(trace, id);
  if (parent != 0) span.parent_span_id = SpanNumber(trace, parent);
  span.name = std::move(name);
  span.start_time_unix_nano = kBase + start_ms * kMs;
  span.end_time_unix_nano = kBase + end_ms * kMs;
  return span;
}

inline void AddIdentity(tracing::Span& span, const std::string& dag, const std::string& task,
                        const std::string& run, std::int64_t try_number) {
  span.attributes.push_back({"airflow.dag_id", dag});
  span.attributes.push_back({"airflow.task_id", task});
  span.attributes.push_back({"airflow.run_id", run});
  span.attributes.push_back({"airflow.try_number", try_number});
}

inline tracing::SpanEvent Finding(const std::string& id, double impact_seconds) {
  return tracing::SpanEvent{"sparktrace.finding",
                            kBase,
                            {{"finding.id", id},
                             {"finding.key", id + "@op"},
                             {"finding.severity", std::string("critical")},
                             {"finding.title", "title of " + id},
                             {"finding.impact_seconds", impact_seconds},
                             {"finding.recipe", std::string("docs/recipes/troubleshoot/" + id + ".md")},
                             {"finding.fix", std::vector<std::string>{"spark.executor.instances=4"}},
                             {"finding.evidence", std::vector<std::string>{"wait=3 s (>= 1)"}}}};
}

// One operation of an attempt in trace `trace`, numbered from `first_id`: operation [start, start+1000]
// ms with its ExecutePlan RPC, a lifecycle span holding `findings`, a job (status `job_status`) with
// one stage, and phase spans resource_wait [start, start+600] and compute [start+600, start+900].
inline std::vector<tracing::Span> Operation(std::uint8_t trace, std::uint16_t first_id, std::uint16_t parent,
                                            std::uint64_t start, const std::string& dag,
                                            const std::string& task, const std::string& run,
                                            std::int64_t try_number,
                                            std::vector<tracing::SpanEvent> findings = {},
                                            const std::string& job_status = "succeeded") {
  std::vector<tracing::Span> spans;
  tracing::Span operation = NewSpan(trace, first_id, parent, "spark_connect.operation", start, start + 1000);
  AddIdentity(operation, dag, task, run, try_number);
  operation.attributes.push_back(
      {"spark.connect.operation_id", "op-" + std::to_string(trace) + "-" + std::to_string(first_id)});
  operation.attributes.push_back({"spark.connect.plan_kind", std::string("root")});
  operation.attributes.push_back({"spark.connect.result.rows", std::int64_t{10}});
  spans.push_back(operation);
  tracing::Span rpc = NewSpan(trace, first_id + 1, first_id, "spark.connect.SparkConnectService/ExecutePlan",
                              start, start + 1000);
  rpc.kind = tracing::SpanKind::kServer;
  rpc.attributes.push_back({"rpc.method", std::string("ExecutePlan")});
  AddIdentity(rpc, dag, task, run, try_number);
  spans.push_back(rpc);
  tracing::Span lifecycle =
      NewSpan(trace, first_id + 2, first_id, "spark.connect.operation.lifecycle", start + 5, start + 990);
  lifecycle.attributes.push_back({"spark.app.id", std::string("app-20251125-0001")});
  lifecycle.events = std::move(findings);
  spans.push_back(lifecycle);
  tracing::Span job = NewSpan(trace, first_id + 3, first_id, "spark.job", start + 10, start + 900);
  job.attributes.push_back({"spark.job.id", std::int64_t{first_id}});
  job.attributes.push_back({"spark.job.status", job_status});
  spans.push_back(job);
  tracing::Span stage = NewSpan(trace, first_id + 4, first_id + 3, "spark.stage", start + 600, start + 900);
  stage.attributes.push_back({"spark.stage.id", std::int64_t{first_id}});
  stage.attributes.push_back({"spark.stage.parent_ids", std::vector<std::string>{}});
  spans.push_back(stage);
  tracing::Span wait =
      NewSpan(trace, first_id + 5, first_id, "spark.phase.resource_wait", start, start + 600);
  wait.attributes.push_back({"spark.phase.duration_ms", std::int64_t{600}});
  spans.push_back(wait);
  tracing::Span compute =
      NewSpan(trace, first_id + 6, first_id, "spark.phase.compute", start + 600, start + 900);
  compute.attributes.push_back({"spark.phase.duration_ms", std::int64_t{300}});
  spans.push_back(compute);
  return spans;
}

}  // namespace sparktrace::traceview_test
