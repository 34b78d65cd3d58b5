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
//   attempt_revalidate the large attempt again with If-None-Match: its ETag (a 304 where the server
//                      answers it from the index; else the whole answer, then its bytes hashed, as the
//                      admin server does for a handler that sets no ETag)
//   attempt_http_cpu   attempt_api + the admin server's ETag hash (when the handler set none) + gzip: the
//                      server's CPU for one page load's answer, built (a view without answer cache)
//   warm_http_cpu      the same for a load after another viewer's (a view with its default answer
//                      cache, where the build has one)
//   (each as wall time `*_ms` and as the process's CPU time under `cpu_ms`)
// and the same three for --calls one-span traces of one attempt (`calls_*`: a client that sends no
// traceparent, a Config call per trace), and once: the seconds the writes took. Prints one JSON object.
//
// Usage: sparktrace-traceview-bench [--store PATH] [--traces N] [--jobs N] [--stages N] [--calls N]
//                                   [--runs N] [--keep]
//   Without --keep the store (default: a temporary file) is deleted at the end; with it, its path and
//   the large attempt's page path are in the JSON, for the browser benchmark.

#include <time.h>
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
#include "tracing/store/sqlite/sqlite_span_store.h"

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
  std::size_t calls = 48'000;
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

void Add(Span& span, std::string_view key, tracing::AttributeValue value) {
  span.attributes.push_back({std::string(key), std::move(value)});
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

// One call of an attempt whose client sends no traceparent: a trace of its own, one RPC span with the
// identity and what the proxy records of a call.
Span ConfigCall(std::uint64_t trace, std::uint64_t n, std::uint64_t start) {
  Span call =
      MakeSpan(trace, 1, 0, std::string(tracing::kSparkConnectRpcSpanPrefix) + "Config", start, start + 2);
  call.kind = tracing::SpanKind::kServer;
  Identify(call, "calls_dag", "calls_task", "scheduled__calls");
  Add(call, tracing::kRpcSystemKey, std::string(tracing::kRpcSystemGrpc));
  Add(call, tracing::kRpcServiceKey, std::string(tracing::kSparkConnectServiceName));
  Add(call, tracing::kRpcMethodKey, std::string("Config"));
  Add(call, tracing::kRpcGrpcStatusCodeKey, std::int64_t{0});
  Add(call, tracing::kSparkConnectSessionIdKey,
      "0f6d3c1e-7a0b-4d52-9a43-" + std::to_string(100000000000 + n % 7));
  // What a client's own attributes add to a call's size (not sparktrace's vocabulary).
  Add(call, "client.user_agent", std::string("_SPARK_CONNECT_PYTHON spark/3.5.1 os/linux python/3.11.9"));
  Add(call, "client.config_operation", std::string("get_option"));
  Add(call, "net.peer.name", std::string("airflow-worker-3.airflow.svc.cluster.local"));
  return call;
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
    Add(operation, tracing::kSparkConnectOperationIdKey, "big-op-" + std::to_string(op));
    operation.attributes.push_back({std::string(tracing::kSparkConnectPlanKindKey), std::string("root")});
    operation.attributes.push_back({std::string(tracing::kSparkConnectResultRowsKey), std::int64_t{1000}});
    spans.push_back(std::move(operation));
    Span rpc = MakeSpan(trace, next_id++, op_id,
                        std::string(tracing::kSparkConnectRpcSpanPrefix) + "ExecutePlan", op_start, op_end);
    Identify(rpc, "big_dag", "big_task", "scheduled__big");
    spans.push_back(std::move(rpc));
    Span lifecycle =
        MakeSpan(trace, next_id++, op_id, tracing::kSparkConnectLifecycleSpanName, op_start + 1, op_end - 1);
    Add(lifecycle, tracing::kExecutorsActiveAtStart, std::int64_t{op == 0 ? 0 : 8});
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
      Add(job_span, tracing::kSparkJobIdKey, std::int64_t{op * jobs_per_operation + job});
      job_span.attributes.push_back({std::string(tracing::kSparkJobStatusKey), std::string("succeeded")});
      spans.push_back(std::move(job_span));
      for (int stage = 0; stage < stages; ++stage) {
        const std::uint64_t stage_start = job_start + static_cast<std::uint64_t>(stage) * 100;
        Span stage_span =
            MakeSpan(trace, next_id++, job_id, tracing::kSparkStageSpanName, stage_start, stage_start + 95);
        stage_span.attributes.push_back({std::string(tracing::kSparkStageIdKey), std::int64_t{stage_id}});
        stage_span.attributes.push_back({std::string(tracing::kSparkStageAttemptKey), std::int64_t{0}});
        stage_span.attributes.push_back({std::string(tracing::kSparkStageTasksKey), std::int64_t{64}});
        Add(stage_span, tracing::kSparkStageTaskDurationP95Key, std::int64_t{90});
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
    Add(compute, tracing::kSparkPhaseDurationMsKey, static_cast<std::int64_t>(job_clock - op_start - 1'000));
    spans.push_back(std::move(compute));
    clock = op_end + 500;
  }
  return spans;
}

double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

// The process's CPU time in ms: on a busy machine wall times wander with the neighbours' load, the CPU
// a request costs does not (the bench is one thread).
double CpuMs() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

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
    } else if (arg == "--calls") {
      options.calls = std::stoul(value());
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

sparktrace::admin::HttpRequest Request(const std::string& path, const std::string& query = "",
                                       const std::string& if_none_match = "", bool gzip = false) {
  sparktrace::admin::HttpRequest request;
  request.path = path;
  request.query = query;
  request.header = [if_none_match, gzip](const std::string& name) -> std::optional<std::string> {
    if (name == "If-None-Match" && !if_none_match.empty()) return if_none_match;
    if (name == "Accept-Encoding" && gzip) return std::string("gzip, deflate, br");
    return std::nullopt;
  };
  return request;
}

const std::string* HeaderOf(const sparktrace::admin::HttpResponse& response, std::string_view name) {
  for (const auto& [header, value] : response.headers) {
    if (header == name) return &value;
  }
  return nullptr;
}

// What the admin server adds to a handler's 200 (admin_routes.cc): the ETag of the bytes when the
// handler set none, and gzip when the handler did not compress. The answer's bytes as sent.
std::string AsServed(const sparktrace::admin::HttpResponse& response) {
  if (HeaderOf(response, "ETag") == nullptr) (void)sparktrace::admin::EntityTag(response.body);
  if (HeaderOf(response, "Content-Encoding") != nullptr) return response.body;
  return sparktrace::admin::Gzip(response.body).value_or("");
}

// Turns the answer cache off where the build has one (the baseline has none), so that a request
// measures building the answer.
template <typename ViewOptions>
void WithoutAnswerCache(ViewOptions& options) {
  if constexpr (requires { options.cache_bytes; }) options.cache_bytes = 0;
}

// One attempt's answer timed as the server makes it (see the top of the file), over `runs` rounds.
struct AttemptTimes {
  std::vector<double> api_ms, revalidate_ms, http_cpu_ms, warm_http_cpu_ms;
  std::vector<double> api_cpu_ms, revalidate_cpu_ms, http_cpu_cpu_ms, warm_http_cpu_cpu_ms;
  std::size_t json_bytes = 0, gzip_bytes = 0, spans = 0;
  std::int64_t span_groups = -1;  // -1: the answer has no span_groups (a server without the bound)
  int revalidate_status = 0;

  // `cold`: a view without an answer cache; `warm`: one with its default cache, asked once before.
  bool Measure(sparktrace::traceview::TraceViewApi& cold, sparktrace::traceview::TraceViewApi& warm,
               const std::string& query) {
    auto start = Clock::now();
    double cpu = CpuMs();
    const auto answered = cold.Handle(Request("/api/v1/attempt", query));
    const double api = Seconds(Clock::now() - start) * 1e3;
    const double api_cpu = CpuMs() - cpu;
    if (!answered || answered->status != 200) {
      std::cerr << "attempt " << query << " was not answered: " << (answered ? answered->body : "nullopt")
                << "\n";
      return false;
    }
    start = Clock::now();
    cpu = CpuMs();
    const std::string gzip = AsServed(*answered);
    http_cpu_ms.push_back(api + Seconds(Clock::now() - start) * 1e3);
    http_cpu_cpu_ms.push_back(api_cpu + CpuMs() - cpu);
    api_ms.push_back(api);
    api_cpu_ms.push_back(api_cpu);
    json_bytes = answered->body.size();
    gzip_bytes = gzip.size();
    const auto json = nlohmann::json::parse(answered->body);
    spans = json["spans"].size();
    if (json.contains("span_groups")) span_groups = static_cast<std::int64_t>(json["span_groups"].size());
    const std::string* etag = HeaderOf(*answered, "ETag");
    const std::string tag = etag != nullptr ? *etag : sparktrace::admin::EntityTag(answered->body);

    start = Clock::now();
    cpu = CpuMs();
    const auto again = cold.Handle(Request("/api/v1/attempt", query, tag));
    // Without a 304 from the handler, the admin server hashes the body to find that the tags match.
    if (again && again->status == 200) (void)sparktrace::admin::EntityTag(again->body);
    revalidate_ms.push_back(Seconds(Clock::now() - start) * 1e3);
    revalidate_cpu_ms.push_back(CpuMs() - cpu);
    revalidate_status = again ? again->status : 0;

    (void)warm.Handle(Request("/api/v1/attempt", query, "", true));  // someone loaded it before
    start = Clock::now();
    cpu = CpuMs();
    const auto loaded = warm.Handle(Request("/api/v1/attempt", query, "", true));
    if (loaded) (void)AsServed(*loaded);
    warm_http_cpu_ms.push_back(Seconds(Clock::now() - start) * 1e3);
    warm_http_cpu_cpu_ms.push_back(CpuMs() - cpu);
    return true;
  }
};

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
  std::vector<Span> calls;
  const std::uint64_t calls_start = options.traces * 60'000 + 10'000'000;
  for (std::size_t n = 0; n < options.calls; ++n) {
    calls.push_back(ConfigCall(options.traces + 100 + n, n, calls_start + n * 5));
  }
  const auto calls_write_start = Clock::now();
  write(calls);
  const double calls_write_s = Seconds(Clock::now() - calls_write_start);

  sparktrace::traceview::TraceViewApi api(
      sparktrace::traceview::TraceViewOptions{sparktrace::tracing::store::SqliteAt(options.store)});
  sparktrace::traceview::TraceViewOptions cold_options{sparktrace::tracing::store::SqliteAt(options.store)};
  WithoutAnswerCache(cold_options);
  sparktrace::traceview::TraceViewApi cold(cold_options);
  sparktrace::traceview::TraceViewApi warm(
      sparktrace::traceview::TraceViewOptions{sparktrace::tracing::store::SqliteAt(options.store)});
  const std::string attempt_query = "dag=big_dag&task=big_task&run=scheduled__big&try=1";
  const std::string calls_query = "dag=calls_dag&task=calls_task&run=scheduled__calls&try=1";
  AttemptTimes large_times, calls_times;
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
    const auto answered = cold.Handle(Request("/api/v1/attempt", attempt_query));
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

    if (!large_times.Measure(cold, warm, attempt_query)) return 1;
    if (options.calls > 0 && !calls_times.Measure(cold, warm, calls_query)) return 1;
  }
  const auto times_json = [](const AttemptTimes& times) {
    return nlohmann::ordered_json{{"api_ms", Median(times.api_ms)},
                                  {"revalidate_ms", Median(times.revalidate_ms)},
                                  {"revalidate_status", times.revalidate_status},
                                  {"http_cpu_ms", Median(times.http_cpu_ms)},
                                  {"warm_http_cpu_ms", Median(times.warm_http_cpu_ms)},
                                  {"cpu_ms",
                                   {{"api", Median(times.api_cpu_ms)},
                                    {"revalidate", Median(times.revalidate_cpu_ms)},
                                    {"http_cpu", Median(times.http_cpu_cpu_ms)},
                                    {"warm_http_cpu", Median(times.warm_http_cpu_cpu_ms)}}},
                                  {"spans_listed", times.spans},
                                  {"span_groups", times.span_groups},
                                  {"json_bytes", times.json_bytes},
                                  {"gzip_bytes", times.gzip_bytes}};
  };
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
      {"large_attempt", times_json(large_times)},
      {"calls_attempt", options.calls > 0 ? times_json(calls_times) : nlohmann::ordered_json(nullptr)},
      {"calls", options.calls},
      {"write_seconds",
       {{"small_attempts", small_write_s},
        {"large_attempt_512_span_batches", large_write_s},
        {"calls_512_span_batches", calls_write_s}}},
      {"kept_store", options.keep ? options.store : ""},
      {"large_attempt_page", "/attempt?" + attempt_query},
      {"calls_attempt_page", "/attempt?" + calls_query},
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
