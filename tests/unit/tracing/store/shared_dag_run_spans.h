#pragma once
// One Airflow 2.10 DAG run as a store receives it, for the tests of "an attempt is (dag, task, run,
// try, map) wherever its spans sit" (the store's conformance suite and the trace view's API tests).
//
// Airflow 2.10 with OpenTelemetry gives every task of a DAG run one trace, and each task instance a
// span id derived from (dag, run, task, try) without the map index: the mapped instances of a task
// share it (integrations/airflow: airflow_210_task_span_id). The proxy's spans name that span as their
// parent and carry their attempt's identity. In the trace:
//   - the DAG run's own span (Airflow's, no task: it belongs to no attempt);
//   - load_orders try 1, unmapped, failed (its operation failed), and its retry, try 2, with a phase;
//   - publish map 3 and publish map 4, try 1, both under the one Airflow task span id: map 3 with a
//     lifecycle, a job and two phases, and its Airflow task report (the "airflow.task" span taking
//     that id); map 4 with a job still running, its RPC span carrying the map index as text (a header
//     forwarded as it came).
// The spans arrive in three writes: the report before, between or after the two writes of Spark spans
// (each write of an existing trace makes the stores re-read it).

#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/airflow_task_report.h"
#include "tracing/span.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::tracing::store::shared_dag_run {

enum class ReportArrives { kBefore, kBetween, kAfter };

inline const char* Name(ReportArrives arrives) {
  switch (arrives) {
    case ReportArrives::kBefore:
      return "before";
    case ReportArrives::kBetween:
      return "between";
    case ReportArrives::kAfter:
      return "after";
  }
  return "?";
}

inline constexpr std::uint32_t kAirflowTaskSpanOfLoadTry1 = 10;
inline constexpr std::uint32_t kAirflowTaskSpanOfLoadTry2 = 20;
inline constexpr std::uint32_t kAirflowTaskSpanOfPublish = 30;  // map 3's and map 4's

// What the index and the trace view must show for one attempt.
struct ExpectedAttempt {
  TaskAttemptKey key;
  std::uint64_t start_unix_nano = 0;
  std::uint64_t end_unix_nano = 0;
  std::int64_t span_count = 0;
  std::int64_t error_count = 0;
  std::int64_t open_count = 0;
  std::string state;
  std::int64_t resource_wait_ms = 0;
  std::int64_t compute_ms = 0;
  std::vector<std::uint32_t> spans;  // the spans of its page (testing_spans::SpanIdOf numbers)
  bool reported = false;             // its Airflow task report is among them
};

struct DagRun {
  TraceId trace_id{};
  std::string run_id;
  std::uint64_t base = 0;                 // unix nanos its times count from
  std::vector<std::vector<Span>> writes;  // in arrival order
  std::vector<ExpectedAttempt> attempts;  // load_orders try 1 and 2, publish map 3 and 4
};

// The DAG run in trace `trace` (testing_spans::TraceIdOf), run id "<arrives>_<trace>", its times
// `trace` seconds after testing_spans::kBase.
inline DagRun MakeDagRun(std::uint32_t trace, ReportArrives arrives) {
  using testing_spans::kBase;
  using testing_spans::kMs;
  DagRun run;
  run.trace_id = testing_spans::TraceIdOf(trace);
  run.run_id = std::string(Name(arrives)) + "_" + std::to_string(trace);
  run.base = kBase + std::uint64_t{trace} * 1000 * kMs;
  const std::uint64_t base = run.base;
  const auto span = [&](std::uint32_t id, std::uint32_t parent, std::string_view name, std::uint64_t start_ms,
                        std::uint64_t end_ms) {
    return testing_spans::MakeSpan(trace, id, parent, std::string(name), base + start_ms * kMs,
                                   base + end_ms * kMs);
  };
  const auto identity = [&](const char* task, std::int64_t try_number, std::int64_t map_index) {
    return std::vector<Attribute>{{std::string(kAirflowDagIdKey), std::string("etl")},
                                  {std::string(kAirflowTaskIdKey), std::string(task)},
                                  {std::string(kAirflowRunIdKey), run.run_id},
                                  {std::string(kAirflowTryNumberKey), try_number},
                                  {std::string(kAirflowMapIndexKey), map_index}};
  };
  const auto with = [](Span s, std::vector<Attribute> attributes) {
    s.attributes.insert(s.attributes.end(), attributes.begin(), attributes.end());
    return s;
  };
  const auto job = [&](std::uint32_t id, std::uint32_t parent, std::uint64_t start_ms, std::uint64_t end_ms,
                       const char* status) {
    Span s = with(span(id, parent, kSparkJobSpanName, start_ms, end_ms),
                  {{std::string(kSparkJobIdKey), std::int64_t{id}},
                   {std::string(kSparkJobStatusKey), std::string(status)}});
    if (std::string_view(status) == "failed") s.status_code = StatusCode::kError;
    return s;
  };
  const auto phase = [&](std::uint32_t id, std::uint32_t parent, const char* name, std::uint64_t start_ms,
                         std::uint64_t end_ms) {
    return with(span(id, parent, std::string(kSparkPhasePrefix) + name, start_ms, end_ms),
                {{std::string(kSparkPhaseDurationMsKey), static_cast<std::int64_t>(end_ms - start_ms)}});
  };
  const std::string rpc_name = std::string(kSparkConnectRpcSpanPrefix) + "ExecutePlan";

  // Airflow's DAG-run span: a dag, no task; nobody's attempt.
  const Span dag_run = with(
      span(1, 0, "dag_run.etl", 0, 400),
      {{std::string(kAirflowDagIdKey), std::string("etl")}, {std::string(kAirflowRunIdKey), run.run_id}});

  // load_orders try 1: its operation failed.
  Span load1_operation = with(span(11, kAirflowTaskSpanOfLoadTry1, kSparkConnectOperationSpanName, 10, 110),
                              identity("load_orders", 1, -1));
  load1_operation.status_code = StatusCode::kError;
  const Span load1_rpc = with(span(12, 11, rpc_name, 10, 110), identity("load_orders", 1, -1));
  const Span load1_job = job(13, 11, 20, 100, "failed");

  // load_orders try 2, the retry.
  const Span load2_operation =
      with(span(21, kAirflowTaskSpanOfLoadTry2, kSparkConnectOperationSpanName, 300, 390),
           identity("load_orders", 2, -1));
  const Span load2_rpc = with(span(22, 21, rpc_name, 300, 390), identity("load_orders", 2, -1));
  const Span load2_compute = phase(23, 21, "compute", 310, 370);

  // publish map 3, under the Airflow task span it shares with map 4.
  const Span map3_operation =
      with(span(31, kAirflowTaskSpanOfPublish, kSparkConnectOperationSpanName, 120, 220),
           identity("publish", 1, 3));
  const Span map3_rpc = with(span(32, 31, rpc_name, 120, 220), identity("publish", 1, 3));
  const Span map3_lifecycle = with(span(33, 31, kSparkConnectLifecycleSpanName, 121, 219),
                                   {{std::string(kSparkAppIdKey), std::string("app-20240501-0001")}});
  const Span map3_job = job(34, 31, 130, 210, "succeeded");
  const Span map3_wait = phase(35, 31, "resource_wait", 120, 160);
  const Span map3_compute = phase(36, 31, "compute", 160, 210);

  // publish map 4: the same Airflow task span id, a job still running.
  const Span map4_operation =
      with(span(41, kAirflowTaskSpanOfPublish, kSparkConnectOperationSpanName, 130, 240),
           identity("publish", 1, 4));
  std::vector<Attribute> map4_as_text = identity("publish", 1, 4);
  map4_as_text.back().value = std::string("4");
  const Span map4_rpc = with(span(42, 41, rpc_name, 130, 240), map4_as_text);
  const Span map4_job = job(43, 41, 140, 240, "running");

  // publish map 3's Airflow task report, as the report route makes its span.
  AirflowTaskReport report;
  report.identity = AirflowIdentity{"etl", "publish", run.run_id, 1, 3};
  report.state = "success";
  report.operator_class = "PublishOperator";
  report.start_unix_nano = base + 100 * kMs;
  report.end_unix_nano = base + 260 * kMs;
  TaskSpanContext context;
  context.trace_id = run.trace_id;
  context.span_id = testing_spans::SpanIdOf(kAirflowTaskSpanOfPublish);
  const Span map3_report = MakeAirflowTaskSpan(report, context);

  const std::vector<Span> spark_first = {dag_run,  load1_operation, load1_rpc, load1_job, map3_operation,
                                         map3_rpc, map4_operation,  map4_rpc,  map4_job};
  const std::vector<Span> spark_second = {map3_lifecycle,  map3_job,  map3_wait,    map3_compute,
                                          load2_operation, load2_rpc, load2_compute};
  const std::vector<Span> report_write = {map3_report};
  switch (arrives) {
    case ReportArrives::kBefore:
      run.writes = {report_write, spark_first, spark_second};
      break;
    case ReportArrives::kBetween:
      run.writes = {spark_first, report_write, spark_second};
      break;
    case ReportArrives::kAfter:
      run.writes = {spark_first, spark_second, report_write};
      break;
  }

  const auto at = [&](std::uint64_t ms) { return base + ms * kMs; };
  run.attempts = {
      ExpectedAttempt{TaskAttemptKey{"etl", "load_orders", run.run_id, 1, -1},
                      at(10),
                      at(110),
                      3,
                      1,
                      0,
                      "failed",
                      0,
                      0,
                      {11, 12, 13},
                      false},
      ExpectedAttempt{TaskAttemptKey{"etl", "load_orders", run.run_id, 2, -1},
                      at(300),
                      at(390),
                      3,
                      0,
                      0,
                      "success",
                      0,
                      60,
                      {21, 22, 23},
                      false},
      ExpectedAttempt{TaskAttemptKey{"etl", "publish", run.run_id, 1, 3},
                      at(100),
                      at(260),
                      7,
                      0,
                      0,
                      "success",
                      40,
                      50,
                      {30, 31, 32, 33, 34, 35, 36},
                      true},
      ExpectedAttempt{TaskAttemptKey{"etl", "publish", run.run_id, 1, 4},
                      at(130),
                      at(240),
                      3,
                      0,
                      1,
                      "running",
                      0,
                      0,
                      {41, 42, 43},
                      false},
  };
  return run;
}

}  // namespace sparktrace::tracing::store::shared_dag_run
