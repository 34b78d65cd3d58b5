#include "cli/sim_command.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>
#include <iostream>

#include "common/flags.h"
#include "common/logging.h"
#include "common/units.h"
#include "sim/sim_config.h"
#include "sim/sim_server.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kUsage =
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
    "Prints `listening grpc=HOST:PORT` on stdout when ready; stops on SIGTERM/SIGINT.\n"
    "\n";

}  // namespace

int RunSimCommand(std::span<const std::string> args) {
  if (WantsHelp(args)) {
    std::cout << kUsage << FormatFlagHelp(sim::SimFlagSpecs());
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
