// sparktrace-store-bench: how many spans a second a trace store takes, the way the proxy's store
// exporter writes them (batches of --batch spans through SpanStore::Write), with K writers at once
// (each its own store object and thread, as K proxies on one shared PostgreSQL).
//
// Two shapes of traffic:
//   calls   every span its own trace: a Spark Connect Config call without Airflow identity, with the
//           attributes the proxy really records (the tracing benchmark's worst case for the store:
//           one trace summary and one task-index row per span)
//   tasks   Airflow task attempts of 50 spans each (an operation with its RPCs and driver spans),
//           written as they end: a batch carries parts of many attempts. --trace-spans N makes each
//           attempt N spans instead (20000: a long task whose one trace spans hundreds of batches), and
//           --attempt-traces M makes each attempt M such traces (--trace-spans 1 --attempt-traces 50000:
//           an attempt of a Config call per trace, each call carrying the task's identity but no
//           traceparent)
//   apps    the same traces without Airflow identity: a Spark application's root span (its id and
//           name) above the rest, as a driver feed writes an application no Airflow task submitted
//
// Prints one JSON object: spans, seconds, spans_per_s, cpu_s (process), cpu_us_per_span, and the
// store's row count afterwards as a check that nothing was lost.
//
// Usage: sparktrace-store-bench --store PATH|URL [--spans N] [--batch N] [--writers K] [--shape
// calls|tasks|apps]
//                               [--trace-spans N] [--attempt-traces M] [--ids time|random]

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tracing/span_vocabulary.h"
#include "tracing/store/open/open_span_store.h"
#include "tracing/store/span_store.h"
#include "tracing/store/store_location.h"

namespace {

namespace tracing = sparktrace::tracing;
using sparktrace::tracing::Attribute;
using sparktrace::tracing::Span;
using sparktrace::tracing::SpanId;
using sparktrace::tracing::TraceId;
namespace store = sparktrace::tracing::store;

struct Options {
  std::string store;
  std::uint64_t spans = 200'000;
  std::size_t batch = 512;
  int writers = 1;
  std::string shape = "calls";
  std::uint64_t trace_spans = 50;    // spans per trace for the tasks shape
  std::uint64_t attempt_traces = 1;  // traces per attempt for the tasks shape
  // "time": new trace ids start with the time in milliseconds and a sequence, as sparktrace's id
  // generator makes them (tracing/id_generator.h); "random": all 128 bits random, as some clients
  // send them.
  std::string ids = "time";
};

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

template <std::size_t N>
std::array<std::uint8_t, N> RandomId(std::mt19937_64& random) {
  std::array<std::uint8_t, N> id{};
  for (auto& byte : id) byte = static_cast<std::uint8_t>(random());
  id[0] |= 1;  // never all zeros
  return id;
}

std::vector<Attribute> CallAttributes(std::uint64_t n) {
  return {
      {std::string(tracing::kRpcSystemKey), std::string(tracing::kRpcSystemGrpc)},
      {std::string(tracing::kRpcServiceKey), std::string(tracing::kSparkConnectServiceName)},
      {std::string(tracing::kRpcMethodKey), std::string("Config")},
      {std::string(tracing::kRpcGrpcStatusCodeKey), std::int64_t{0}},
      {"server.address", std::string("127.0.0.1")},
      {"server.port", std::int64_t{15002}},
      {"network.peer.address", std::string("10.1.2.3")},
      {"network.peer.port", static_cast<std::int64_t>(30000 + n % 30000)},
      {std::string(tracing::kRpcRequestMessagesKey), std::int64_t{1}},
      {std::string(tracing::kRpcRequestBytesKey), std::int64_t{99}},
      {std::string(tracing::kRpcResponseMessagesKey), std::int64_t{1}},
      {std::string(tracing::kRpcResponseBytesKey), std::int64_t{76}},
      {std::string(tracing::kRpcTimeToFirstResponseMsKey), 0.382747},
      {std::string(tracing::kTraceOriginKey), std::string("new")},
      {std::string(tracing::kSparkConnectSessionIdKey), std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")},
      {std::string(tracing::kSparkConnectUserIdKey), std::string("bench")},
      {std::string(tracing::kSparkConnectClientTypeKey), std::string("sparktrace-bench")},
      {std::string(tracing::kSparkConnectServerSideSessionIdKey),
       std::string("26da0a0a-3e96-43f5-bb60-baead94bd698")},
      {std::string(tracing::kSparkConnectConfigOperationKey), std::string("get")}};
}

// The spans writer `writer` writes, in the order the proxy would hand them over.
std::vector<Span> MakeSpans(const Options& options, int writer, std::uint64_t count) {
  std::mt19937_64 random(0x5eed + static_cast<std::uint64_t>(writer));
  const std::uint64_t base =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  std::vector<Span> spans;
  spans.reserve(count);
  TraceId task_trace{};
  SpanId task_root{};
  std::uint64_t time_and_sequence = 0;  // the first 8 bytes of the last "time" trace id made
  for (std::uint64_t n = 0; n < count; ++n) {
    Span span;
    span.start_time_unix_nano = base + n * 1000;
    span.end_time_unix_nano = span.start_time_unix_nano + 400'000;
    span.span_id = RandomId<8>(random);
    span.kind = sparktrace::tracing::SpanKind::kServer;
    span.attributes = CallAttributes(n);
    const auto new_trace_id = [&] {
      TraceId id = RandomId<16>(random);
      if (options.ids == "time") {
        // As RandomIdGenerator makes them: the time in ms and a sequence, then 8 random bytes. A
        // writer stands for one proxy, with its own generator.
        const std::uint64_t ms = span.start_time_unix_nano / 1'000'000;
        time_and_sequence = std::max(time_and_sequence + 1, ms << 16);
        for (std::size_t b = 0; b < 8; ++b) id[b] = static_cast<std::uint8_t>(time_and_sequence >> (8 * (7 - b)));
      }
      return id;
    };
    if (options.shape == "calls") {
      span.trace_id = new_trace_id();
      span.name = std::string(tracing::kSparkConnectRpcSpanPrefix) + "Config";
    } else {
      const std::uint64_t within = n % options.trace_spans;
      if (within == 0 && options.shape == "apps") {
        task_trace = new_trace_id();
        task_root = span.span_id;
        span.name = std::string(tracing::kSparkApplicationSpanName);
        span.attributes = {{std::string(tracing::kSparkAppIdKey), "app-" + std::to_string(n)},
                           {std::string(tracing::kSparkAppNameKey), std::string("nightly_etl")}};
      } else if (within == 0) {
        task_trace = new_trace_id();
        task_root = span.span_id;
        span.attributes.push_back({std::string(tracing::kAirflowDagIdKey), std::string("etl_daily")});
        span.attributes.push_back(
            {std::string(tracing::kAirflowTaskIdKey), "load_" + std::to_string(writer)});
        span.attributes.push_back(
            {std::string(tracing::kAirflowRunIdKey),
             "scheduled__" + std::to_string(n / (options.trace_spans * options.attempt_traces))});
        span.attributes.push_back({std::string(tracing::kAirflowTryNumberKey), std::int64_t{1}});
        if (options.trace_spans == 1) {
          // A trace of one span is a Config call with the task's identity, as the proxy records it
          // (tracing/airflow_identity.cc's attributes): no operation, no operation id.
          span.name = std::string(tracing::kSparkConnectRpcSpanPrefix) + "Config";
          span.attributes.push_back({std::string(tracing::kAirflowMapIndexKey), std::int64_t{-1}});
        } else {
          span.name = std::string(tracing::kSparkConnectOperationSpanName);
          span.attributes.push_back({std::string(tracing::kSparkConnectOperationIdKey),
                                     "op-" + std::to_string(writer) + "-" + std::to_string(n)});
        }
      } else {
        span.parent_span_id = task_root;
        span.name = within % 5 == 0 ? std::string(tracing::kSparkStageSpanName)
                                    : std::string(tracing::kSparkConnectRpcSpanPrefix) + "ExecutePlan";
      }
      span.trace_id = task_trace;
    }
    spans.push_back(std::move(span));
  }
  return spans;
}

int Usage(const std::string& problem) {
  std::cerr << "sparktrace-store-bench: " << problem
            << "\nusage: sparktrace-store-bench --store PATH|URL [--spans N] [--batch N] [--writers K] "
               "[--shape calls|tasks|apps] [--trace-spans N] [--attempt-traces M] [--ids time|random]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return Usage(std::string(flag) + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--store") {
      options.store = value;
    } else if (flag == "--spans") {
      options.spans = std::stoull(value);
    } else if (flag == "--batch") {
      options.batch = std::stoul(value);
    } else if (flag == "--writers") {
      options.writers = std::stoi(value);
    } else if (flag == "--ids") {
      options.ids = value;
    } else if (flag == "--attempt-traces") {
      options.attempt_traces = std::stoull(value);
    } else if (flag == "--trace-spans") {
      options.trace_spans = std::stoull(value);
    } else if (flag == "--shape") {
      options.shape = value;
    } else {
      return Usage("unknown flag " + std::string(flag));
    }
  }
  if (options.store.empty()) return Usage("--store is required");
  if (options.shape != "calls" && options.shape != "tasks" && options.shape != "apps")
    return Usage("--shape: calls, tasks or apps");
  if (options.batch == 0 || options.writers <= 0 || options.trace_spans == 0 || options.attempt_traces == 0)
    return Usage("--batch, --writers, --trace-spans and --attempt-traces must be positive");
  auto location = store::ParseStoreLocation(options.store);
  if (!location.ok()) return Usage(location.error().message);

  // Every writer opens its store (and, the first time, creates the schema) before the clock starts.
  std::vector<std::unique_ptr<store::SpanStore>> stores;
  std::vector<std::vector<Span>> spans;
  const std::uint64_t per_writer = options.spans / static_cast<std::uint64_t>(options.writers);
  for (int writer = 0; writer < options.writers; ++writer) {
    auto opened = store::OpenSpanStore(*location, {});
    if (!opened.ok()) {
      std::cerr << "sparktrace-store-bench: " << opened.error().message << "\n";
      return 1;
    }
    stores.push_back(std::move(*opened));
    spans.push_back(MakeSpans(options, writer, per_writer));
  }

  std::atomic<int> failures{0};
  const double cpu_before = ProcessCpuSeconds();
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(options.writers));
  for (int writer = 0; writer < options.writers; ++writer) {
    threads.emplace_back([&, writer] {
      const std::vector<Span>& mine = spans[static_cast<std::size_t>(writer)];
      for (std::size_t at = 0; at < mine.size(); at += options.batch) {
        const std::size_t size = std::min(options.batch, mine.size() - at);
        auto written =
            stores[static_cast<std::size_t>(writer)]->Write(std::span<const Span>(mine).subspan(at, size));
        if (!written.ok()) {
          if (failures++ == 0) std::cerr << "sparktrace-store-bench: " << written.error().message << "\n";
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const double cpu = ProcessCpuSeconds() - cpu_before;

  store::TaskAttemptFilter all;
  all.limit = 1;
  auto page = stores.front()->ListTaskAttempts(all);
  const std::uint64_t total = per_writer * static_cast<std::uint64_t>(options.writers);
  nlohmann::ordered_json result = {
      {"store", location->backend == store::StoreBackend::kPostgres ? "postgresql" : "sqlite"},
      {"shape", options.shape},
      {"trace_spans", options.shape == "calls" ? 1 : options.trace_spans},
      {"attempt_traces", options.shape == "calls" ? 1 : options.attempt_traces},
      {"ids", options.ids},
      {"writers", options.writers},
      {"batch", options.batch},
      {"spans", total},
      {"seconds", seconds},
      {"spans_per_s", static_cast<double>(total) / seconds},
      {"cpu_s", cpu},
      {"cpu_us_per_span", cpu * 1e6 / static_cast<double>(total)},
      {"failed_batches", failures.load()},
      {"task_attempts", page.ok() ? page->total : -1},
  };
  std::cout << result.dump() << "\n";
  return failures.load() == 0 ? 0 : 1;
}
