#include "cli/sim_command.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/sim_generate_log_command.h"
#include "common/flags.h"
#include "common/logging.h"
#include "common/units.h"
#include "sim/sim_config.h"
#include "sim/sim_server.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kSimUsage =
    "Usage: sparktrace sim [flags]\n"
    "\n"
    "Simulates the Spark Connect gRPC protocol, not Spark: a test peer for sparktrace and for\n"
    "Spark Connect clients. It runs no queries. ExecutePlan answers with --batches responses whose\n"
    "arrow_batch data is filler bytes of --batch-bytes (not Arrow IPC), then result_complete when\n"
    "the client asked for a reattachable execution. Sessions get a server_side_session_id (Spark\n"
    "4.0 behaviour); reattachable streams are cut like Spark's and resumed by ReattachExecute;\n"
    "ReleaseExecute, Interrupt, AnalyzePlan, Config, artifacts, ReleaseSession and\n"
    "FetchErrorDetails answer minimally. AnalyzePlan reports spark_version 4.0.0-sparktrace-sim.\n"
    "\n"
    "Per-call request metadata overrides: x-sim-batches, x-sim-batch-bytes,\n"
    "x-sim-batch-interval-ms; x-sim-fail=<gRPC code 1..16> [x-sim-fail-after=<responses>] makes\n"
    "ExecutePlan fail with that status (with grpc-status-details-bin).\n"
    "\n"
    "With --event-log-dir, it also writes the Spark event log a Spark Connect server would write,\n"
    "simulated, not measured: the application and its executors (arriving after the scenario's\n"
    "resource wait), and for each ExecutePlan the operation's Spark Connect events, one SQL\n"
    "execution and two jobs tagged as Spark tags Connect jobs (a shuffle-map stage, then a result\n"
    "stage, which writes output when the plan is a write_operation(_v2) command), with made-up\n"
    "tasks and metrics shaped by --scenario/--strength/--seed. The jobs take simulated time\n"
    "(x --time-scale) with real timestamps, and ExecutePlan answers only once they ended.\n"
    "x-sim-size: small|medium|large sets an operation's task counts. SIGTERM writes\n"
    "ApplicationEnd and renames the log (.inprogress, or appstatus_ of a rolling log).\n"
    "`sparktrace sim generate-log --help`: the same log offline, at once, for corpora.\n"
    "\n"
    "Prints `listening grpc=HOST:PORT` on stdout when ready; stops on SIGTERM/SIGINT.\n"
    "\n";

}  // namespace

int RunSimCommand(std::span<const std::string> args) {
  if (!args.empty() && args.front() == "generate-log") {
    return RunSimGenerateLogCommand(args.subspan(1), std::cout, std::cerr);
  }
  if (WantsHelp(args)) {
    std::cout << kSimUsage << FormatFlagHelp(sim::SimFlagSpecs());
    return 0;
  }
  auto flags = ParseFlags(sim::SimFlagSpecs(), args);
  if (!flags.ok()) {
    std::cerr << "sparktrace sim: " << flags.error().message << "\n";
    return 2;
  }
  if (!flags->positional().empty()) {
    std::cerr << "sparktrace sim: unexpected argument '" << flags->positional().front() << "'\n";
    return 2;
  }
  auto config = sim::SimConfigFromFlags(*flags);
  if (!config.ok()) {
    std::cerr << "sparktrace sim: " << config.error().message << "\n";
    return 2;
  }

  // Block the shutdown signals before gRPC starts threads, so only the sigwait below sees them.
  sigset_t shutdown_signals;
  sigemptyset(&shutdown_signals);
  sigaddset(&shutdown_signals, SIGTERM);
  sigaddset(&shutdown_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr);
  ConfigureLogging(config->log_level, config->log_format);

  auto server = sim::SimServer::Start(*config);
  if (!server.ok()) {
    spdlog::error("{}", server.error().message);
    return 1;
  }
  spdlog::info("simulating Spark Connect (not Spark) on {}: {} batch(es) of {} every {}",
               (*server)->address(), config->batches, FormatByteSize(config->batch_bytes),
               FormatDuration(config->batch_interval));
  if (!(*server)->event_log_path().empty()) {
    spdlog::info("writing a simulated Spark event log ({}, strength {}) to {}", config->scenario.Name(),
                 config->scenario.strength, (*server)->event_log_path());
  }
  // The one line on stdout, in the proxy's format, so scripts and tests can use port 0.
  std::printf("listening grpc=%s\n", (*server)->address().c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&shutdown_signals, &signal_number);
  spdlog::info("received {}: stopping", strsignal(signal_number));
  (*server)->Shutdown(std::chrono::seconds(1));
  spdlog::default_logger()->flush();
  return 0;
}

}  // namespace sparktrace::cli
