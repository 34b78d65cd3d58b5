#include "cli/demo_command.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/command_failure.h"
#include "cli/demo/child_process.h"
#include "cli/demo/port_probe.h"
#include "cli/demo/report.h"
#include "cli/demo/rules.h"
#include "cli/demo/task_report.h"
#include "cli/demo/trace_wait.h"
#include "cli/demo/workload.h"
#include "common/flags.h"
#include "common/logging.h"
#include "diagnose/suppression.h"
#include "tracing/id_generator.h"
#include "tracing/trace_context.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kDemoUsage =
    "Usage: sparktrace demo [flags]\n"
    "\n"
    "Shows what sparktrace records, with nothing else installed: starts the Spark Connect simulator\n"
    "(`sparktrace sim`, which speaks the protocol but is not Spark) and the proxy in front of it, makes\n"
    "the Spark Connect calls of an Airflow task through the proxy (with a traceparent and the Airflow\n"
    "headers; a query cut and resumed by ReattachExecute, a write, a query stopped by Interrupt), then\n"
    "prints the trace the proxy stored, the admin URL and how to point a client at the proxy. Serves\n"
    "until Ctrl-C. The proxy and the simulator log to stderr; every run is a new trace.\n"
    "\n"
    "The simulator also writes a Spark event log of what it pretends to run (a new directory under\n"
    "--event-log-dir per run), shaped by --scenario and sped up 50 times; the proxy follows it, so each\n"
    "operation's trace shows its Spark jobs, stages and phases (resource wait, compute, io write, idle).\n"
    "\n"
    "Exit codes: 0 after a clean run, 1 when something failed, 2 for bad flags, 130 when stopped\n"
    "before the trace was printed.\n"
    "\n";

const std::array<FlagSpec, 7> kDemoSpecs = {{
    {"listen", "HOST:PORT", "127.0.0.1:15002",
     "where the proxy serves Spark Connect clients; when this default is taken, a free port instead"},
    {"store", "PATH|URL", "sparktrace-demo.db",
     "the trace store the proxy writes: a SQLite file (created if missing) or a postgresql:// URL"},
    {"event-log-dir", "DIR", "sparktrace-demo-events",
     "where the simulator writes its Spark event logs (a new run-<time> directory each run)"},
    {"scenario", "NAMES", "slow-executor-allocation,slow-writes,exploding-join",
     "the problems the simulated Spark application has (sparktrace sim --help lists them), or clean"},
    {"once", "", "", "exit after printing the trace instead of serving until Ctrl-C"},
    {"log-level", "LEVEL", "warn",
     "log level of the proxy and the simulator; info adds the proxy's access log"},
    {"help", "", "", "show this help"},
}};

// Generous for sanitizer builds; a child that is not listening by then is not going to be.
constexpr std::chrono::seconds kStartTimeout{20};
// The proxy exports every 100ms (--span-batch-delay below); this only bounds a proxy that does not.
constexpr std::chrono::seconds kTraceTimeout{15};
// The simulated application runs this much faster than the scenario's Spark durations: an executor
// that takes 2 minutes to arrive arrives after 2.4 s; every driver timestamp is real.
constexpr std::string_view kDemoTimeScale = "0.02";
constexpr double kDemoTimeScaleValue = 0.02;
// Half of the scenario's severe case: visible in the phases without a long wait.
constexpr std::string_view kDemoStrength = "0.5";
// On SIGTERM the proxy drains (--drain-timeout below), then flushes its span sinks (up to 5s each).
constexpr std::chrono::seconds kProxyStopGrace{10};
constexpr std::chrono::seconds kSimulatorStopGrace{5};

const tracing::AirflowIdentity kTaskTemplate{"daily_sales", "load_orders", "", 1, -1};
// The operator the demo's task plays (the Spark provider's PySpark operator, for Spark Connect).
constexpr std::string_view kDemoOperator = "PySparkOperator";
// The demo task's own code before, between and after its Spark calls (shown "outside Spark").
constexpr std::chrono::milliseconds kDemoTaskCode{250};
// The proxy is local; a report that takes longer is lost, as the plugin's would be.
constexpr std::chrono::milliseconds kReportTimeout{2000};

// Blocks SIGINT, SIGTERM and SIGCHLD in this thread and in every thread it starts later (gRPC's),
// so that they wait for WaitForSignal: Ctrl-C and SIGTERM stop the demo in order, and SIGCHLD
// says that a child ended. Children start with an empty mask (demo::ChildProcess).
sigset_t BlockDemoSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (const int signal_number : {SIGINT, SIGTERM, SIGCHLD}) sigaddset(&signals, signal_number);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// The next of `signals` within `timeout` (forever without one), or 0 when none came.
int WaitForSignal(const sigset_t& signals, std::optional<std::chrono::milliseconds> timeout) {
  if (!timeout) {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    return signal_number;
  }
  const auto deadline = std::chrono::steady_clock::now() + *timeout;
  while (true) {
    const auto left = std::max(std::chrono::nanoseconds(0), deadline - std::chrono::steady_clock::now());
    const timespec wait{static_cast<time_t>(left.count() / 1'000'000'000),
                        static_cast<long>(left.count() % 1'000'000'000)};
    const int signal_number = sigtimedwait(&signals, nullptr, &wait);
    if (signal_number > 0) return signal_number;
    if (errno != EINTR || left.count() == 0) return 0;
  }
}

// "listening grpc=127.0.0.1:1234 admin=127.0.0.1:5678" -> the value of `key`, "" if absent.
std::string ListeningField(std::string_view line, std::string_view key) {
  const std::string needle = " " + std::string(key) + "=";
  const auto at = line.find(needle);
  if (!line.starts_with("listening ") || at == std::string_view::npos) return "";
  const auto value = line.substr(at + needle.size());
  return std::string(value.substr(0, value.find(' ')));
}

// Reads the child's `listening ...` line and returns the value of each of `keys` in it.
Result<std::vector<std::string>> AwaitListening(demo::ChildProcess& child,
                                                std::initializer_list<std::string_view> keys) {
  auto line = child.ReadLine(kStartTimeout);
  if (!line.ok()) return Error{line.error().code, line.error().message + " (its log is above)"};
  std::vector<std::string> values;
  for (const auto key : keys) {
    values.push_back(ListeningField(*line, key));
    if (values.back().empty()) {
      return Error{ErrorCode::kInternal, child.name() + " printed '" + *line + "', not its listening line"};
    }
  }
  return values;
}

std::vector<std::string> SimulatorArgs(const std::string& log_level, const std::string& event_log_dir,
                                       const std::string& scenario) {
  return {"sim",
          "--listen",
          "127.0.0.1:0",
          "--stream-cut-bytes",
          demo::kDemoStreamCutBytes,
          "--log-level",
          log_level,
          "--event-log-dir",
          event_log_dir,
          "--event-log-codec",
          "zstd",
          "--scenario",
          scenario,
          "--strength",
          std::string(kDemoStrength),
          "--time-scale",
          std::string(kDemoTimeScale)};
}

std::vector<std::string> ProxyArgs(const std::string& upstream, const std::string& listen,
                                   const std::string& store, const std::string& log_level,
                                   const std::string& event_log_dir, const std::string& rules) {
  std::vector<std::string> args = {"proxy", "--upstream",  upstream,      "--listen",
                                   listen,  "--admin",     "127.0.0.1:0", "--drain-timeout",
                                   "2s",    "--log-level", log_level};
  // Spans reach the store within 100ms; an operation a real client leaves open ends after 5s.
  args.insert(args.end(), {"--store", store, "--span-batch-delay", "100ms", "--operation-linger", "5s"});
  // The simulator's event log, read every 200ms.
  args.insert(args.end(), {"--event-log-dir", event_log_dir, "--event-log-poll", "200ms", "--rules", rules});
  // The attempt is settled (its cost in the task list and the sparktrace_task_* counters) a second after
  // its last span, not after the production default's 2 minutes.
  args.insert(args.end(), {"--settle-interval", "200ms", "--settle-quiet", "1s"});
  return args;
}

Result<void> WriteFile(const std::string& path, const std::string& content) {
  std::ofstream file(path, std::ios::trunc);
  file << content;
  file.close();
  if (!file) return Error{ErrorCode::kIo, "cannot write " + path};
  return {};
}

// A new directory for this run's event log under `parent`: run-<UTC time>[-N].
Result<std::string> MakeRunDirectory(const std::string& parent) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  const std::string base = fmt::format("{}/run-{:04}{:02}{:02}T{:02}{:02}{:02}Z", parent, utc.tm_year + 1900,
                                       utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error)
    return Error{ErrorCode::kIo, "--event-log-dir: cannot create " + parent + ": " + error.message()};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string candidate = attempt == 0 ? base : fmt::format("{}-{}", base, attempt);
    if (std::filesystem::create_directory(candidate, error)) return candidate;
    if (error)
      return Error{ErrorCode::kIo, "--event-log-dir: cannot create " + candidate + ": " + error.message()};
  }
  return Error{ErrorCode::kIo, "--event-log-dir: no free run directory under " + parent};
}

// Stops `children` in order, the proxy first: on SIGTERM it drains and exports its last spans.
// Returns `code`, or 1 when it was 0 and a child did not exit cleanly. Reports each unclean exit,
// except that of a child that had ended before a failure (code != 0), which is what was reported.
int StopChildren(int code,
                 std::initializer_list<std::pair<demo::ChildProcess*, std::chrono::seconds>> children,
                 std::ostream& err) {
  for (const auto& [child, grace] : children) {
    const bool already_reported = code != 0 && child->HasExited();
    const auto exit = child->Stop(grace);
    if (!exit.clean && !already_reported) {
      err << "sparktrace demo: " << child->name() << " " << exit.description << "\n";
      if (code == 0) code = 1;
    }
  }
  return code;
}

// For a SIGCHLD: "the proxy exited with code 1" for each child that has ended.
std::string DescribeEndedChildren(std::initializer_list<demo::ChildProcess*> children) {
  std::string description;
  for (demo::ChildProcess* child : children) {
    if (!child->HasExited()) continue;
    if (!description.empty()) description += "; ";
    description += child->name() + " " + child->Stop(std::chrono::seconds(0)).description;
  }
  return description.empty() ? "a child process ended" : description;
}

// Airflow's run id of a scheduled run: "scheduled__2024-05-01T00:00:00+00:00" (today, UTC).
std::string ScheduledRunId() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("scheduled__{:04}-{:02}-{:02}T00:00:00+00:00", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday);
}

std::uint64_t NowUnixNano() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// How to run this binary from the working directory: "build/sparktrace" under the repository,
// else its absolute path.
std::string DisplayedProgram() {
  std::error_code error;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "sparktrace";
  const auto cwd = std::filesystem::current_path(error);
  if (error) return program.string();
  const auto relative = program.lexically_proximate(cwd);
  if (relative.empty() || *relative.begin() == "..") return program.string();
  return relative.string();
}

}  // namespace

int RunDemoCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (WantsHelp(args)) {
    out << kDemoUsage << FormatFlagHelp(kDemoSpecs);
    return 0;
  }
  auto flags = ParseFlags(kDemoSpecs, args);
  if (!flags.ok()) return FailCommand(err, "demo", 2, flags.error().message);
  if (!flags->positional().empty())
    return FailCommand(err, "demo", 2, "unexpected argument '" + flags->positional().front() + "'");
  const std::string& log_level = flags->Get("log-level");
  if (auto level = ParseLogLevel(log_level); !level.ok())
    return FailCommand(err, "demo", 2, "--log-level: " + level.error().message);
  const std::string& store = flags->Get("store");
  if (store.empty() || store == "none")
    return FailCommand(err, "demo", 2, "--store: the demo needs a trace database");
  auto store_location = tracing::store::ParseStoreLocation(store);
  if (!store_location.ok())
    return FailCommand(err, "demo", 2, FlagError("store", store_location.error()).message);
  const bool once = flags->GetBool("once");
  const std::string& scenario = flags->Get("scenario");
  if (scenario.empty()) return FailCommand(err, "demo", 2, "--scenario: empty (clean, or problem names)");
  auto event_log_dir = MakeRunDirectory(flags->Get("event-log-dir"));
  if (!event_log_dir.ok()) return FailCommand(err, "demo", 2, event_log_dir.error().message);
  // Next to the log, not in it: the proxy reads every file of its event-log directory.
  const std::string rules = *event_log_dir + ".rules.yaml";
  const std::string rules_yaml =
      demo::ScaledDemoRulesYaml(kDemoTimeScaleValue) +
      demo::DemoSuppressionsYaml(sparktrace::diagnose::UtcDay(std::chrono::system_clock::now()));
  if (auto written = WriteFile(rules, rules_yaml); !written.ok())
    return FailCommand(err, "demo", 1, written.error().message);

  const sigset_t signals = BlockDemoSignals();
  std::string listen = flags->Get("listen");
  if (!flags->IsSet("listen")) {
    // Only the default gives way: a port asked for explicitly fails loudly when taken.
    if (auto in_use = demo::ListenAddressInUse(listen); in_use.ok() && *in_use) {
      err << "sparktrace demo: " << listen << " is taken (a Spark Connect server, or another demo?); "
          << "the proxy listens on a free port instead\n";
      listen = "127.0.0.1:0";
    }
  }

  auto simulator =
      demo::ChildProcess::Spawn("the simulator", SimulatorArgs(log_level, *event_log_dir, scenario));
  if (!simulator.ok()) return FailCommand(err, "demo", 1, simulator.error().message);
  auto simulator_fields = AwaitListening(*simulator, {"grpc"});
  if (!simulator_fields.ok()) {
    return StopChildren(FailCommand(err, "demo", 1, simulator_fields.error().message),
                        {{&*simulator, kSimulatorStopGrace}}, err);
  }
  auto proxy = demo::ChildProcess::Spawn(
      "the proxy", ProxyArgs(simulator_fields->at(0), listen, store, log_level, *event_log_dir, rules));
  if (!proxy.ok()) {
    return StopChildren(FailCommand(err, "demo", 1, proxy.error().message),
                        {{&*simulator, kSimulatorStopGrace}}, err);
  }
  const auto stop = [&](int code) {
    return StopChildren(code, {{&*proxy, kProxyStopGrace}, {&*simulator, kSimulatorStopGrace}}, err);
  };
  auto proxy_fields = AwaitListening(*proxy, {"grpc", "admin"});
  if (!proxy_fields.ok()) return stop(FailCommand(err, "demo", 1, proxy_fields.error().message));
  const demo::DemoEndpoints endpoints{proxy_fields->at(0), proxy_fields->at(1), store_location->display,
                                      DisplayedProgram(),  *event_log_dir,      rules};

  out << "sparktrace demo\n"
      << fmt::format("  simulator  {:<21}  speaks the Spark Connect protocol, runs no queries (not Spark)\n",
                     simulator_fields->at(0))
      << fmt::format("  proxy      {:<21}  in front of the simulator; admin http://{}\n", endpoints.proxy,
                     endpoints.admin)
      << fmt::format("  store      {}\n", store_location->display)
      << fmt::format("  event log  {}  (simulated Spark application: {}, 50x faster)\n", *event_log_dir,
                     scenario);

  tracing::RandomIdGenerator ids;
  const tracing::TraceId trace_id = ids.NewTraceId();
  const tracing::SpanId task_span_id = ids.NewSpanId();
  demo::DemoWorkloadOptions options;
  options.target = endpoints.proxy;
  options.traceparent = tracing::FormatTraceparent(trace_id, task_span_id, true);
  options.airflow = kTaskTemplate;
  options.airflow.run_id = ScheduledRunId();
  options.task_code = kDemoTaskCode;
  // First, so that it can be opened while the task runs (the page follows a running attempt).
  out << fmt::format("  trace view {}\n", demo::TraceViewUrl(endpoints, options.airflow));
  out << fmt::format("\nAirflow task {}.{}, run {}, try {}, calls Spark Connect through the proxy:\n",
                     options.airflow.dag_id, options.airflow.task_id, options.airflow.run_id,
                     options.airflow.try_number)
      << fmt::format("  traceparent: {}  (a new trace: {})\n", options.traceparent, tracing::ToHex(trace_id))
      << std::flush;
  // What the Airflow plugin sends: the attempt, its span context, the operator, "running" first.
  tracing::AirflowTaskReport report;
  report.identity = options.airflow;
  report.operator_class = std::string(kDemoOperator);
  report.hostname = "sparktrace-demo";
  report.traceparent = tracing::Traceparent{0, trace_id, task_span_id, tracing::kSampledFlag};
  report.state = "running";
  report.start_unix_nano = NowUnixNano();
  report.end_unix_nano = report.start_unix_nano;
  const auto send_report = [&] {
    if (auto sent = demo::SendAirflowTaskReport(endpoints.admin, report, kReportTimeout); !sent.ok()) {
      err << "sparktrace demo: could not report the Airflow task (" << sent.error().message
          << "); its page shows the Spark part only\n";
    }
  };
  send_report();
  auto operations = demo::RunDemoWorkload(options, out);
  if (!operations.ok()) return stop(FailCommand(err, "demo", 1, operations.error().message));
  report.state = "success";
  report.end_unix_nano = NowUnixNano();

  int stop_signal = WaitForSignal(signals, std::chrono::milliseconds(0));
  if (stop_signal == 0) {
    send_report();
    std::vector<std::string> operation_ids;
    for (const auto& operation : *operations) operation_ids.push_back(operation.operation_id);
    auto spans =
        demo::WaitForOperationSpans(*store_location, trace_id, operation_ids, /*driver_spans=*/true,
                                    task_span_id, kTraceTimeout, [&](std::chrono::milliseconds pause) {
                                      stop_signal = WaitForSignal(signals, pause);
                                      return stop_signal == 0;
                                    });
    if (!spans.ok() && stop_signal == 0) return stop(FailCommand(err, "demo", 1, spans.error().message));
    if (spans.ok()) demo::PrintTrace(out, *spans, *operations);
  }
  if (stop_signal == 0) {
    // The task list shows the attempt's cost once the proxy settled it; the demo ends with it there.
    auto settled = demo::WaitForSettledAttempt(
        *store_location,
        tracing::store::TaskAttemptKey{options.airflow.dag_id, options.airflow.task_id,
                                       options.airflow.run_id, options.airflow.try_number,
                                       options.airflow.map_index},
        kTraceTimeout, [&](std::chrono::milliseconds pause) {
          stop_signal = WaitForSignal(signals, pause);
          return stop_signal == 0;
        });
    if (!settled.ok() && stop_signal == 0) return stop(FailCommand(err, "demo", 1, settled.error().message));
    if (settled.ok()) demo::PrintSettledCost(out, endpoints, *settled);
  }
  const auto child_ended = [&] {
    return stop(FailCommand(err, "demo", 1,
                            DescribeEndedChildren({&*proxy, &*simulator}) + " before the demo ended"));
  };
  if (stop_signal == SIGCHLD) return child_ended();
  if (stop_signal != 0) return stop(FailCommand(err, "demo", 130, "stopped before the demo finished"));

  demo::PrintNextSteps(out, endpoints, trace_id, options.airflow);
  if (once) return stop(0);
  out << "\nserving until Ctrl-C\n" << std::flush;
  if (WaitForSignal(signals, std::nullopt) == SIGCHLD) return child_ended();
  out << "stopping\n" << std::flush;
  return stop(0);
}

}  // namespace sparktrace::cli
