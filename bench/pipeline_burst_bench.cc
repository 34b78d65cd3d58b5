// sparktrace-pipeline-bench: whether the proxy's store pipeline (the bounded queue, its exporter
// thread, the store and the spool) takes a burst of spans arriving faster than the store writes,
// without dropping any. One thread submits --spans Config-call spans at --rate spans/s, as the
// relay threads of a busy proxy would; the pipeline is built as `sparktrace proxy` builds it (the
// store's batch size, the spool beside the store, the exporter's default options). On a 2-core
// machine this shows on one core what the exporter thread does while a 16-core proxy's relay
// threads feed it at 50–70k calls/s (bench/tracing_scale_bench.py measures the whole proxy there).
//
// Prints one JSON object: spans submitted, dropped (queue full), exported, spooled, the seconds the
// submitting took and the seconds from the last span submitted until every span was written, and
// what the exporter wrote to the store and put in the spool.
//
// Usage: sparktrace-pipeline-bench --store PATH|URL --spool-dir DIR [--spans N] [--rate SPANS_PER_S]
//                                  [--queue N]

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tracing/span_pipeline.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/export/store_span_exporter.h"
#include "tracing/store/open/open_span_store.h"
#include "tracing/store/spool/span_spool.h"
#include "tracing/store/store_location.h"

namespace {

namespace tracing = sparktrace::tracing;
namespace store = sparktrace::tracing::store;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string store;
  std::string spool_dir;
  std::uint64_t spans = 200'000;
  double rate = 60'000;
  std::size_t queue = tracing::SpanPipelineOptions{}.max_queue_spans;
};

// A traced Config call's span with the attributes the proxy records for it (the store's worst case:
// every span its own trace).
tracing::Span ConfigCallSpan(std::mt19937_64& random, std::uint64_t n, std::uint64_t base_unix_nano) {
  tracing::Span span;
  span.start_time_unix_nano = base_unix_nano + n * 1000;
  span.end_time_unix_nano = span.start_time_unix_nano + 400'000;
  const std::uint64_t ms = span.start_time_unix_nano / 1'000'000;
  for (std::size_t b = 0; b < span.trace_id.size(); ++b) {
    span.trace_id[b] =
        b < 6 ? static_cast<std::uint8_t>(ms >> (8 * (5 - b))) : static_cast<std::uint8_t>(random());
  }
  for (auto& byte : span.span_id) byte = static_cast<std::uint8_t>(random() | 1);
  span.kind = tracing::SpanKind::kServer;
  span.name = std::string(tracing::kSparkConnectRpcSpanPrefix) + "Config";
  span.attributes = {
      {std::string(tracing::kRpcSystemKey), std::string(tracing::kRpcSystemGrpc)},
      {std::string(tracing::kRpcServiceKey), std::string(tracing::kSparkConnectServiceName)},
      {std::string(tracing::kRpcMethodKey), std::string("Config")},
      {std::string(tracing::kRpcGrpcStatusCodeKey), std::int64_t{0}},
      {"network.peer.address", std::string("10.1.2.3")},
      {"network.peer.port", static_cast<std::int64_t>(30000 + n % 30000)},
      {std::string(tracing::kRpcRequestBytesKey), std::int64_t{99}},
      {std::string(tracing::kRpcResponseBytesKey), std::int64_t{76}},
      {std::string(tracing::kTraceOriginKey), std::string("new")},
      {std::string(tracing::kSparkConnectSessionIdKey), std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")},
      {std::string(tracing::kSparkConnectUserIdKey), std::string("bench")},
      {std::string(tracing::kSparkConnectClientTypeKey), std::string("sparktrace-bench")},
      {std::string(tracing::kSparkConnectConfigOperationKey), std::string("get")}};
  return span;
}

// Resident memory now, from /proc/self/statm: what the spans built up front take, per span.
std::uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  std::uint64_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

int Usage(const std::string& problem) {
  std::cerr << "sparktrace-pipeline-bench: " << problem
            << "\nusage: sparktrace-pipeline-bench --store PATH|URL --spool-dir DIR [--spans N] "
               "[--rate SPANS_PER_S] [--queue N]\n";
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
    } else if (flag == "--spool-dir") {
      options.spool_dir = value;
    } else if (flag == "--spans") {
      options.spans = std::stoull(value);
    } else if (flag == "--rate") {
      options.rate = std::stod(value);
    } else if (flag == "--queue") {
      options.queue = std::stoul(value);
    } else {
      return Usage("unknown flag " + std::string(flag));
    }
  }
  if (options.store.empty() || options.spool_dir.empty())
    return Usage("--store and --spool-dir are required");
  if (options.rate <= 0 || options.queue == 0) return Usage("--rate and --queue must be positive");
  auto location = store::ParseStoreLocation(options.store);
  if (!location.ok()) return Usage(location.error().message);
  auto open = [location = *location] { return store::OpenSpanStore(location, {}); };
  auto opened = open();
  if (!opened.ok()) return Usage(opened.error().message);
  store::SpanSpoolOptions spool_options;
  spool_options.directory = options.spool_dir;
  auto spool = store::SpanSpool::Open(spool_options);
  if (!spool.ok()) return Usage(spool.error().message);

  // Built before the clock starts, so that submitting costs what the relay's hand-over costs.
  std::mt19937_64 random(0x5eed);
  const auto base = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                   std::chrono::system_clock::now().time_since_epoch())
                                                   .count());
  std::vector<tracing::Span> spans;
  spans.reserve(options.spans);
  const std::uint64_t resident_before = ResidentBytes();
  for (std::uint64_t n = 0; n < options.spans; ++n) spans.push_back(ConfigCallSpan(random, n, base));
  const double bytes_per_span =
      static_cast<double>(ResidentBytes() - resident_before) / static_cast<double>(options.spans);

  tracing::SpanPipelineOptions pipeline_options;
  pipeline_options.max_batch_spans = 2048;  // the proxy's store pipeline (cli/tracing_stack.cc)
  pipeline_options.max_queue_spans = options.queue;
  auto exporter = std::make_unique<store::StoreSpanExporter>(
      std::move(*opened), open, location->display, store::StoreSpanExporterOptions{}, std::move(*spool));
  const store::StoreSpanExporter& exporter_view = *exporter;
  tracing::SpanPipeline pipeline("store", std::move(exporter), pipeline_options);

  // Submits in slices of 1 ms worth of spans, each slice at its time: the burst's pace, not a tight
  // loop that a faster submitter would win.
  const auto started = Clock::now();
  const auto per_slice = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(options.rate / 1000));
  for (std::uint64_t at = 0; at < spans.size(); at += per_slice) {
    std::this_thread::sleep_until(started +
                                  std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(static_cast<double>(at) / options.rate)));
    const auto end = std::min<std::uint64_t>(spans.size(), at + per_slice);
    for (auto n = at; n < end; ++n) pipeline.Submit(std::move(spans[n]));
  }
  const auto submitted = Clock::now();
  const bool flushed = pipeline.Flush(std::chrono::minutes(5));
  // What the exporter spooled is drained on its idle ticks: wait for the spool to empty too.
  while (exporter_view.counters().spool_bytes > 0 && Clock::now() - submitted < std::chrono::minutes(5)) {
    pipeline.Flush(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto written = Clock::now();
  const auto counters = pipeline.counters();
  const auto exporter_counters = exporter_view.counters();
  pipeline.Shutdown();

  const double seconds = std::chrono::duration<double>(submitted - started).count();
  nlohmann::ordered_json result = {
      {"store", location->backend == store::StoreBackend::kPostgres ? "postgresql" : "sqlite"},
      {"spans", options.spans},
      {"rate", options.rate},
      {"queue", options.queue},
      {"memory_bytes_per_queued_span", bytes_per_span},
      {"submit_s", seconds},
      {"submitted_per_s", static_cast<double>(options.spans) / seconds},
      {"drain_s", std::chrono::duration<double>(written - submitted).count()},
      {"flushed", flushed},
      {"dropped_queue_full", counters.dropped_queue_full},
      {"exported", counters.exported},
      {"spooled", exporter_counters.spans_spooled},
      {"written_to_store", exporter_counters.spans_exported},
      {"dropped_spool_full", exporter_counters.spans_dropped_spool_full},
  };
  std::cout << result.dump() << "\n";
  return 0;
}
