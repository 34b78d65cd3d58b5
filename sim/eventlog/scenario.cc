#include "sim/eventlog/scenario.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/eventlog/random_source.h"

namespace sparktrace::sim::eventlog {

std::string_view ProblemName(Problem problem) {
  switch (problem) {
    case Problem::kSlowExecutorAllocation:
      return "slow-executor-allocation";
    case Problem::kSlowWrites:
      return "slow-writes";
    case Problem::kSkew:
      return "skew";
    case Problem::kSpill:
      return "spill";
    case Problem::kGcPressure:
      return "gc-pressure";
    case Problem::kFailingTasks:
      return "failing-tasks";
    case Problem::kShuffleBottleneck:
      return "shuffle-bottleneck";
    case Problem::kIdleExecutors:
      return "idle-executors";
    case Problem::kExplodingJoin:
      return "exploding-join";
    case Problem::kNestedLoopJoin:
      return "nested-loop-join";
    case Problem::kScanDiscardsMost:
      return "scan-discards-most";
    case Problem::kBroadcastNearLimit:
      return "broadcast-near-limit";
  }
  return "clean";
}

std::string Scenario::Name() const {
  std::string name;
  for (Problem problem : kAllProblems) {
    if (!Has(problem)) continue;
    if (!name.empty()) name += ',';
    name += ProblemName(problem);
  }
  return name.empty() ? "clean" : name;
}

Result<Scenario> ParseScenario(std::string_view names, double strength, std::uint64_t seed) {
  Scenario scenario;
  scenario.seed = seed;
  if (!(strength >= 0.0 && strength <= 1.0)) {
    return InvalidArgument("strength must be in [0, 1], got " + std::to_string(strength));
  }
  scenario.strength = strength;
  if (names.empty()) return InvalidArgument("scenario: empty (use 'clean' or problem names)");
  while (!names.empty()) {
    const std::size_t comma = names.find(',');
    const std::string_view part = names.substr(0, comma);
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    if (part == "clean") continue;
    bool known = false;
    for (Problem problem : kAllProblems) {
      if (ProblemName(problem) == part) {
        scenario.problems.insert(problem);
        known = true;
      }
    }
    if (!known) {
      std::string all = "clean";
      for (Problem problem : kAllProblems) all += ", " + std::string(ProblemName(problem));
      return InvalidArgument("scenario: unknown name '" + std::string(part) + "' (known: " + all + ")");
    }
  }
  return scenario;
}

Result<Scenario> ParseScenarioFlags(std::string_view names, std::string_view strength,
                                    std::string_view seed) {
  double strength_value = 0;
  const auto [strength_end, strength_error] =
      std::from_chars(strength.data(), strength.data() + strength.size(), strength_value);
  if (strength.empty() || strength_error != std::errc() ||
      strength_end != strength.data() + strength.size() ||
      !(strength_value >= 0.0 && strength_value <= 1.0)) {
    return InvalidArgument("--strength: expected a number in [0, 1], got '" + std::string(strength) + "'");
  }
  std::uint64_t seed_value = 0;
  const auto [seed_end, seed_error] = std::from_chars(seed.data(), seed.data() + seed.size(), seed_value);
  if (seed.empty() || seed_error != std::errc() || seed_end != seed.data() + seed.size()) {
    return InvalidArgument("--seed: expected a non-negative integer, got '" + std::string(seed) + "'");
  }
  auto scenario = ParseScenario(names, strength_value, seed_value);
  if (!scenario.ok()) return InvalidArgument("--" + scenario.error().message);
  return scenario;
}

ScenarioKnobs KnobsFor(const Scenario& scenario) {
  ScenarioKnobs knobs;
  knobs.executors = scenario.executors;
  knobs.cores_per_executor = scenario.cores_per_executor;
  // Clean values drawn from the seed (a stream of its own, so that they do not shift task jitter).
  RandomSource random = RandomSource(scenario.seed).Fork(0xC0FFEE);
  knobs.first_executor_wait_ms = random.UniformInt(2000, 4000);
  knobs.executor_stagger_ms = random.UniformInt(150, 600);

  const double allocation = scenario.StrengthOf(Problem::kSlowExecutorAllocation);
  knobs.first_executor_wait_ms += std::llround(allocation * 240'000);
  knobs.reacquire_wait_ms = std::llround(allocation * 90'000);

  const double writes = scenario.StrengthOf(Problem::kSlowWrites);
  knobs.write_bytes_per_second /= 1.0 + 19.0 * writes;
  knobs.commit_ms += std::llround(writes * 5000);

  knobs.skew_factor = 1.0 + 24.0 * scenario.StrengthOf(Problem::kSkew);
  knobs.spill_ratio = 3.0 * scenario.StrengthOf(Problem::kSpill);
  knobs.gc_share += 0.5 * scenario.StrengthOf(Problem::kGcPressure);

  const double failing = scenario.StrengthOf(Problem::kFailingTasks);
  knobs.failing_task_share = 0.2 * failing;
  knobs.executor_killed = failing >= 0.5;
  knobs.permanent_failure = failing >= 0.8;

  knobs.fetch_wait_share += 0.6 * scenario.StrengthOf(Problem::kShuffleBottleneck);

  const double idle = scenario.StrengthOf(Problem::kIdleExecutors);
  knobs.extra_gap_between_operations_ms = std::llround(idle * 120'000);
  knobs.extra_gap_between_jobs_ms = std::llround(idle * 30'000);

  const double exploding = scenario.StrengthOf(Problem::kExplodingJoin);
  knobs.join_rows_per_input_row += 49.0 * exploding;
  const double nested = scenario.StrengthOf(Problem::kNestedLoopJoin);
  if (nested > 0)
    knobs.nested_loop_build_rows = std::max<std::int64_t>(1, std::llround(50'000 * nested * nested));
  const double discarding = scenario.StrengthOf(Problem::kScanDiscardsMost);
  knobs.filter_kept_share *= std::exp(-12.0 * discarding);
  knobs.map_compute_factor = (1.0 + 4.9 * exploding) * (1.0 + 6.0 * nested) * (1.0 + 3.0 * discarding);
  const double broadcast = scenario.StrengthOf(Problem::kBroadcastNearLimit);
  knobs.broadcast_extra_bytes = std::llround(broadcast * 3.2 * 1024 * 1024 * 1024);
  knobs.broadcast_extra_ms = std::llround(broadcast * 60'000);
  return knobs;
}

}  // namespace sparktrace::sim::eventlog
