#include "diagnose/cost_of_model.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "listener/correlate/executor_sharing.h"
#include "listener/correlate/executor_timeline.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/resource_settings.h"
#include "listener/correlate/span_builder.h"

namespace sparktrace::diagnose {
namespace {

using cost::CostInputs;
using cost::CostWindow;
using cost::ExecutorFact;
using listener::correlate::ApplicationModel;
using listener::correlate::ConnectOperationRecord;
using listener::correlate::StageAttemptRecord;
using listener::correlate::TimeWindow;

double Ms(listener::events::EpochMillis time_ms) {
  return static_cast<double>(std::max<std::int64_t>(time_ms, 0));
}

std::int64_t NonNegative(std::int64_t value) { return std::max<std::int64_t>(value, 0); }

// What the span builder states on a span over `window` (its executors at the start and each change
// listed), as facts: the same bound on listed changes, so that the figures match the page's.
void AddExecutorFacts(const ApplicationModel& model, TimeWindow window, std::vector<ExecutorFact>& facts) {
  if (model.executors().empty()) return;  // a log without executor events says nothing
  const listener::correlate::ExecutorTimeline timeline = listener::correlate::ExecutorsDuring(model, window);
  const int at_start = cost::ClampedExecutorCount(timeline.active_at_start);
  const std::int64_t cores_at_start = NonNegative(timeline.cores_at_start);
  facts.push_back({Ms(window.start_ms), false, at_start, at_start, cores_at_start, cores_at_start});
  for (const listener::correlate::ExecutorChange& change : timeline.changes) {
    const std::int64_t before = change.added ? change.active_after - 1 : change.active_after + 1;
    const std::int64_t cores_before =
        change.added ? change.cores_after - change.cores : change.cores_after + change.cores;
    facts.push_back({Ms(change.time_ms), true, cost::ClampedExecutorCount(change.active_after),
                     cost::ClampedExecutorCount(before), NonNegative(change.cores_after),
                     NonNegative(cores_before)});
  }
}

// The executors' and the driver's resources, as the span builder states them (heap + overhead each).
void AddResources(const ApplicationModel& model, CostInputs& inputs) {
  const std::optional<listener::correlate::ResourceSettings> settings =
      listener::correlate::ResourceSettingsOf(model);
  if (!settings) return;
  inputs.executor_memory_bytes =
      NonNegative(settings->executor_memory_bytes) + NonNegative(settings->executor_memory_overhead_bytes);
  if (listener::correlate::DriverIsExecutor(model)) return;
  inputs.driver_cores = NonNegative(settings->driver_cores);
  inputs.driver_memory_bytes =
      NonNegative(settings->driver_memory_bytes) + NonNegative(settings->driver_memory_overhead_bytes);
}

// The stage attempts the trace shows under a job (a stage span each): those that started.
void AddStagesOfJob(const ApplicationModel& model, std::int32_t job_id,
                    std::vector<const StageAttemptRecord*>& out) {
  for (const StageAttemptRecord* stage : model.StagesOfJob(job_id)) {
    if (stage->StartMs()) out.push_back(stage);
  }
}

std::vector<const StageAttemptRecord*> StagesOfOperation(const ApplicationModel& model,
                                                         std::string_view operation_id) {
  std::vector<const StageAttemptRecord*> stages;
  for (std::int32_t job_id : model.JobsOfOperation(operation_id)) AddStagesOfJob(model, job_id, stages);
  return stages;
}

double UsedCoreMs(const std::vector<const StageAttemptRecord*>& stages) {
  double used = 0;
  for (const StageAttemptRecord* stage : stages)
    used += static_cast<double>(NonNegative(stage->tasks.executor_run_time_ms));
  return used;
}

// A stage attempt's run time inside [start_ms, end_ms] (its span ends at `now_ms` while it runs).
double RunTimeWithin(const StageAttemptRecord& stage, listener::events::EpochMillis now_ms, double start_ms,
                     double end_ms) {
  return cost::RunTimeWithin(static_cast<double>(NonNegative(stage.tasks.executor_run_time_ms)),
                             Ms(*stage.StartMs()), Ms(stage.completion_ms.value_or(now_ms)), start_ms,
                             end_ms);
}

}  // namespace

std::optional<CostInputs> ApplicationCostInputs(const ApplicationModel& model) {
  const std::optional<listener::correlate::PhaseBreakdown> phases =
      listener::correlate::ApplicationPhases(model);
  const listener::correlate::ApplicationRecord& app = model.application();
  if (!phases || !app.start_ms) return std::nullopt;
  const listener::events::EpochMillis now_ms = listener::correlate::SpanNowMs(model);
  const double start_ms = Ms(phases->window.start_ms);
  const double end_ms = std::max(start_ms, Ms(phases->window.end_ms));

  // The application span's facts and each operation's lifecycle span's.
  std::vector<ExecutorFact> facts;
  AddExecutorFacts(model, {*app.start_ms, std::max(*app.start_ms, now_ms)}, facts);
  std::vector<const StageAttemptRecord*> stages;
  for (const auto& [id, operation] : model.operations()) {
    if (const std::optional<TimeWindow> window = listener::correlate::LifecycleWindow(operation, now_ms))
      AddExecutorFacts(model, *window, facts);
    for (const StageAttemptRecord* stage : StagesOfOperation(model, id)) stages.push_back(stage);
  }
  // The application's own jobs and the stages of no job, as its trace shows them.
  for (const auto& [job_id, job] : model.jobs()) {
    if (!model.OperationOfJob(job)) AddStagesOfJob(model, job_id, stages);
  }
  for (const auto& [key, stage] : model.stages()) {
    if (!model.JobOfStageAttempt(stage) && stage.StartMs()) stages.push_back(&stage);
  }

  CostInputs inputs;
  inputs.executors = cost::ExecutorSeriesOfFacts(std::move(facts), start_ms, end_ms);
  AddResources(model, inputs);
  inputs.used_core_ms = UsedCoreMs(stages);
  // The whole application is charged, whoever ran in it.
  inputs.windows = {CostWindow{start_ms, end_ms, 1.0}};
  return inputs;
}

std::optional<CostInputs> OperationCostInputs(const ApplicationModel& model, std::string_view operation_id) {
  const ConnectOperationRecord* operation = model.FindOperation(operation_id);
  if (operation == nullptr) return std::nullopt;
  const std::optional<listener::correlate::PhaseBreakdown> phases =
      listener::correlate::OperationPhases(model, *operation);
  if (!phases) return std::nullopt;
  const listener::events::EpochMillis now_ms = listener::correlate::SpanNowMs(model);
  const double start_ms = Ms(phases->window.start_ms);
  const double end_ms = std::max(start_ms, Ms(phases->window.end_ms));
  const std::vector<const StageAttemptRecord*> stages = StagesOfOperation(model, operation_id);

  CostInputs inputs;
  std::vector<ExecutorFact> facts;
  const std::optional<TimeWindow> lifecycle = listener::correlate::LifecycleWindow(*operation, now_ms);
  if (lifecycle) AddExecutorFacts(model, *lifecycle, facts);
  inputs.executors = cost::ExecutorSeriesOfFacts(std::move(facts), start_ms, end_ms);
  // The lifecycle span carries the resources; an operation without one has none (nor a cost).
  if (lifecycle) AddResources(model, inputs);
  inputs.used_core_ms = UsedCoreMs(stages);

  // On a shared server: the operation's window, charged at its tasks' share of the task time in it.
  if (lifecycle) {
    const listener::correlate::ExecutorSharing sharing =
        listener::correlate::SharingDuring(model, operation_id, *lifecycle, now_ms);
    const double window_start = std::max(start_ms, Ms(lifecycle->start_ms));
    const double window_end = std::min(end_ms, Ms(lifecycle->end_ms));
    if ((sharing.others_run_time_ms > 0 || sharing.other_operations > 0) && window_end >= window_start) {
      double own_ms = 0;
      for (const StageAttemptRecord* stage : stages)
        own_ms += RunTimeWithin(*stage, now_ms, window_start, window_end);
      const double share =
          cost::SharedWindowShare(own_ms, static_cast<double>(NonNegative(sharing.others_run_time_ms)),
                                  NonNegative(sharing.other_operations));
      inputs.windows = {CostWindow{window_start, window_end, share}};
      inputs.shared = true;
      inputs.other_operations = NonNegative(sharing.other_operations);
    }
  }
  if (!inputs.shared) inputs.windows = {CostWindow{start_ms, end_ms, 1.0}};
  return inputs;
}

}  // namespace sparktrace::diagnose
