#pragma once
// Shared helpers of the tests/unit/sim/eventlog/sim_eventlog_*_test.cc files: generate a simulated event log
// in virtual time and read it back the way sparktrace reads real ones (listener/events' parser into
// listener/correlate's ApplicationModel).

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"
#include "listener/events/event_parser.h"
#include "sim/eventlog/offline_log.h"

namespace sparktrace::sim::eventlog::testing {

inline OfflineLogOptions LogOptions(std::string_view scenario, double strength, std::uint64_t seed = 7,
                                    int operations = 6) {
  OfflineLogOptions options;
  auto parsed = ParseScenario(scenario, strength, seed);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
  if (parsed.ok()) options.scenario = *parsed;
  options.operations = operations;
  options.app.app_id = "spark-test-application";
  return options;
}

struct ParsedLog {
  GeneratedLog log;
  listener::correlate::ApplicationModel model;
  int malformed = 0;
  std::string first_malformed;
  std::map<std::string, int> events;  // by SparkEventName
};

inline ParsedLog GenerateAndParse(const OfflineLogOptions& options) {
  ParsedLog parsed;
  parsed.log = GenerateLog(options);
  listener::events::EventParser parser;
  for (const LogLine& line : parsed.log.lines) {
    auto event = parser.Parse(line.text);
    if (!event.ok()) {
      if (parsed.malformed++ == 0)
        parsed.first_malformed = event.error().message + ": " + line.text.substr(0, 300);
      continue;
    }
    ++parsed.events[std::string(listener::events::SparkEventName(*event))];
    parsed.model.Apply(*event);
  }
  return parsed;
}

inline double Share(const listener::correlate::PhaseBreakdown& phases, listener::correlate::Phase phase) {
  const auto window = phases.window.end_ms - phases.window.start_ms;
  return window > 0 ? static_cast<double>(phases.TotalMs(phase)) / static_cast<double>(window) : 0.0;
}

// Sums over every stage attempt of the model.
struct StageTotals {
  std::int64_t run_ms = 0;
  std::int64_t gc_ms = 0;
  std::int64_t fetch_wait_ms = 0;
  std::int64_t shuffle_read_bytes = 0;
  std::int64_t input_bytes = 0;
  std::int64_t memory_spilled = 0;
  std::int64_t disk_spilled = 0;
  std::int64_t failed_tasks = 0;
  std::int64_t output_bytes = 0;
};

inline StageTotals Totals(const listener::correlate::ApplicationModel& model) {
  StageTotals totals;
  for (const auto& [key, stage] : model.stages()) {
    totals.run_ms += stage.tasks.executor_run_time_ms;
    totals.gc_ms += stage.tasks.jvm_gc_time_ms;
    totals.fetch_wait_ms += stage.tasks.shuffle_fetch_wait_ms;
    totals.shuffle_read_bytes += stage.tasks.shuffle_read_bytes;
    totals.input_bytes += stage.tasks.input_bytes;
    totals.memory_spilled += stage.tasks.memory_bytes_spilled;
    totals.disk_spilled += stage.tasks.disk_bytes_spilled;
    totals.failed_tasks += stage.tasks.failed_tasks;
    totals.output_bytes += stage.tasks.output_bytes;
  }
  return totals;
}

}  // namespace sparktrace::sim::eventlog::testing
