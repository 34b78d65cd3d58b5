#include "cli/sim_generate_log_command.h"

#include <charconv>
#include <cstdio>
#include <string_view>
#include <vector>

#include "common/flags.h"
#include "common/units.h"
#include "sim/eventlog/event_log_writer.h"
#include "sim/eventlog/offline_log.h"

namespace sparktrace::cli {
namespace {

constexpr const char* kGenerateLogUsage =
    "Usage: sparktrace sim generate-log --out-dir DIR [flags]\n"
    "\n"
    "Writes the Spark event log a Spark Connect server would write while its sessions run\n"
    "--operations operations (reads and writes of several sizes: an SQL execution with a\n"
    "shuffle-map job and a result job each, tagged as Spark tags Connect jobs), with the problems of\n"
    "--scenario injected at --strength. Simulated in virtual time, so it returns at once; the same\n"
    "flags give the same bytes. Prints the written path (file, or eventlog_v2_ directory) on stdout.\n"
    "\n"
    "Scenarios (comma-separated, or clean): slow-executor-allocation, slow-writes, skew, spill,\n"
    "gc-pressure, failing-tasks, shuffle-bottleneck, idle-executors, and the SQL plan's\n"
    "exploding-join, nested-loop-join, scan-discards-most, broadcast-near-limit. What strength does\n"
    "to each is described in sim/eventlog/scenario.h (ScenarioKnobs). --executors and\n"
    "--executor-cores size the cluster: the same flags at two sizes give the same workload (task\n"
    "counts, data sizes).\n"
    "\n";

std::span<const FlagSpec> GenerateLogFlagSpecs() {
  static const std::vector<FlagSpec> specs = {
      {"out-dir", "DIR", "", "directory to write the log into (must exist)", true},
      {"scenario", "NAMES", "clean", "clean, or problems to inject, comma-separated"},
      {"strength", "X", "1", "how strongly to inject them, 0 (as clean) to 1 (severe)"},
      {"seed", "N", "1", "seed of the task-level jitter and of the ids"},
      {"executors", "N", "4", "executors the application gets (the same workload at another size)"},
      {"executor-cores", "N", "4", "cores of each executor"},
      {"operations", "N", "6", "Spark Connect operations to run"},
      {"sessions", "N", "1", "sessions running them concurrently (round robin)"},
      {"user", "USER", "airflow", "Spark Connect user id of the sessions"},
      {"codec", "CODEC", "plain", "plain or zstd"},
      {"rolling-bytes", "BYTES", "0", "roll to a new events_N file past this many bytes (0: single file)"},
      {"app-id", "ID", "", "application id (default: spark-<hex digest of scenario, strength, seed>)"},
      {"app-name", "NAME", "Spark Connect server", "application name"},
      {"spark-version", "VERSION", "4.0.0",
       "Spark version to imitate (3.5.0/3.5.1 swap user and session in job tags)"},
      {"start-ms", "EPOCH_MS", "1735689600000", "application start time, epoch milliseconds"},
  };
  return specs;
}

Result<std::int64_t> IntegerFlag(const ParsedFlags& flags, std::string_view name, std::int64_t min) {
  const std::string& text = flags.Get(name);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min) {
    return InvalidArgument("--" + std::string(name) + ": expected an integer >= " + std::to_string(min) +
                           ", got '" + text + "'");
  }
  return value;
}

// A stable default id: different flags give different logs distinct names in one directory. `cluster`
// is empty at the default size, so the ids of logs written before --executors existed stay.
std::string DefaultAppId(const std::string& scenario, const std::string& strength, const std::string& seed,
                         const std::string& cluster) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  const std::string seed_part = seed + cluster;
  for (const std::string* part : {&scenario, &strength, &seed_part}) {
    for (const char c : *part + "\n") {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ULL;
    }
  }
  char text[40];
  std::snprintf(text, sizeof text, "spark-%016llx%016llx", static_cast<unsigned long long>(hash),
                static_cast<unsigned long long>(hash * 0x9e3779b97f4a7c15ULL));
  return text;
}

}  // namespace

int RunSimGenerateLogCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (WantsHelp(args)) {
    out << kGenerateLogUsage << FormatFlagHelp(GenerateLogFlagSpecs());
    return 0;
  }
  auto flags = ParseFlags(GenerateLogFlagSpecs(), args);
  if (!flags.ok()) {
    err << "sparktrace sim generate-log: " << flags.error().message << "\n";
    return 2;
  }
  const auto fail = [&err](const Error& error) {
    err << "sparktrace sim generate-log: " << error.message << "\n";
    return 2;
  };
  if (!flags->positional().empty())
    return fail(InvalidArgument("unexpected argument '" + flags->positional().front() + "'"));
  auto scenario =
      sim::eventlog::ParseScenarioFlags(flags->Get("scenario"), flags->Get("strength"), flags->Get("seed"));
  if (!scenario.ok()) return fail(scenario.error());
  auto executors = IntegerFlag(*flags, "executors", 1);
  if (!executors.ok()) return fail(executors.error());
  auto executor_cores = IntegerFlag(*flags, "executor-cores", 1);
  if (!executor_cores.ok()) return fail(executor_cores.error());
  if (*executors > 1'000 || *executor_cores > 256)
    return fail(InvalidArgument("--executors/--executor-cores: too many"));
  scenario->executors = static_cast<int>(*executors);
  scenario->cores_per_executor = static_cast<int>(*executor_cores);
  const std::string cluster = *executors == 4 && *executor_cores == 4
                                  ? std::string()
                                  : "/" + std::to_string(*executors) + "x" + std::to_string(*executor_cores);
  auto operations = IntegerFlag(*flags, "operations", 0);
  if (!operations.ok()) return fail(operations.error());
  auto sessions = IntegerFlag(*flags, "sessions", 1);
  if (!sessions.ok()) return fail(sessions.error());
  auto start_ms = IntegerFlag(*flags, "start-ms", 0);
  if (!start_ms.ok()) return fail(start_ms.error());
  auto codec = sim::eventlog::ParseLogCodec(flags->Get("codec"));
  if (!codec.ok()) return fail(InvalidArgument("--" + codec.error().message));
  auto rolling_bytes = ParseByteSize(flags->Get("rolling-bytes"));
  if (!rolling_bytes.ok()) return fail(FlagError("rolling-bytes", rolling_bytes.error()));
  if (*operations > 10'000 || *sessions > 1'000)
    return fail(InvalidArgument("--operations/--sessions: too many"));

  sim::eventlog::OfflineLogOptions options;
  options.scenario = *scenario;
  options.operations = static_cast<int>(*operations);
  options.sessions = static_cast<int>(*sessions);
  options.user_id = flags->Get("user");
  options.app.app_id = flags->IsSet("app-id") ? flags->Get("app-id")
                                              : DefaultAppId(scenario->Name(), flags->Get("strength"),
                                                             flags->Get("seed"), cluster);
  options.app.app_name = flags->Get("app-name");
  options.app.spark_version = flags->Get("spark-version");
  options.app.start_ms = *start_ms;
  const sim::eventlog::GeneratedLog log = sim::eventlog::GenerateLog(options);

  sim::eventlog::WriterOptions writer_options;
  writer_options.directory = flags->Get("out-dir");
  writer_options.app_id = options.app.app_id;
  writer_options.codec = *codec;
  writer_options.rolling_max_bytes = *rolling_bytes;
  auto writer = sim::eventlog::EventLogWriter::Open(writer_options);
  if (!writer.ok()) {
    err << "sparktrace sim generate-log: " << writer.error().message << "\n";
    return 1;
  }
  for (const sim::eventlog::LogLine& line : log.lines) {
    if (auto ok = (*writer)->Write(line.text, line.flush); !ok) {
      err << "sparktrace sim generate-log: " << ok.error().message << "\n";
      return 1;
    }
  }
  if (auto ok = (*writer)->Close(); !ok) {
    err << "sparktrace sim generate-log: " << ok.error().message << "\n";
    return 1;
  }
  out << (*writer)->final_path() << "\n";
  return 0;
}

}  // namespace sparktrace::cli
