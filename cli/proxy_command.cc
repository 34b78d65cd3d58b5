#include "cli/proxy_command.h"

#include <malloc.h>
#include <prometheus/registry.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "admin/admin_flags.h"
#include "admin/admin_server.h"
#include "admin/libevent_log.h"
#include "admin/ui_access.h"
#include "cli/cost_flags.h"
#include "cli/tracing_config.h"
#include "cli/tracing_stack.h"
#include "cli/version.h"
#include "common/flags.h"
#include "common/logging.h"
#include "common/memory_trimmer.h"
#include "common/units.h"
#include "proxy/access_log.h"
#include "proxy/call_metrics.h"
#include "proxy/proxy_config.h"
#include "proxy/proxy_server.h"
#include "traceview/settler_flags.h"
#include "traceview/settler_thread.h"
#include "traceview/trace_view_api.h"
#include "tracing/store/open/open_span_store.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kProxyUsage =
    "Usage: sparktrace proxy --upstream HOST:PORT [flags]\n"
    "\n"
    "Runs the transparent Spark Connect proxy: point clients at --listen (sc://HOST:PORT) instead of\n"
    "the Spark Connect server. Every gRPC call is forwarded unchanged to --upstream. On SIGTERM it\n"
    "stops accepting calls, turns /readyz to 503 and lets in-flight calls finish (--drain-timeout).\n"
    "\n";

// Blocks the shutdown signals in this thread and every thread it starts afterwards, so that
// they are only ever received by the sigwait below and never interrupt gRPC's threads.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The proxy's own flags, then tracing's, the trace view's prices, settling, then the admin port's limits.
std::span<const FlagSpec> ProxyFlagSpecs() {
  static const std::vector<FlagSpec> kSpecs = [] {
    std::vector<FlagSpec> specs(proxy::ProxyFlagSpecs().begin(), proxy::ProxyFlagSpecs().end());
    const auto help =
        std::find_if(specs.begin(), specs.end(), [](const FlagSpec& spec) { return spec.name == "help"; });
    const auto admin_at = specs.insert(help, TracingFlagSpecs().begin(), TracingFlagSpecs().end()) +
                          static_cast<std::ptrdiff_t>(TracingFlagSpecs().size());
    const auto cost_at = specs.insert(admin_at, CostFlagSpecs().begin(), CostFlagSpecs().end()) +
                         static_cast<std::ptrdiff_t>(CostFlagSpecs().size());
    std::vector<FlagSpec> settle = traceview::SettleFlagSpecs(/*ui=*/false);
    const std::vector<FlagSpec> view = traceview::ViewFlagSpecs();
    settle.insert(settle.end(), view.begin(), view.end());
    const auto settle_at =
        specs.insert(cost_at, settle.begin(), settle.end()) + static_cast<std::ptrdiff_t>(settle.size());
    specs.insert(settle_at, admin::AdminFlagSpecs().begin(), admin::AdminFlagSpecs().end());
    return specs;
  }();
  return kSpecs;
}

}  // namespace

int RunProxyCommand(std::span<const std::string> args) {
  if (WantsHelp(args)) {
    std::cout << kProxyUsage << FormatFlagHelp(ProxyFlagSpecs());
    return 0;
  }
  auto flags = ParseFlags(ProxyFlagSpecs(), args);
  if (!flags.ok()) {
    std::cerr << "sparktrace proxy: " << flags.error().message << "\n";
    return 2;
  }
  if (!flags->positional().empty()) {
    std::cerr << "sparktrace proxy: unexpected argument '" << flags->positional().front() << "'\n";
    return 2;
  }
  auto config = proxy::ProxyConfigFromFlags(*flags);
  if (!config.ok()) {
    std::cerr << "sparktrace proxy: " << config.error().message << "\n";
    return 2;
  }
  if (!config->admin_token.empty()) {
    if (auto valid = admin::ValidateAdminToken(config->admin_token); !valid.ok()) {
      std::cerr << "sparktrace proxy: " << FlagError("admin-token", valid.error()).message << "\n";
      return 2;
    }
  }
  auto tracing_config = TracingConfigFromFlags(*flags);
  if (!tracing_config.ok()) {
    std::cerr << "sparktrace proxy: " << tracing_config.error().message << "\n";
    return 2;
  }
  auto admin_limits = admin::AdminLimitsFromFlags(*flags);
  if (!admin_limits.ok()) {
    std::cerr << "sparktrace proxy: " << admin_limits.error().message << "\n";
    return 2;
  }
  auto flag_prices = CostPricesFromFlags(*flags);
  if (!flag_prices.ok()) {
    std::cerr << "sparktrace proxy: " << flag_prices.error().message << "\n";
    return 2;
  }
  const sparktrace::diagnose::cost::CostPrices prices = WithRulesFilePrices(*flag_prices, tracing_config->prices);
  auto settle = traceview::SettleConfigFromFlags(*flags, prices);
  if (!settle.ok()) {
    std::cerr << "sparktrace proxy: " << settle.error().message << "\n";
    return 2;
  }
  auto view_flags = traceview::ViewConfigFromFlags(*flags);
  if (!view_flags.ok()) {
    std::cerr << "sparktrace proxy: " << view_flags.error().message << "\n";
    return 2;
  }

  const sigset_t shutdown_signals = BlockShutdownSignals();
  signal(SIGPIPE, SIG_IGN);  // a client closing the admin socket mid-reply must not kill us
  ConfigureLogging(config->log_level, config->log_format);

  // Freed message buffers go back to the kernel within seconds of a large result.
  // The relay frees and reallocates receive blocks and output chains at streaming rates; with
  // glibc's default trim threshold each free at the top of a worker's heap is an madvise (2,000 a
  // second at 64 KiB messages). The trimmer below gives memory back instead, every 5 s.
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  MemoryTrimmer memory_trimmer(std::chrono::seconds(5), 16 << 20);
  auto registry = std::make_shared<prometheus::Registry>();
  proxy::CallMetrics metrics(*registry);
  proxy::AccessLog access_log;
  std::unique_ptr<TracingStack> tracing;
  std::vector<proxy::CallObserver*> observers = {&metrics, &access_log};
  std::vector<std::shared_ptr<const prometheus::Collectable>> tracing_metrics;
  if (tracing_config->enabled()) {
    auto stack = TracingStack::Create(*tracing_config, *registry, kServiceVersion);
    if (!stack.ok()) {
      std::cerr << "sparktrace proxy: " << stack.error().message << "\n";
      return 2;
    }
    tracing = std::move(*stack);
    observers.push_back(&tracing->observer());
    tracing_metrics = tracing->collectables();
  }
  // Before the relay's loops exist: libevent's own warnings go through the process log from the start.
  admin::RouteLibeventLogToSpdlog();
  auto server =
      proxy::ProxyServer::Start(*config, observers, [&metrics] { metrics.RecordUpstreamConnectFailure(); });
  if (!server.ok()) {
    spdlog::error("{}", server.error().message);
    return 1;
  }
  tracing_metrics.push_back((*server)->metrics());  // /metrics shows the relay's bounds beside tracing's
  std::atomic<bool> draining{false};
  // The trace view reads the store this proxy writes (through its own read-only connection).
  std::unique_ptr<traceview::TraceViewApi> trace_view;
  admin::AdminUi ui;
  if (tracing_config->store) {
    trace_view = std::make_unique<traceview::TraceViewApi>(traceview::TraceViewOptions{
        *tracing_config->store, tracing_config->spark_ui_url, config->history_server_url, prices, {},
        view_flags->max_spans, view_flags->cache_bytes});
    ui.handler = [view = trace_view.get()](const admin::HttpRequest& request) {
      return view->Handle(request);
    };
    tracing_metrics.push_back(trace_view->metrics());  // its store connection (traceview/view_store.h)
    tracing_metrics.push_back(trace_view->cache_metrics());  // its built answers (traceview/answer_cache.h)
  }
  ui.serves = [](const std::string& path) { return traceview::TraceViewApi::Serves(path); };
  ui.token = config->admin_token;
  // Settling writes the attempts' final figures into the store this proxy writes, through a writer
  // connection of its own on its own thread (traceview/settler_thread.h).
  std::unique_ptr<traceview::SettlerThread> settler;
  if (tracing_config->store && settle->options.interval.count() > 0) {
    auto settler_metrics = std::make_shared<traceview::SettlerMetrics>(settle->max_task_series, prices.any());
    tracing_metrics.push_back(settler_metrics);
    settler = std::make_unique<traceview::SettlerThread>(
        settle->options, std::move(settler_metrics),
        [location = *tracing_config->store] { return tracing::store::OpenSpanStore(location, {}); });
  }
  auto admin = admin::AdminServer::Start(
      config->admin,
      [&draining, &proxy_server = **server]() -> std::string {
        if (draining) return "draining";
        if (!proxy_server.upstream_connected()) return "upstream not connected";
        return "";
      },
      registry, tracing_metrics, tracing ? tracing->admin_routes() : std::vector<admin::PostRoute>{},
      std::move(ui), std::move(*admin_limits));
  if (!admin.ok()) {
    spdlog::error("{}", admin.error().message);
    (*server)->Shutdown(std::chrono::milliseconds(0));
    return 1;
  }

  spdlog::info("forwarding {} -> {}{} (admin http://{}, max message {})", (*server)->address(),
               config->upstream.target, config->upstream.tls ? " over TLS" : "", (*admin)->address(),
               FormatByteSize(config->max_message_bytes));
  // The one line on stdout: machine-readable, so scripts and tests can use port 0.
  std::printf("listening grpc=%s admin=%s\n", (*server)->address().c_str(), (*admin)->address().c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&shutdown_signals, &signal_number);
  // In this order: once /readyz says 503, new connections are already refused.
  (*server)->StopAccepting();
  draining = true;
  spdlog::info("received {}: draining {} in-flight call(s) for up to {}", strsignal(signal_number),
               metrics.active_calls(), FormatDuration(config->drain_timeout));
  (*server)->Shutdown(config->drain_timeout);
  if (tracing) tracing->Shutdown();  // the calls are over: end open operations, export what is queued
  spdlog::info("drained; exiting");
  spdlog::default_logger()->flush();
  AccessLogger()->flush();
  return 0;
}

}  // namespace sparktrace::cli
