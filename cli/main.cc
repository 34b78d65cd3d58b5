// sparktrace: one binary, one subcommand per job.

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <absl/synchronization/mutex.h>

#include "cli/demo_command.h"
#include "cli/diagnose_command.h"
#include "cli/proxy_command.h"
#include "cli/sim_command.h"
#include "cli/traces_command.h"
#include "cli/ui_command.h"
#include "cli/version.h"

namespace {

constexpr const char* kVersion = sparktrace::cli::kServiceVersion;

constexpr const char* kHelp =
    "sparktrace — see where the time of a Spark Connect job went.\n"
    "\n"
    "Usage: sparktrace <command> [flags]\n"
    "\n"
    "Commands:\n"
    "  proxy     transparent gRPC proxy in front of a Spark Connect server (port 15002)\n"
    "  traces    list and show the traces in the embedded store\n"
    "  ui        the trace view (a page per Airflow task attempt) over a store file, without a proxy\n"
    "  sim       Spark Connect protocol simulator (a test peer; runs no queries)\n"
    "  demo      the proxy in front of the simulator, an Airflow task's calls, and their trace\n"
    "  diagnose  offline: phases and job/stage timeline of Spark event logs (files or directories)\n"
    "\n"
    "Run `sparktrace <command> --help` for the flags of a command.\n"
    "Flags: --help, --version\n";

}  // namespace

int main(int argc, char** argv) {
  // Debian builds abseil with mutex deadlock detection on, a debugging aid that tracks every
  // lock gRPC takes: about 5% of the proxy's CPU per call. Off, as in release builds of abseil.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kHelp;
    return 2;
  }
  const std::string_view command = args.front();
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kHelp;
    return 0;
  }
  if (command == "--version") {
    std::cout << "sparktrace " << kVersion << "\n";
    return 0;
  }
  const std::span<const std::string> rest(args.begin() + 1, args.end());
  if (command == "proxy") return sparktrace::cli::RunProxyCommand(rest);
  if (command == "sim") return sparktrace::cli::RunSimCommand(rest);
  if (command == "demo") return sparktrace::cli::RunDemoCommand(rest, std::cout, std::cerr);
  if (command == "ui") return sparktrace::cli::RunUiCommand(rest, std::cout, std::cerr);
  if (command == "traces") return sparktrace::cli::RunTracesCommand(rest, std::cout, std::cerr);
  if (command == "diagnose") return sparktrace::cli::RunDiagnoseCommand(rest, std::cout, std::cerr);
  std::cerr << "sparktrace: unknown command '" << command << "'\n\n" << kHelp;
  return 2;
}
