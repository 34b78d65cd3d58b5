#pragma once
// GenerateLog: a whole simulated application at once, in virtual time (no waiting): the log a
// Spark Connect server would write while its sessions run the given operations, for corpora and
// tests. Each session runs its operations one after another; sessions run concurrently, so
// their events interleave in the log as they would in Spark.
//
// Deterministic: the same options give the same lines, byte for byte.
// Threads: a pure function; thread-safe.

#include <string>
#include <vector>

#include "sim/eventlog/application_identity.h"
#include "sim/eventlog/event_log_generator.h"
#include "sim/eventlog/operation_plan.h"
#include "sim/eventlog/random_source.h"
#include "sim/eventlog/scenario.h"

namespace sparktrace::sim::eventlog {

struct OfflineLogOptions {
  ApplicationIdentity app;
  Scenario scenario;
  // Made-up operations (when `specs` is empty): this many, spread over `sessions` sessions of
  // `user_id`, reads and writes of several sizes in a fixed pattern (see MadeUpOperations).
  int operations = 6;
  int sessions = 1;
  std::string user_id = "airflow";
  // The operations to run instead, grouped into sessions by their session ids.
  std::vector<OperationSpec> specs;
};

struct GeneratedLog {
  std::vector<LogLine> lines;
  ScenarioKnobs knobs;
  std::vector<OperationSpec> operations;  // in the order they were planned (their ordinals)
};

GeneratedLog GenerateLog(const OfflineLogOptions& options);

// `count` operations over `sessions` sessions (round robin), ids made from `seed` (lower-case
// UUIDs). Pattern by index modulo 6: read M, write M, read S, write L, read L, write S.
std::vector<OperationSpec> MadeUpOperations(int count, int sessions, const std::string& user_id,
                                            std::uint64_t seed);

// A lower-case version-4 UUID drawn from `random`.
std::string UuidFrom(RandomSource& random);

}  // namespace sparktrace::sim::eventlog
