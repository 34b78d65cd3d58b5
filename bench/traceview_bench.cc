// sparktrace-traceview-bench: how fast the trace view's API answers at the scale.
//
// Builds a store the way the proxy fills it (SqliteSpanStore::Write in 512-span batches, the task
// index refreshed by every write):
//   - --traces small Airflow attempts (an operation span and its ExecutePlan RPC span, both with the
//     identity; 100 DAGs x 10 tasks x runs), as a long-running proxy accumulates them;
//   - one large attempt: --jobs jobs x --stages stages (200 x 100 = 20,000 stage spans) under 20
//     operations, with RPC, lifecycle (executor events, a finding) and phase spans, stages chained by
//     spark.stage.parent_ids.
// Then, interleaved over --runs rounds, times (wall clock, medians):
//   list_page          GET /api/v1/tasks (first page of 50, with the total count)
//   list_dag_filter    GET /api/v1/tasks?dag=dag-7
//   traces_list        baseline: SqliteSpanStore::ListTraces(50), the listing `traces list` uses
//   attempt_api        GET /api/v1/attempt?<the large attempt> (read, compute, JSON)
//   get_trace          baseline: SqliteSpanStore::GetTrace of the same trace (reading its spans only)
// and once: the seconds the writes took. Prints one JSON object on stdout.
//
// Usage: sparktrace-traceview-bench [--store PATH] [--traces N] [--jobs N] [--stages N] [--runs N] [--keep]
//   Without --keep the store (default: a temporary file) is deleted at the end; with it, its path and
//   the large attempt's page path are in the JSON, for the browser benchmark.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/http_caching.h"
#include "traceview/trace_view_api.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/sqlite_span_store.h"

namespace {

namespace fs = std::filesystem;
namespace tracing = sparktrace::tracing;
using sparktrace::tracing::Span;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kBase = 1'764'050'400'000'000'000ULL;
constexpr std::uint64_t kMs = 1'000'000ULL;

struct Options {
  std::string store;
  std::size_t traces = 100'000;
  int jobs = 200;
  int stages = 100;
  int runs = 7;
  bool keep = false;
};

sparktrace::tracing::TraceId TraceOf(std::uint64_t n) {
  sparktrace::tracing::TraceId id{};
  id[0] = 0x5b;
  for (int i = 0; i < 8; ++i) id[15 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

sparktrace::tracing::SpanId SpanOf(std::uint64_t n) {
  sparktrace::tracing::SpanId id{};
  id[0] = 0x7c;
  for (int i = 0; i < 7; ++i) id[7 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

Span MakeSpan(std::uint64_t trace, std::uint64_t id, std::uint64_t parent, std::string_view name,
              std::uint64_t start_ms, std::uint64_t end_ms) {
  Span span;
  span.trace_id = TraceOf(trace);
  span.span_id = SpanOf(id);
  if (parent != 0) span.parent_span_id = SpanOf(parent);
  span.name = std::string(name);
  span.start_time_unix_nano = kBase + start_ms * kMs;
  span.end_time_unix_nano = kBase + end_ms * kMs;
  return span;
}

void Identify(Span& span, const std::string& dag, const std::string& task, const std::string& run) {
  span.attributes.push_back({std::string(tracing::kAirflowDagIdKey), dag});
  span.attributes.push_back({std::string(tracing::kAirflowTaskIdKey), task});
  span.attributes.push_back({std::string(tracing::kAirflowRunIdKey), run});
  span.attributes.push_back({std::string(tracing::kAirflowTryNumberKey), std::int64_t{1}});
}

std::vector<Span> SmallAttempt(std::uint64_t n) {
  const std::string dag = "dag-" + std::to_string(n % 100);
  const std::string task = "task-" + std::to_string((n / 100) % 10);
  const std::string run = "scheduled__run-" + std::to_string(n / 1000);
  const std::uint64_t start = n * 60'000;
  Span operation = MakeSpan(n + 1, 1, 0, tracing::kSparkConnectOperationSpanName, start, start + 30'000);
  Identify(operation, dag, task, run);
  Span rpc = MakeSpan(n + 1, 2, 1, std::string(tracing::kSparkConnectRpcSpanPrefix) + "ExecutePlan", start,
                      start + 30'000);
  Identify(rpc, dag, task, run);
  return {std::move(operation), std::move(rpc)};
}

// The large attempt: operations of jobs of chained stages, as the listener builds them.
std::vector<Span> LargeAttempt(std::uint64_t trace, int jobs, int stages, std::uint64_t start) {
  std::vector<Span> spans;
  std::uint64_t next_id = 1;
  constexpr int kOperations = 20;
  const int jobs_per_operation = std::max(1, jobs / kOperations);
  std::uint64_t clock = start;
  int stage_id = 0;
  for (int op = 0; op < kOperations; ++op) {
    const std::uint64_t op_id = next_id++;
    const std::uint64_t op_start = clock;
    const std::uint64_t op_end =
        op_start + static_cast<std::uint64_t>(jobs_per_operation) * stages * 100 + 2'000;
    Span operation = MakeSpan(trace, op_id, 0, tracing::kSparkConnectOperationSpanName, op_start, op_end);
    Identify(operation, "big_dag", "big_task", "scheduled__big");
    operation.attributes.push_back(
        {std::string(tracing::kSparkConnectOperationIdKey), "big-op-" + std::to_string(op)});
    operation.attributes.push_back({std::string(tracing::kSparkConnectPlanKindKey), std::string("root")});
    operation.attributes.push_back({std::string(tracing::kSparkConnectResultRowsKey), std::int64_t{1000}});
    spans.push_back(std::move(operation));
    Span rpc = MakeSpan(trace, next_id++, op_id,
                        std::string(tracing::kSparkConnectRpcSpanPrefix) + "ExecutePlan", op_start, op_end);
    Identify(rpc, "big_dag", "big_task", "scheduled__big");
    spans.push_back(std::move(rpc));
    Span lifecycle =
        MakeSpan(trace, next_id++, op_id, tracing::kSparkConnectLifecycleSpanName, op_start + 1, op_end - 1);
    lifecycle.attributes.push_back(
        {std::string(tracing::kExecutorsActiveAtStart), std::int64_t{op == 0 ? 0 : 8}});
    if (op == 0) {
      for (int executor = 0; executor < 8; ++executor) {
        lifecycle.events.push_back(
            {std::string(tracing::kExecutorAddedEvent),
             kBase + (op_start + 1'000 + static_cast<std::uint64_t>(executor) * 100) * kMs,
             {{std::string(tracing::kExecutorIdKey), std::to_string(executor)},
              {std::string(tracing::kExecutorCores), std::int64_t{4}},
              {std::string(tracing::kExecutorsActive), std::int64_t{executor + 1}}}});
      }
      lifecycle.events.push_back(
          {std::string(tracing::kFindingEventName),
           kBase + op_end * kMs,
           {{std::string(tracing::kFindingIdKey), std::string("resource-wait-long")},
            {std::string(tracing::kFindingSeverityKey), std::string("critical")},
            {std::string(tracing::kFindingTitleKey), std::string("waited for executors")},
            {std::string(tracing::kFindingImpactSecondsKey), 1.5}}});
    }
    spans.push_back(std::move(lifecycle));
    std::uint64_t job_clock = op_start + 1'000;
    for (int job = 0; job < jobs_per_operation; ++job) {
      const std::uint64_t job_id = next_id++;
      const std::uint64_t job_start = job_clock;
      Span job_span = MakeSpan(trace, job_id, op_id, tracing::kSparkJobSpanName, job_start,
                               job_start + static_cast<std::uint64_t>(stages) * 100);
      job_span.attributes.push_back(
          {std::string(tracing::kSparkJobIdKey), std::int64_t{op * jobs_per_operation + job}});
      job_span.attributes.push_back({std::string(tracing::kSparkJobStatusKey), std::string("succeeded")});
      spans.push_back(std::move(job_span));
      for (int stage = 0; stage < stages; ++stage) {
        const std::uint64_t stage_start = job_start + static_cast<std::uint64_t>(stage) * 100;
        Span stage_span =
            MakeSpan(trace, next_id++, job_id, tracing::kSparkStageSpanName, stage_start, stage_start + 95);
        stage_span.attributes.push_back({std::string(tracing::kSparkStageIdKey), std::int64_t{stage_id}});
        stage_span.attributes.push_back({std::string(tracing::kSparkStageAttemptKey), std::int64_t{0}});
        stage_span.attributes.push_back({std::string(tracing::kSparkStageTasksKey), std::int64_t{64}});
        stage_span.attributes.push_back(
            {std::string(tracing::kSparkStageTaskDurationP95Key), std::int64_t{90}});
        std::vector<std::string> parents;
        if (stage > 0) parents.push_back(std::to_string(stage_id - 1));
        stage_span.attributes.push_back({std::string(tracing::kSparkStageParentIdsKey), std::move(parents)});
        spans.push_back(std::move(stage_span));
        ++stage_id;
      }
      job_clock += static_cast<std::uint64_t>(stages) * 100;
    }
    Span compute = MakeSpan(trace, next_id++, op_id, std::string(tracing::kSparkPhasePrefix) + "compute",
                            op_start + 1'000, job_clock);
    compute.attributes.push_back({std::string(tracing::kSparkPhaseDurationMsKey),
                                  static_cast<std::int64_t>(job_clock - op_start - 1'000)});
    spans.push_back(std::move(compute));
    clock = op_end + 500;
  }
  return spans;
}

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--store") {
      options.store = value();
    } else if (arg == "--traces") {
      options.traces = std::stoul(value());
    } else if (arg == "--jobs") {
      options.jobs = std::stoi(value());
    } else if (arg == "--stages") {
      options.stages = std::stoi(value());
    } else if (arg == "--runs") {
      options.runs = std::stoi(value());
    } else if (arg == "--keep") {
      options.keep = true;
    } else {
      std::cerr << "sparktrace-traceview-bench: unknown argument " << arg << "\n";
      return false;
    }
  }
  return true;
}

sparktrace::admin::HttpRequest Request(const std::string& path, const std::string& query = "") {
  sparktrace::admin::HttpRequest request;
  request.path = path;
  request.query = query;
  request.header = [](const std::string&) { return std::nullopt; };
  return request;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) return 2;
  if (options.store.empty()) {
    options.store =
        (fs::temp_directory_path() / ("sparktrace-traceview-bench-" + std::to_string(::getpid()) + ".db"))
            .string();
  }
  fs::remove(options.store);
  auto opened = sparktrace::tracing::store::SqliteSpanStore::Open(options.store);
  if (!opened.ok()) {
    std::cerr << opened.error().message << "\n";
    return 1;
  }
  auto& store = *opened;
  const auto write = [&store](const std::vector<Span>& spans) {
    for (std::size_t first = 0; first < spans.size(); first += 512) {
      const std::size_t count = std::min<std::size_t>(512, spans.size() - first);
      auto written = store->Write(std::span<const Span>(spans.data() + first, count));
      if (!written.ok()) {
        std::cerr << written.error().message << "\n";
        std::exit(1);
      }
    }
  };
  const auto small_start = Clock::now();
  std::vector<Span> batch;
  for (std::size_t n = 0; n < options.traces; ++n) {
    for (Span& span : SmallAttempt(n)) batch.push_back(std::move(span));
    if (batch.size() >= 512) {
      write(batch);
      batch.clear();
    }
  }
  write(batch);
  const double small_write_s = Seconds(Clock::now() - small_start);
  const std::vector<Span> large =
      LargeAttempt(options.traces + 10, options.jobs, options.stages, options.traces * 60'000 + 120'000);
  const auto large_start = Clock::now();
  write(large);
  const double large_write_s = Seconds(Clock::now() - large_start);

  sparktrace::traceview::TraceViewApi api(
      sparktrace::traceview::TraceViewOptions{sparktrace::tracing::store::SqliteAt(options.store)});
  const std::string attempt_query = "dag=big_dag&task=big_task&run=scheduled__big&try=1";
  std::vector<double> list_page, list_dag, traces_list, attempt, get_trace;
  std::size_t attempt_bytes = 0;
  std::size_t attempt_gzip_bytes = 0;
  std::int64_t total = 0;
  std::size_t spans_answered = 0;
  for (int run = 0; run < options.runs; ++run) {
    auto start = Clock::now();
    const auto listed = api.Handle(Request("/api/v1/tasks"));
    list_page.push_back(Seconds(Clock::now() - start) * 1e3);
    total = nlohmann::json::parse(listed->body)["total"].get<std::int64_t>();

    start = Clock::now();
    (void)api.Handle(Request("/api/v1/tasks", "dag=dag-7"));
    list_dag.push_back(Seconds(Clock::now() - start) * 1e3);

    start = Clock::now();
    (void)store->ListTraces({.limit = 50});
    traces_list.push_back(Seconds(Clock::now() - start) * 1e3);

    start = Clock::now();
    const auto answered = api.Handle(Request("/api/v1/attempt", attempt_query));
    attempt.push_back(Seconds(Clock::now() - start) * 1e3);
    if (!answered || answered->status != 200) {
      std::cerr << "the large attempt was not answered: " << (answered ? answered->body : "nullopt") << "\n";
      return 1;
    }
    attempt_bytes = answered->body.size();
    spans_answered = nlohmann::json::parse(answered->body)["spans"].size();
    attempt_gzip_bytes = sparktrace::admin::Gzip(answered->body).value_or("").size();

    start = Clock::now();
    (void)store->GetTrace(TraceOf(options.traces + 10));
    get_trace.push_back(Seconds(Clock::now() - start) * 1e3);
  }
  const nlohmann::ordered_json figures = {
      {"benchmark", "traceview_api"},
      {"store",
       {{"attempts_listed", total},
        {"large_attempt_spans", large.size()},
        {"bytes", fs::file_size(options.store)}}},
      {"runs", options.runs},
      {"median_ms",
       {{"list_page", Median(list_page)},
        {"list_dag_filter", Median(list_dag)},
        {"traces_list_baseline", Median(traces_list)},
        {"attempt_api", Median(attempt)},
        {"get_trace_baseline", Median(get_trace)}}},
      {"attempt_answer",
       {{"spans", spans_answered}, {"json_bytes", attempt_bytes}, {"gzip_bytes", attempt_gzip_bytes}}},
      {"write_seconds",
       {{"small_attempts", small_write_s}, {"large_attempt_512_span_batches", large_write_s}}},
      {"kept_store", options.keep ? options.store : ""},
      {"large_attempt_page", "/attempt?" + attempt_query},
  };
  std::cout << figures.dump(2) << "\n";
  store.reset();
  if (!options.keep) {
    fs::remove(options.store);
    fs::remove(options.store + "-wal");
    fs::remove(options.store + "-shm");
  }
  return 0;
}
