#pragma once
// Flags and validated configuration of `sparktrace sim`, the Spark Connect protocol simulator.

#include <spdlog/common.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "common/flags.h"
#include "common/logging.h"
#include "common/result.h"
#include "sim/eventlog/event_log_writer.h"
#include "sim/eventlog/scenario.h"

namespace sparktrace::sim {

// Immutable after SimConfigFromFlags; defaults mirror Spark Connect's where Spark has one.
struct SimConfig {
  std::string listen = "127.0.0.1:15002";
  // Shape of every ExecutePlan result unless request metadata overrides it (see SimService).
  std::int64_t batches = 3;
  std::uint64_t batch_bytes = 1024;
  std::chrono::milliseconds batch_interval{0};
  // Spark 4's execution_progress responses before the batches (sim/execution.h): for clients
  // whose client_type names spark/4 or later (kAuto), always, or never. Metadata
  // x-sim-progress-steps overrides both the mode and the count.
  enum class Progress : std::uint8_t { kAuto, kAlways, kNever };
  Progress progress = Progress::kAuto;
  std::int64_t progress_steps = 4;
  std::int64_t progress_tasks = 8;
  // Spark's senderMaxStreamDuration / senderMaxStreamSize: a reattachable stream ends without
  // result_complete after this long or this many response bytes. 0 disables the cut.
  std::chrono::milliseconds stream_cut_after{std::chrono::minutes(2)};
  std::uint64_t stream_cut_bytes = std::uint64_t{1} << 30;
  std::uint64_t max_message_bytes = std::uint64_t{128} << 20;
  // The simulated Spark event log (--event-log-dir); empty: none is written.
  std::string event_log_dir;
  eventlog::Scenario scenario;
  eventlog::LogCodec event_log_codec = eventlog::LogCodec::kPlain;
  std::uint64_t event_log_rolling_bytes = 0;  // 0: one file
  double time_scale = 1.0;                    // simulated durations × this = real durations
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;
};

std::span<const FlagSpec> SimFlagSpecs();

Result<SimConfig> SimConfigFromFlags(const ParsedFlags& flags);

}  // namespace sparktrace::sim
