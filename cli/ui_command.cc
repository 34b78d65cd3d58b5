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
#include "common/flags.h"
#include "common/logging.h"
#include "proxy/descriptor_limit.h"
#include "proxy/proxy_config.h"
#include "traceview/trace_view_api.h"
#include "tracing/sqlite_span_store.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kUsage =
    "Usage: sparktrace ui --store PATH [--listen HOST:PORT] [--admin-token TOKEN]\n"
    "\n"
    "Serves the trace view (one page per Airflow task attempt) over a trace store file, without a\n"
    "proxy: a copy taken from a pod, a CI artifact, or the live file of a running proxy (read-only;\n"
    "the proxy is never blocked). Open the printed URL.\n"
    "\n";

const std::array<FlagSpec, 5> kSpecs = {{
    {"store", "PATH", "sparktrace.db", "the trace database to show"},
    {"listen", "HOST:PORT", "127.0.0.1:9470", "where to serve the trace view (port 0 picks a free port)"},
    {"admin-token", "TOKEN", "", "require this token (Bearer header, or ?token= once in the browser)"},
    {"history-server", "URL", "", "a Spark History Server (http://shs:18080): jobs and stages link there"},
    {"help", "", "", "show this help"},
}};

// The command's own flags, then the admin port's limits (the same as `sparktrace proxy`'s), then --help.
std::span<const FlagSpec> AllFlagSpecs() {
  static const std::vector<FlagSpec> kAll = [] {
    std::vector<FlagSpec> specs(kSpecs.begin(), kSpecs.end() - 1);
    specs.insert(specs.end(), admin::AdminFlagSpecs().begin(), admin::AdminFlagSpecs().end());
    specs.push_back(kSpecs.back());
    return specs;
  }();
  return kAll;
}

int Fail(std::ostream& err, int code, const std::string& message) {
  err << "sparktrace ui: " << message << "\n";
  return code;
}

}  // namespace

int RunUiCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (WantsHelp(args)) {
    out << kUsage << FormatFlagHelp(AllFlagSpecs());
    return 0;
  }
  auto flags = ParseFlags(AllFlagSpecs(), args);
  if (!flags.ok()) return Fail(err, 2, flags.error().message);
  if (!flags->positional().empty())
    return Fail(err, 2, "unexpected argument '" + flags->positional().front() + "'");
  const std::string& listen = flags->Get("listen");
  if (auto valid = proxy::ValidateHostPort(listen); !valid.ok()) {
    return Fail(err, 2, "--listen: " + valid.error().message);
  }
  if (const std::string& token = flags->Get("admin-token"); !token.empty()) {
    if (auto valid = admin::ValidateAdminToken(token); !valid.ok()) {
      return Fail(err, 2, FlagError("admin-token", valid.error()).message);
    }
  }
  auto limits = admin::AdminLimitsFromFlags(*flags);
  if (!limits.ok()) return Fail(err, 2, limits.error().message);
  // Refuse a path that is not a readable store now, rather than answer 503 on every page.
  {
    tracing::SqliteSpanStoreOptions options;
    options.read_only = true;
    auto store = tracing::SqliteSpanStore::Open(flags->Get("store"), options);
    if (!store.ok()) return Fail(err, 1, store.error().message);
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
      traceview::TraceViewOptions{flags->Get("store"), "", flags->Get("history-server")});
  admin::AdminUi ui;
  ui.handler = [&view](const admin::HttpRequest& request) { return view.Handle(request); };
  ui.serves = [](const std::string& path) { return traceview::TraceViewApi::Serves(path); };
  ui.token = flags->Get("admin-token");
  // As the proxy: --admin-max-connections, not the soft descriptor limit, is what bounds connections.
  proxy::RaiseDescriptorLimit();
  auto server = admin::AdminServer::Start(
      listen, [] { return std::string(); }, std::make_shared<prometheus::Registry>(), {}, {}, std::move(ui),
      std::move(*limits));
  if (!server.ok()) return Fail(err, 1, server.error().message);
  out << "trace view http://" << (*server)->address() << "/\n" << std::flush;
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  return 0;
}

}  // namespace sparktrace::cli
