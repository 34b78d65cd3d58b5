#include "diagnose/what_if/what_if_estimates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

#include "diagnose/what_if/schedule_simulator.h"

namespace sparktrace::diagnose::what_if {
namespace {

constexpr double kAlways = std::numeric_limits<double>::lowest();
constexpr std::int64_t kMinComputeReadBytes = 1 << 20;  // below this the compute pace is noise

std::vector<SlotStep> Constant(std::int64_t slots) { return {SlotStep{kAlways, slots}}; }

// `lead`: the driver's wait for the first executor that the scenario leaves out; it is not simulated
// work, so the ratio does not scale it (see the header).
double Anchor(Anchoring anchoring, double measured, double today, double scenario, double lead) {
  switch (anchoring) {
    case Anchoring::kRaw:
      return scenario;
    case Anchoring::kDifference:
      // A scenario can save at most what the simulated jobs took; never below zero.
      return std::max(0.0, measured - (today - scenario));
    case Anchoring::kRatio:
      break;
  }
  const double simulated_today = today - lead;
  if (simulated_today <= 0) return scenario;
  return std::max(0.0, measured - lead) * scenario / simulated_today;
}

bool HasStages(const AttemptInput& input) {
  return std::any_of(input.jobs.begin(), input.jobs.end(),
                     [](const JobInput& job) { return !job.stages.empty(); });
}

std::string Duration(double ms) {
  const auto total_s = static_cast<std::int64_t>(std::llround(std::max(0.0, ms) / 1000.0));
  char text[48];
  if (ms < 10'000) {
    std::snprintf(text, sizeof text, "%.1f s", std::max(0.0, ms) / 1000.0);
  } else if (total_s < 3600) {
    if (total_s < 60) {
      std::snprintf(text, sizeof text, "%lld s", static_cast<long long>(total_s));
    } else {
      std::snprintf(text, sizeof text, "%lld min %lld s", static_cast<long long>(total_s / 60),
                    static_cast<long long>(total_s % 60));
    }
  } else {
    const std::int64_t minutes = (total_s + 30) / 60;
    std::snprintf(text, sizeof text, "%lld h %lld min", static_cast<long long>(minutes / 60),
                  static_cast<long long>(minutes % 60));
  }
  return text;
}

}  // namespace

std::vector<std::pair<std::int32_t, double>> WriteAtComputePace(const AttemptInput& input) {
  std::int64_t compute_ms = 0;
  std::int64_t compute_bytes = 0;
  for (const JobInput& job : input.jobs) {
    for (const StageInput& stage : job.stages) {
      if (stage.writes_output || stage.read_bytes <= 0) continue;
      compute_ms += stage.task_time_ms;
      compute_bytes += stage.read_bytes;
    }
  }
  std::vector<std::pair<std::int32_t, double>> factors;
  if (compute_bytes < kMinComputeReadBytes || compute_ms <= 0) return factors;
  const double ms_per_byte = static_cast<double>(compute_ms) / static_cast<double>(compute_bytes);
  for (const JobInput& job : input.jobs) {
    for (const StageInput& stage : job.stages) {
      if (!stage.writes_output || stage.read_bytes <= 0 || stage.task_time_ms <= 0) continue;
      const double at_pace = ms_per_byte * static_cast<double>(stage.read_bytes);
      const double factor = at_pace / static_cast<double>(stage.task_time_ms);
      if (factor < 1.0) factors.emplace_back(stage.stage_id, factor);
    }
  }
  return factors;
}

std::vector<WhatIfEstimate> EstimateWhatIf(const AttemptInput& input, const WhatIfOptions& options) {
  std::vector<WhatIfEstimate> estimates;
  const std::int64_t peak = PeakSlots(input.slots);
  if (!HasStages(input) || peak <= 0) return estimates;
  const double measured = std::max(0.0, input.end_ms - input.start_ms);
  const double today = Simulate(input, SimulationOptions{input.slots, {}}).wall_ms;
  const auto add = [&](std::string name, std::string label, std::int64_t slots,
                       const SimulationOptions& simulation, std::vector<std::string> answers) {
    WhatIfEstimate estimate;
    estimate.name = std::move(name);
    estimate.label = std::move(label);
    estimate.slots = slots;
    estimate.measured_ms = measured;
    estimate.simulated_today_ms = today;
    estimate.simulated_ms = Simulate(input, simulation).wall_ms;
    estimate.estimated_ms =
        Anchor(options.anchoring, measured, today, estimate.simulated_ms, simulation.skip_lead_ms);
    estimate.saving_ms = measured - estimate.estimated_ms;
    estimate.answers = std::move(answers);
    estimates.push_back(std::move(estimate));
    return &estimates.back();
  };

  const double lead = LeadWithoutSlots(input);
  add("executors-ready", "with executors ready at the start", peak,
      SimulationOptions{Constant(peak), {}, lead}, {"resource-wait-long"});

  if (input.slots_per_executor > 0 && input.peak_executors > 0) {
    std::set<std::int64_t> counts;
    for (const double factor : {0.5, 1.0, 2.0, 4.0}) {
      counts.insert(
          std::max<std::int64_t>(1, std::llround(factor * static_cast<double>(input.peak_executors))));
    }
    for (const std::int64_t n : counts) {
      std::vector<std::string> answers;
      if (n < input.peak_executors) answers = {"idle-executors"};
      if (n == input.peak_executors) answers = {"resource-wait-long"};
      if (n > input.peak_executors) answers = {"slow-spark-jobs"};
      const std::int64_t slots = n * input.slots_per_executor;
      WhatIfEstimate* estimate =
          add("executors-" + std::to_string(n),
              "with " + std::to_string(n) + (n == 1 ? " executor" : " executors") + " from the start", slots,
              SimulationOptions{Constant(slots), {}, lead}, std::move(answers));
      estimate->executors = n;
    }
  }

  std::vector<std::pair<std::int32_t, double>> factors = WriteAtComputePace(input);
  if (!factors.empty()) {
    add("write-at-compute-pace", "with the write at the job's compute pace", peak,
        SimulationOptions{input.slots, std::move(factors)}, {"s3-write-slow"});
  }
  return estimates;
}

std::optional<ReplayCheck> CheckAgainstSettledJobs(const AttemptInput& input) {
  const std::int64_t peak = PeakSlots(input.slots);
  if (peak <= 0 || input.slots.empty()) return std::nullopt;
  const double settled = FirstPeakMs(input.slots, input.start_ms);
  if (settled <= input.start_ms || settled <= input.slots.front().at_ms) return std::nullopt;  // no ramp-up
  // Until the slots first fall below the peak again (dynamic allocation giving executors back).
  double falls = std::numeric_limits<double>::infinity();
  for (const SlotStep& step : input.slots) {
    if (step.at_ms > settled && step.slots < peak) {
      falls = step.at_ms;
      break;
    }
  }
  AttemptInput settled_input;
  settled_input.start_ms = settled;
  settled_input.end_ms = settled;
  for (const JobInput& job : input.jobs) {
    if (job.submission_ms >= settled && job.completion_ms <= falls && !job.stages.empty()) {
      settled_input.jobs.push_back(job);
      settled_input.end_ms = std::max(settled_input.end_ms, job.completion_ms);
    }
  }
  if (settled_input.jobs.empty()) return std::nullopt;
  const SimulationResult result = Simulate(settled_input, SimulationOptions{Constant(peak), {}});
  ReplayCheck check;
  check.settled_at_ms = settled;
  check.jobs = static_cast<std::int64_t>(settled_input.jobs.size());
  check.measured_ms = result.measured_groups_ms;
  check.simulated_ms = result.job_groups_ms;
  return check;
}

std::string RoughDuration(double ms) { return "~" + Duration(ms); }

std::string EstimateSentence(const WhatIfEstimate& estimate) {
  return estimate.label + ": " + RoughDuration(estimate.estimated_ms) + " instead of " +
         Duration(estimate.measured_ms);
}

}  // namespace sparktrace::diagnose::what_if
