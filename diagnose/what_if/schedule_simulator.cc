#include "diagnose/what_if/schedule_simulator.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <utility>

namespace sparktrace::diagnose::what_if {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// splitmix64: a fixed, seedable shuffle, so the same input gives the same estimate.
std::uint64_t NextRandom(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Durations drawn by rank come out sorted; Spark launches tasks in index order, not by duration.
void Shuffle(std::vector<double>& units, std::int32_t stage_id) {
  std::uint64_t state = 0x5eed0000ULL + static_cast<std::uint64_t>(stage_id);
  for (std::size_t i = units.size(); i > 1; --i) std::swap(units[i - 1], units[NextRandom(state) % i]);
}

std::int64_t SlotsAt(const std::vector<SlotStep>& steps, double t) {
  const auto after = std::upper_bound(steps.begin(), steps.end(), t,
                                      [](double time, const SlotStep& step) { return time < step.at_ms; });
  return after == steps.begin() ? 0 : std::prev(after)->slots;
}

double NextStepAfter(const std::vector<SlotStep>& steps, double t) {
  const auto after = std::upper_bound(steps.begin(), steps.end(), t,
                                      [](double time, const SlotStep& step) { return time < step.at_ms; });
  if (after == steps.end()) return kNever;
  return after->at_ms;
}

struct StageState {
  const StageInput* input = nullptr;
  std::size_t job = 0;  // index into the group's jobs
  int parents_left = 0;
  std::vector<std::size_t> children;
  std::vector<double> units;
  std::size_t next_unit = 0;
  std::int64_t running = 0;
  double latest_parent_end = 0;
  double delay_after_parents = 0;
  double scale = 1.0;
};

struct JobState {
  double start = 0;
  double tail = 0;  // measured completion − its last stage's completion
  std::size_t stages_left = 0;
  double last_stage_end = 0;
  double end = 0;
};

using TimedStage = std::pair<double, std::size_t>;
using MinHeap = std::priority_queue<TimedStage, std::vector<TimedStage>, std::greater<>>;

class GroupSimulation {
 public:
  GroupSimulation(const std::vector<const JobInput*>& jobs, double measured_start, double sim_start,
                  const SimulationOptions& options, std::int64_t peak_slots)
      : options_(options) {
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const JobInput& job = *jobs[j];
      JobState state;
      state.start = sim_start + std::max(0.0, job.submission_ms - measured_start);
      double last_completion = job.submission_ms;
      for (const StageInput& stage : job.stages)
        last_completion = std::max(last_completion, stage.completion_ms);
      state.tail = std::max(0.0, job.completion_ms - last_completion);
      state.stages_left = job.stages.size();
      state.last_stage_end = state.start;
      state.end = state.start + std::max(0.0, job.completion_ms - job.submission_ms);
      jobs_.push_back(state);
      AddStages(job, j, peak_slots);
    }
  }

  double Run() {
    double t = kNever;
    for (const TimedStage& ready : initial_) t = std::min(t, ready.first);
    for (const TimedStage& ready : initial_) pending_.push(ready);
    bool forced_slot = false;
    while (t < kNever) {
      while (!running_.empty() && running_.top().first <= t) {
        const auto [end, index] = running_.top();
        running_.pop();
        --busy_;
        StageState& stage = stages_[index];
        if (--stage.running == 0 && stage.next_unit == stage.units.size()) FinishStage(index, end);
      }
      while (!pending_.empty() && pending_.top().first <= t) {
        const auto [ready, index] = pending_.top();
        pending_.pop();
        if (stages_[index].units.empty()) {
          FinishStage(index, ready);
        } else {
          runnable_.insert({stages_[index].job, stages_[index].input->stage_id, index});
        }
      }
      const std::int64_t capacity = std::max<std::int64_t>(SlotsAt(options_.slots, t), forced_slot ? 1 : 0);
      while (busy_ < capacity && !runnable_.empty()) {
        const std::size_t index = std::get<2>(*runnable_.begin());
        StageState& stage = stages_[index];
        running_.push({t + stage.units[stage.next_unit++] * stage.scale, index});
        ++stage.running;
        ++busy_;
        ++units_;
        if (stage.next_unit == stage.units.size()) runnable_.erase(runnable_.begin());
      }
      double next = kNever;
      if (!running_.empty()) next = running_.top().first;
      if (!pending_.empty()) next = std::min(next, pending_.top().first);
      if (!runnable_.empty()) next = std::min(next, NextStepAfter(options_.slots, t));
      if (next == kNever && !runnable_.empty()) {
        forced_slot = true;  // work waits for slots that never come: assume one (see the header)
        next = t;
      }
      t = next;
    }
    double end = 0;
    for (const JobState& job : jobs_) end = std::max(end, job.end);
    return end;
  }

  std::int64_t units() const { return units_; }

 private:
  void AddStages(const JobInput& job, std::size_t job_index, std::int64_t peak_slots) {
    std::map<std::int32_t, std::size_t> by_id;
    const std::size_t first = stages_.size();
    for (const StageInput& input : job.stages) {
      StageState stage;
      stage.input = &input;
      stage.job = job_index;
      stage.units = StageUnits(input, UnitsPerStage(input.task_count, peak_slots));
      for (const auto& [stage_id, factor] : options_.stage_scale) {
        if (stage_id == input.stage_id) stage.scale = factor;
      }
      by_id[input.stage_id] = stages_.size();
      stages_.push_back(std::move(stage));
    }
    for (std::size_t i = first; i < stages_.size(); ++i) {
      StageState& stage = stages_[i];
      double latest_parent_completion = -kNever;
      for (const std::int32_t parent : stage.input->parent_ids) {
        const auto found = by_id.find(parent);
        if (found == by_id.end() || found->second == i) continue;  // not run by this job: done already
        ++stage.parents_left;
        stages_[found->second].children.push_back(i);
        latest_parent_completion =
            std::max(latest_parent_completion, stages_[found->second].input->completion_ms);
      }
      if (stage.parents_left == 0) {
        const double delay = std::max(0.0, stage.input->submission_ms - job.submission_ms);
        initial_.push_back({jobs_[job_index].start + delay, i});
      } else {
        stage.delay_after_parents = std::max(0.0, stage.input->submission_ms - latest_parent_completion);
      }
    }
  }

  void FinishStage(std::size_t index, double at) {
    StageState& stage = stages_[index];
    JobState& job = jobs_[stage.job];
    job.last_stage_end = std::max(job.last_stage_end, at);
    if (--job.stages_left == 0) job.end = job.last_stage_end + job.tail;
    for (const std::size_t child_index : stage.children) {
      StageState& child = stages_[child_index];
      child.latest_parent_end = std::max(child.latest_parent_end, at);
      if (--child.parents_left == 0)
        pending_.push({child.latest_parent_end + child.delay_after_parents, child_index});
    }
  }

  const SimulationOptions& options_;
  std::vector<JobState> jobs_;
  std::vector<StageState> stages_;
  std::vector<TimedStage> initial_;
  MinHeap running_;
  MinHeap pending_;
  std::set<std::tuple<std::size_t, std::int32_t, std::size_t>> runnable_;  // Spark's FIFO: job, stage
  std::int64_t busy_ = 0;
  std::int64_t units_ = 0;
};

}  // namespace

std::int64_t PeakSlots(const std::vector<SlotStep>& slots) {
  std::int64_t peak = 0;
  for (const SlotStep& step : slots) peak = std::max(peak, step.slots);
  return peak;
}

double FirstPeakMs(const std::vector<SlotStep>& slots, double start_ms) {
  const std::int64_t peak = PeakSlots(slots);
  for (const SlotStep& step : slots) {
    if (step.slots == peak) return std::max(start_ms, step.at_ms);
  }
  return start_ms;
}

std::int64_t UnitsPerStage(std::int64_t task_count, std::int64_t peak_slots) {
  if (task_count <= 0) return 0;
  return std::min(task_count, std::max(kMinUnitsPerStage, 4 * peak_slots));
}

std::vector<double> StageUnits(const StageInput& stage, std::int64_t units) {
  const std::int64_t n = stage.task_count;
  if (n <= 0 || units <= 0) return {};
  units = std::min(units, n);
  std::vector<double> out(static_cast<std::size_t>(units), 0.0);
  const auto m = static_cast<std::int64_t>(stage.task_ms.size());
  if (m == 0 && stage.duration_profile.size() >= 2) {
    const std::vector<std::int64_t>& profile = stage.duration_profile;
    const double last = static_cast<double>(profile.size() - 1);
    for (std::int64_t r = 0; r < n; ++r) {
      const double x = (static_cast<double>(r) + 0.5) / static_cast<double>(n) * last;
      const auto i = std::min(static_cast<std::size_t>(x), profile.size() - 2);
      const double low = static_cast<double>(profile[i]);
      const double high = static_cast<double>(profile[i + 1]);
      out[static_cast<std::size_t>(r % units)] += low + (high - low) * (x - static_cast<double>(i));
    }
    Shuffle(out, stage.stage_id);
    return out;
  }
  if (m == 0) {
    // No durations kept: the stage's task time spread evenly.
    const double each = static_cast<double>(stage.task_time_ms) / static_cast<double>(n);
    for (std::int64_t k = 0; k < n; ++k) out[static_cast<std::size_t>(k * units / n)] += each;
    return out;
  }
  if (m == n) {
    // Every duration, in the order the tasks ended: contiguous runs keep that order.
    for (std::int64_t k = 0; k < n; ++k) {
      out[static_cast<std::size_t>(k * units / n)] +=
          static_cast<double>(stage.task_ms[static_cast<std::size_t>(k)]);
    }
    return out;
  }
  // A sample or a profile: task of rank r takes the sample's nearest rank; ranks are strided over
  // the units so that each holds short and long tasks alike, and the units are shuffled.
  std::vector<std::int64_t> sorted = stage.task_ms;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t r = 0; r < n; ++r) {
    const auto rank = static_cast<std::int64_t>((static_cast<double>(r) + 0.5) * static_cast<double>(m) /
                                                static_cast<double>(n));
    out[static_cast<std::size_t>(r % units)] +=
        static_cast<double>(sorted[static_cast<std::size_t>(std::min(rank, m - 1))]);
  }
  Shuffle(out, stage.stage_id);
  return out;
}

double LeadWithoutSlots(const AttemptInput& input) {
  if (input.jobs.empty()) return 0;
  double first_job = input.jobs.front().submission_ms;
  for (const JobInput& job : input.jobs) first_job = std::min(first_job, job.submission_ms);
  double first_slot = first_job;
  for (const SlotStep& step : input.slots) {
    if (step.slots > 0) {
      first_slot = step.at_ms;
      break;
    }
  }
  // A job submitted before any slot was alive shows the driver was not waiting: its stages wait
  // in the simulation instead.
  if (first_slot > first_job) return 0;
  return std::max(0.0, first_slot - input.start_ms);
}

SimulationResult Simulate(const AttemptInput& input, const SimulationOptions& options) {
  std::vector<const JobInput*> jobs;
  for (const JobInput& job : input.jobs) jobs.push_back(&job);
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobInput* a, const JobInput* b) {
    return std::tie(a->submission_ms, a->job_id) < std::tie(b->submission_ms, b->job_id);
  });
  const std::int64_t peak_slots = PeakSlots(options.slots);
  SimulationResult result;
  double shift = -options.skip_lead_ms;  // simulated − measured, accumulated over the groups so far
  std::size_t i = 0;
  while (i < jobs.size()) {
    // A group: jobs whose measured runs overlap (a job submitted before the group's end joins it).
    std::vector<const JobInput*> group{jobs[i]};
    const double measured_start = jobs[i]->submission_ms;
    double measured_end = std::max(jobs[i]->completion_ms, measured_start);
    for (++i; i < jobs.size() && jobs[i]->submission_ms < measured_end; ++i) {
      group.push_back(jobs[i]);
      measured_end = std::max(measured_end, jobs[i]->completion_ms);
    }
    const double sim_start = measured_start + shift;
    GroupSimulation simulation(group, measured_start, sim_start, options, peak_slots);
    const double sim_end = std::max(sim_start, simulation.Run());
    result.units += simulation.units();
    result.job_groups_ms += sim_end - sim_start;
    result.measured_groups_ms += measured_end - measured_start;
    shift += (sim_end - sim_start) - (measured_end - measured_start);
  }
  result.wall_ms = std::max(0.0, input.end_ms - input.start_ms + shift);
  return result;
}

}  // namespace sparktrace::diagnose::what_if
