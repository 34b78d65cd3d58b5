#include "sim/sim_config.h"

#include <charconv>
#include <string_view>
#include <vector>

#include "common/flag_values.h"
#include "common/units.h"

namespace sparktrace::sim {
namespace {

Result<void> CheckHostPort(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("--listen: expected HOST:PORT, got '" + address + "'");
  }
  const std::string_view port(address.data() + colon + 1, address.size() - colon - 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return InvalidArgument("--listen: bad port in '" + address + "'");
  }
  return {};
}

}  // namespace

std::span<const FlagSpec> SimFlagSpecs() {
  static const std::vector<FlagSpec> specs = {
      {"listen", "HOST:PORT", "127.0.0.1:15002", "where to serve Spark Connect gRPC (port 0: any free port)"},
      {"batches", "N", "3", "Arrow-batch responses per ExecutePlan (metadata x-sim-batches overrides)"},
      {"batch-bytes", "BYTES", "1KiB",
       "size of each batch's data bytes, not real Arrow IPC (metadata x-sim-batch-bytes overrides)"},
      {"batch-interval", "DURATION", "0ms",
       "pause between batches (metadata x-sim-batch-interval-ms overrides)"},
      {"progress", "MODE", "auto",
       "Spark 4 execution_progress responses before the batches: auto (clients whose client_type says "
       "spark/4 or later, as a Spark 4 server's clients get them), always or never"},
      {"progress-steps", "N", "4",
       "progress responses per ExecutePlan, a --batch-interval apart (metadata x-sim-progress-steps "
       "overrides, 0 turning them off)"},
      {"progress-tasks", "N", "8",
       "tasks of the scan stage the progress reports (the reduce stage has a quarter)"},
      {"stream-cut-after", "DURATION", "2m",
       "end a reattachable stream without result_complete after this long (0: never)"},
      {"stream-cut-bytes", "BYTES", "1GiB",
       "end a reattachable stream without result_complete after this many bytes (0: never)"},
      {"max-message-bytes", "BYTES", "128MiB", "largest gRPC message accepted or sent"},
      {"event-log-dir", "DIR", "",
       "write a simulated Spark event log of the operations executed into DIR (must exist; none when empty)"},
      {"scenario", "NAMES", "clean",
       "problems the event log shows (comma-separated): slow-executor-allocation, slow-writes, skew, spill, "
       "gc-pressure, failing-tasks, shuffle-bottleneck, idle-executors; or clean"},
      {"strength", "X", "1", "how strongly the scenario's problems show, 0 (clean) to 1 (severe)"},
      {"seed", "N", "1", "seed of the event log's task-level jitter"},
      {"event-log-codec", "CODEC", "plain", "plain or zstd"},
      {"event-log-rolling-bytes", "BYTES", "0", "roll the event log past this many bytes (0: one file)"},
      {"time-scale", "F", "1", "real duration of a simulated second, in seconds (0.01: 100x faster)"},
      {"log-level", "LEVEL", "info", "trace, debug, info, warn, error, off"},
      {"log-format", "FORMAT", "text", "text or json"},
  };
  return specs;
}

Result<SimConfig> SimConfigFromFlags(const ParsedFlags& flags) {
  SimConfig config;
  config.listen = flags.Get("listen");
  if (auto ok = CheckHostPort(config.listen); !ok) return ok.error();

  const std::string& batches = flags.Get("batches");
  const auto [end, ec] = std::from_chars(batches.data(), batches.data() + batches.size(), config.batches);
  if (batches.empty() || ec != std::errc() || end != batches.data() + batches.size() || config.batches < 0) {
    return InvalidArgument("--batches: expected a non-negative integer, got '" + batches + "'");
  }
  auto byte_flag = [&flags](std::string_view name, std::uint64_t& out) -> Result<void> {
    auto value = ParseByteSize(flags.Get(name));
    if (!value.ok()) return InvalidArgument("--" + std::string(name) + ": " + value.error().message);
    out = *value;
    return {};
  };
  auto duration_flag = [&flags](std::string_view name, std::chrono::milliseconds& out) -> Result<void> {
    auto value = ParseDuration(flags.Get(name));
    if (!value.ok()) return InvalidArgument("--" + std::string(name) + ": " + value.error().message);
    out = *value;
    return {};
  };
  if (auto ok = byte_flag("batch-bytes", config.batch_bytes); !ok) return ok.error();
  if (auto ok = byte_flag("stream-cut-bytes", config.stream_cut_bytes); !ok) return ok.error();
  if (auto ok = byte_flag("max-message-bytes", config.max_message_bytes); !ok) return ok.error();
  if (auto ok = duration_flag("batch-interval", config.batch_interval); !ok) return ok.error();
  if (auto ok = duration_flag("stream-cut-after", config.stream_cut_after); !ok) return ok.error();
  // A batch must fit in one gRPC message, with room for the response's other fields.
  if (config.batch_bytes + 4096 > config.max_message_bytes) {
    return InvalidArgument("--batch-bytes: must be at least 4KiB below --max-message-bytes");
  }
  if (config.max_message_bytes > 0x7fffffff) {
    return InvalidArgument("--max-message-bytes: at most 2GiB-1 (a gRPC limit)");
  }

  const std::string& progress = flags.Get("progress");
  if (progress == "auto") {
    config.progress = SimConfig::Progress::kAuto;
  } else if (progress == "always") {
    config.progress = SimConfig::Progress::kAlways;
  } else if (progress == "never") {
    config.progress = SimConfig::Progress::kNever;
  } else {
    return InvalidArgument("--progress: expected auto, always or never, got '" + progress + "'");
  }
  auto steps = IntegerFlag(flags, "progress-steps", 1, 10'000);
  if (!steps.ok()) return steps.error();
  config.progress_steps = *steps;
  auto tasks = IntegerFlag(flags, "progress-tasks", 1, 1'000'000);
  if (!tasks.ok()) return tasks.error();
  config.progress_tasks = *tasks;

  config.event_log_dir = flags.Get("event-log-dir");
  auto scenario =
      eventlog::ParseScenarioFlags(flags.Get("scenario"), flags.Get("strength"), flags.Get("seed"));
  if (!scenario.ok()) return scenario.error();
  config.scenario = *scenario;
  auto codec = eventlog::ParseLogCodec(flags.Get("event-log-codec"));
  if (!codec.ok()) return InvalidArgument("--event-log-" + codec.error().message);
  config.event_log_codec = *codec;
  if (auto ok = byte_flag("event-log-rolling-bytes", config.event_log_rolling_bytes); !ok) return ok.error();
  const std::string& scale = flags.Get("time-scale");
  const auto [scale_end, scale_error] =
      std::from_chars(scale.data(), scale.data() + scale.size(), config.time_scale);
  if (scale.empty() || scale_error != std::errc() || scale_end != scale.data() + scale.size() ||
      !(config.time_scale > 0 && config.time_scale <= 1000)) {
    return InvalidArgument("--time-scale: expected a number in (0, 1000], got '" + scale + "'");
  }

  auto level = ParseLogLevel(flags.Get("log-level"));
  if (!level.ok()) return InvalidArgument("--log-level: " + level.error().message);
  config.log_level = *level;
  auto format = ParseLogFormat(flags.Get("log-format"));
  if (!format.ok()) return InvalidArgument("--log-format: " + format.error().message);
  config.log_format = *format;
  return config;
}

}  // namespace sparktrace::sim
