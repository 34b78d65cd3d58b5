#include "cli/ui_command.h"

#include <prometheus/registry.h>
#include <pthread.h>
#include <signal.h>

#include <array>
#include <memory>
#include <vector>

#include "admin/admin_flags.h"
#include "admin/admin_server.h"
#include "admin/ui_access.h"
#include "cli/command_failure.h"
#include "cli/cost_flags.h"
#include "cli/store_probe.h"
#include "common/flags.h"
#include "common/logging.h"
#include "proxy/descriptor_limit.h"
#include "proxy/proxy_config.h"
#include "traceview/settler_flags.h"
#include "traceview/settler_thread.h"
#include "traceview/trace_view_api.h"
#include "tracing/store/open/open_span_store.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kUiUsage =
    "Usage: sparktrace ui --store PATH|URL [--listen HOST:PORT] [--admin-token TOKEN]\n"
    "\n"
    "Serves the trace view (one page per Airflow task attempt) over a trace store, without a proxy:\n"
    "the PostgreSQL every proxy of a deployment writes (postgresql://…, a read-only role is enough;\n"
    "password from PGPASSWORD or PGPASSFILE), a SQLite file copied from a pod or a CI artifact, or\n"
    "the live file of a running proxy (read-only; the proxy is never blocked). Open the printed URL.\n"
    "/readyz answers 503 while the store cannot be read.\n"
    "\n"
    "It reads the store read-only and so does not settle attempts (their cost in the task list, the\n"
    "sparktrace_task_* counters): the proxies writing the store do. With --settle-interval it settles\n"
    "too, through a writer connection of its own, where the file or role allows writing.\n"
    "\n";

const std::array<FlagSpec, 5> kUiSpecs = {{
    {"store", "PATH|URL", "sparktrace.db", "the trace store to show: a SQLite file or a postgresql:// URL"},
    {"listen", "HOST:PORT", "127.0.0.1:9470", "where to serve the trace view (port 0 picks a free port)"},
    {"admin-token", "TOKEN", "", "require this token (Bearer header, or ?token= once in the browser)"},
    {"history-server", "URL", "", "a Spark History Server (http://shs:18080): jobs and stages link there"},
    {"help", "", "", "show this help"},
}};

// The command's own flags, the prices, settling, then the admin port's limits (the same as `sparktrace
// proxy`'s), then
// --help.
std::span<const FlagSpec> UiFlagSpecs() {
  static const std::vector<FlagSpec> kAll = [] {
    std::vector<FlagSpec> specs(kUiSpecs.begin(), kUiSpecs.end() - 1);
    specs.insert(specs.end(), CostFlagSpecs().begin(), CostFlagSpecs().end());
    const std::vector<FlagSpec> settle = traceview::SettleFlagSpecs(/*ui=*/true);
    specs.insert(specs.end(), settle.begin(), settle.end());
    const std::vector<FlagSpec> view = traceview::ViewFlagSpecs();
    specs.insert(specs.end(), view.begin(), view.end());
    specs.insert(specs.end(), admin::AdminFlagSpecs().begin(), admin::AdminFlagSpecs().end());
    specs.push_back(kUiSpecs.back());
    return specs;
  }();
  return kAll;
}

}  // namespace

int RunUiCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (WantsHelp(args)) {
    out << kUiUsage << FormatFlagHelp(UiFlagSpecs());
    return 0;
  }
  auto flags = ParseFlags(UiFlagSpecs(), args);
  if (!flags.ok()) return FailCommand(err, "ui", 2, flags.error().message);
  if (!flags->positional().empty())
    return FailCommand(err, "ui", 2, "unexpected argument '" + flags->positional().front() + "'");
  const std::string& listen = flags->Get("listen");
  if (auto valid = proxy::ValidateHostPort(listen); !valid.ok()) {
    return FailCommand(err, "ui", 2, "--listen: " + valid.error().message);
  }
  if (const std::string& token = flags->Get("admin-token"); !token.empty()) {
    if (auto valid = admin::ValidateAdminToken(token); !valid.ok()) {
      return FailCommand(err, "ui", 2, FlagError("admin-token", valid.error()).message);
    }
  }
  auto limits = admin::AdminLimitsFromFlags(*flags);
  if (!limits.ok()) return FailCommand(err, "ui", 2, limits.error().message);
  auto prices = CostPricesFromFlags(*flags);
  if (!prices.ok()) return FailCommand(err, "ui", 2, prices.error().message);
  auto settle = traceview::SettleConfigFromFlags(*flags, *prices);
  if (!settle.ok()) return FailCommand(err, "ui", 2, settle.error().message);
  auto view_flags = traceview::ViewConfigFromFlags(*flags);
  if (!view_flags.ok()) return FailCommand(err, "ui", 2, view_flags.error().message);
  auto location = tracing::store::ParseStoreLocation(flags->Get("store"));
  if (!location.ok()) return FailCommand(err, "ui", 2, FlagError("store", location.error()).message);
  // Refuse a file that is not a readable store now, rather than answer 503 on every page. A
  // database server is another matter: it may come up after the ui (a Deployment starting beside
  // its PostgreSQL), so the ui starts, and /readyz says when it can read.
  if (location->backend == tracing::store::StoreBackend::kSqlite) {
    tracing::store::StoreOptions options;
    options.read_only = true;
    auto store = tracing::store::OpenSpanStore(*location, options);
    if (!store.ok()) return FailCommand(err, "ui", 1, store.error().message);
  }

  // The admin server's warnings (and libevent's, through it) go to stderr: stdout carries the URL.
  ConfigureLogging(spdlog::level::warn, LogFormat::kText);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before the server's thread starts: it inherits the mask
  signal(SIGPIPE, SIG_IGN);

  traceview::TraceViewApi view(
      traceview::TraceViewOptions{*location, "", flags->Get("history-server"), *prices, {},
                                  view_flags->max_spans, view_flags->cache_bytes});
  std::unique_ptr<StoreProbe> probe;
  if (location->backend == tracing::store::StoreBackend::kPostgres) {
    probe = std::make_unique<StoreProbe>(*location, std::chrono::seconds(5));
  }
  admin::AdminUi ui;
  ui.handler = [&view](const admin::HttpRequest& request) { return view.Handle(request); };
  ui.serves = [](const std::string& path) { return traceview::TraceViewApi::Serves(path); };
  ui.token = flags->Get("admin-token");
  // As the proxy: --admin-max-connections, not the soft descriptor limit, is what bounds connections.
  proxy::RaiseDescriptorLimit();
  std::vector<std::shared_ptr<const prometheus::Collectable>> collectables{view.metrics(), view.cache_metrics()};
  std::unique_ptr<traceview::SettlerThread> settler;
  if (settle->options.interval.count() > 0) {
    auto settler_metrics =
        std::make_shared<traceview::SettlerMetrics>(settle->max_task_series, prices->any());
    collectables.push_back(settler_metrics);
    settler = std::make_unique<traceview::SettlerThread>(
        settle->options, std::move(settler_metrics),
        [location = *location] { return tracing::store::OpenSpanStore(location, {}); });
  }
  auto server = admin::AdminServer::Start(
      listen, [&probe] { return probe ? probe->NotReadyReason() : std::string(); },
      std::make_shared<prometheus::Registry>(), collectables, {}, std::move(ui), std::move(*limits));
  if (!server.ok()) return FailCommand(err, "ui", 1, server.error().message);
  out << "trace view http://" << (*server)->address() << "/\n" << std::flush;
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  return 0;
}

}  // namespace sparktrace::cli
