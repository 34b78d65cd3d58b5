#include "listener/correlate/span_builder.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "listener/correlate/executor_sharing.h"
#include "listener/correlate/executor_timeline.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/resource_settings.h"
#include "listener/correlate/span_ids.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::listener::correlate {
namespace {

using tracing::Span;
using tracing::SpanEvent;
using tracing::SpanId;
using tracing::TraceId;

// What every span of one build shares.
struct BuildContext {
  const ApplicationModel& model;
  std::string application_key;
  TraceId trace{};
  events::EpochMillis now_ms = 0;  // the end of anything still running
  // ApplicationEnd seen, or SpanBuildOptions::application_over: nothing stays open.
  bool application_over = false;
};

// A span whose end event has not come: open (live) while the application runs, else ended at the
// last event time and marked incomplete.
void MarkUnended(const BuildContext& context, Span& span, BuiltSpans& built) {
  if (context.application_over) {
    span.attributes.push_back({std::string(kIncompleteAttribute), true});
  } else {
    built.open.push_back(span.span_id);
  }
}

Span NewSpan(const BuildContext& context, std::string_view name, const SpanId& parent, std::string_view what,
             events::EpochMillis start_ms, events::EpochMillis end_ms) {
  Span span;
  span.trace_id = context.trace;
  span.span_id = DerivedSpanId(context.application_key, parent, what);
  span.parent_span_id = parent;
  span.name = std::string(name);
  span.kind = tracing::SpanKind::kInternal;
  span.start_time_unix_nano = MillisToUnixNanos(start_ms);
  span.end_time_unix_nano = MillisToUnixNanos(std::max(start_ms, end_ms));
  return span;
}

void AddInt(Span& span, std::string_view key, std::int64_t value) {
  span.attributes.push_back({std::string(key), value});
}
void AddString(Span& span, std::string_view key, std::string value) {
  span.attributes.push_back({std::string(key), std::move(value)});
}

void AddStageSpan(const BuildContext& context, const StageAttemptRecord& stage, const SpanId& parent,
                  BuiltSpans& built) {
  const std::optional<events::EpochMillis> start = stage.StartMs();
  if (!start) return;  // never submitted and no task ran: nothing to place in time
  const std::string what =
      "stage/" + std::to_string(stage.key.stage_id) + "/" + std::to_string(stage.key.attempt_id);
  Span span = NewSpan(context, tracing::kSparkStageSpanName, parent, what, *start,
                      stage.completion_ms.value_or(context.now_ms));
  const TaskStatistics& tasks = stage.tasks;
  AddInt(span, tracing::kSparkStageIdKey, stage.key.stage_id);
  AddInt(span, tracing::kSparkStageAttemptKey, stage.key.attempt_id);
  AddInt(span, tracing::kSparkStageTasksKey, stage.num_tasks);
  AddInt(span, tracing::kSparkStageTasksEndedKey, tasks.tasks_ended);
  AddInt(span, tracing::kSparkStageFailedTasksKey, tasks.failed_tasks);
  if (stage.parent_ids) {
    std::vector<std::string> parent_ids;
    parent_ids.reserve(stage.parent_ids->size());
    for (std::int32_t parent_id : *stage.parent_ids) parent_ids.push_back(std::to_string(parent_id));
    span.attributes.push_back({std::string(tracing::kSparkStageParentIdsKey), std::move(parent_ids)});
  }
  AddInt(span, tracing::kSparkStageKilledTasksKey, tasks.killed_tasks);
  if (const std::optional<std::int64_t> p50 = tasks.successful_durations.Quantile(0.5)) {
    AddInt(span, tracing::kSparkStageTaskDurationP50Key, *p50);
    AddInt(span, tracing::kSparkStageTaskDurationP95Key,
           tasks.successful_durations.Quantile(0.95).value_or(*p50));
    AddInt(span, tracing::kSparkStageTaskDurationMaxKey, tasks.successful_durations.max_ms());
    span.attributes.push_back(
        {std::string(tracing::kSparkStageTaskDurationExactKey), tasks.successful_durations.exact()});
    std::vector<std::string> profile;
    for (const std::int64_t ms : tasks.successful_durations.Profile(tracing::kStageDurationProfilePoints))
      profile.push_back(std::to_string(ms));
    span.attributes.push_back({std::string(tracing::kStageTaskDurationProfile), std::move(profile)});
  }
  AddInt(span, tracing::kStageExecutorRunTimeMs, tasks.executor_run_time_ms);
  if (tasks.cpu_time_known)
    AddInt(span, tracing::kSparkStageExecutorCpuTimeMsKey, tasks.executor_cpu_time_ns / 1'000'000);
  AddInt(span, tracing::kSparkStageJvmGcTimeMsKey, tasks.jvm_gc_time_ms);
  AddInt(span, tracing::kSparkStageMemorySpilledBytesKey, tasks.memory_bytes_spilled);
  AddInt(span, tracing::kSparkStageDiskSpilledBytesKey, tasks.disk_bytes_spilled);
  AddInt(span, tracing::kSparkStageShuffleReadBytesKey, tasks.shuffle_read_bytes);
  AddInt(span, tracing::kSparkStageShuffleFetchWaitMsKey, tasks.shuffle_fetch_wait_ms);
  AddInt(span, tracing::kSparkStageShuffleWriteBytesKey, tasks.shuffle_write_bytes);
  AddInt(span, tracing::kSparkStageInputBytesKey, tasks.input_bytes);
  AddInt(span, tracing::kSparkStageInputRecordsKey, tasks.input_records);
  AddInt(span, tracing::kSparkStageOutputBytesKey, tasks.output_bytes);
  AddInt(span, tracing::kSparkStageOutputRecordsKey, tasks.output_records);
  if (tasks.max_peak_execution_memory_bytes) {
    AddInt(span, tracing::kSparkStagePeakExecutionMemoryBytesKey, *tasks.max_peak_execution_memory_bytes);
  }
  if (stage.failure_reason) {
    span.status_code = tracing::StatusCode::kError;
    span.status_message = *stage.failure_reason;
  }
  if (!stage.completion_ms) MarkUnended(context, span, built);
  built.spans.push_back(std::move(span));
}

void AddJobSpans(const BuildContext& context, const JobRecord& job, const SpanId& parent, BuiltSpans& built) {
  const std::vector<const StageAttemptRecord*> stages = context.model.StagesOfJob(job.job_id);
  std::optional<events::EpochMillis> start = job.submission_ms;
  for (const StageAttemptRecord* stage : stages) {
    if (const std::optional<events::EpochMillis> stage_start = stage->StartMs(); stage_start && !start)
      start = stage_start;
  }
  if (!start) return;  // a JobEnd alone, without a time: nothing to place
  const events::EpochMillis end = job.completion_ms.value_or(context.now_ms);
  Span span =
      NewSpan(context, tracing::kSparkJobSpanName, parent, "job/" + std::to_string(job.job_id), *start, end);
  AddInt(span, tracing::kSparkJobIdKey, job.job_id);
  AddString(span, tracing::kSparkJobStatusKey,
            std::string(JobStatusName(job.StatusWhenOver(context.application_over))));
  std::vector<std::string> stage_ids;
  stage_ids.reserve(job.stage_ids.size());
  for (std::int32_t stage_id : job.stage_ids) stage_ids.push_back(std::to_string(stage_id));
  span.attributes.push_back({std::string(tracing::kSparkJobStageIdsKey), std::move(stage_ids)});
  if (job.sql_execution_id) AddInt(span, tracing::kSparkSqlExecutionIdKey, *job.sql_execution_id);
  if (std::optional<std::string> operation = context.model.OperationOfJob(job)) {
    AddString(span, tracing::kSparkConnectOperationIdKey, *operation);
  }
  if (job.status == JobStatus::kFailed) {
    span.status_code = tracing::StatusCode::kError;
    span.status_message = job.failure_message;
  }
  const SpanId job_span_id = span.span_id;
  if (!job.completion_ms) MarkUnended(context, span, built);
  built.spans.push_back(std::move(span));
  for (const StageAttemptRecord* stage : stages) AddStageSpan(context, *stage, job_span_id, built);
}

// `window_open`: the operation or application the phases are of has not ended, so the intervals
// may still change; `window_incomplete`: it never got its end event before the application ended.
void AddPhaseSpans(const BuildContext& context, const PhaseBreakdown& phases, const SpanId& parent,
                   const SpanBuildOptions& options, bool window_open, bool window_incomplete,
                   BuiltSpans& built) {
  const std::int64_t window_ms = phases.window.end_ms - phases.window.start_ms;
  for (std::size_t index = 0; index < phases.intervals.size(); ++index) {
    if (index >= options.max_phase_spans) {
      built.dropped_phase_intervals += static_cast<std::int64_t>(phases.intervals.size() - index);
      break;
    }
    const PhaseInterval& interval = phases.intervals[index];
    const std::string name(PhaseName(interval.phase));
    // Keyed by position, not phase: a late event that changes the phase of the n-th interval
    // replaces that span rather than leaving a stale one next to it.
    Span span = NewSpan(context, std::string(tracing::kSparkPhasePrefix) + name, parent,
                        "phase/" + std::to_string(index), interval.start_ms, interval.end_ms);
    AddString(span, tracing::kSparkPhaseNameKey, name);
    AddInt(span, tracing::kSparkPhaseDurationMsKey, interval.end_ms - interval.start_ms);
    AddInt(span, tracing::kSparkPhaseTotalMsKey, phases.TotalMs(interval.phase));
    AddInt(span, tracing::kSparkPhaseWindowMsKey, window_ms);
    if (window_open) built.open.push_back(span.span_id);
    if (window_incomplete) span.attributes.push_back({std::string(kIncompleteAttribute), true});
    built.spans.push_back(std::move(span));
  }
}

// The executor count over the span's time, for the trace view's executor lane: the count at its start
// and one event per executor added or removed while it ran.
void AddExecutorFacts(const BuildContext& context, Span& span) {
  const TimeWindow window{static_cast<events::EpochMillis>(span.start_time_unix_nano / 1'000'000),
                          static_cast<events::EpochMillis>(span.end_time_unix_nano / 1'000'000)};
  if (context.model.executors().empty()) return;  // a log without executor events says nothing
  const ExecutorTimeline timeline = ExecutorsDuring(context.model, window);
  AddInt(span, tracing::kExecutorsActiveAtStart, timeline.active_at_start);
  AddInt(span, tracing::kExecutorCoresAtStart, timeline.cores_at_start);
  if (timeline.dropped_changes > 0)
    AddInt(span, tracing::kExecutorsChangesNotListed, timeline.dropped_changes);
  for (const ExecutorChange& change : timeline.changes) {
    span.events.push_back(
        SpanEvent{std::string(change.added ? tracing::kExecutorAddedEvent : tracing::kExecutorRemovedEvent),
                  MillisToUnixNanos(change.time_ms),
                  {{std::string(tracing::kExecutorIdKey), change.executor_id},
                   {std::string(tracing::kExecutorCores), std::int64_t{change.cores}},
                   {std::string(tracing::kExecutorsActive), change.active_after},
                   {std::string(tracing::kExecutorCoresActive), change.cores_after}}});
  }
}

// What each executor and the driver are given, for the trace view's cost model; nothing when the
// log holds no configuration. In local mode the driver is the executor: its facts are those.
void AddResourceFacts(const BuildContext& context, Span& span) {
  const std::optional<ResourceSettings> settings = ResourceSettingsOf(context.model);
  if (!settings) return;
  AddInt(span, tracing::kExecutorMemoryBytes, settings->executor_memory_bytes);
  AddInt(span, tracing::kExecutorMemoryOverheadBytes, settings->executor_memory_overhead_bytes);
  if (DriverIsExecutor(context.model)) return;
  AddInt(span, tracing::kDriverCores, settings->driver_cores);
  AddInt(span, tracing::kDriverMemoryBytes, settings->driver_memory_bytes);
  AddInt(span, tracing::kDriverMemoryOverheadBytes, settings->driver_memory_overhead_bytes);
}

void AddSqlExecutionSpans(const BuildContext& context, std::optional<std::string_view> operation_id,
                          const SpanId& parent, const SpanBuildOptions& options, BuiltSpans& built) {
  const SqlSpanPlace place{context.trace, parent, context.application_key, context.now_ms};
  for (std::int64_t execution_id : SqlExecutionsOfOperation(context.model, operation_id)) {
    std::optional<SqlExecutionSpan> execution =
        BuildSqlExecutionSpan(context.model, execution_id, place, options.sql);
    if (!execution) continue;
    if (execution->plan_reduced) ++built.sql_plans_reduced;
    if (!execution->ended) MarkUnended(context, execution->span, built);
    built.spans.push_back(std::move(execution->span));
  }
}

// An operation's lifecycle events, each with its time when the log has it: the lifecycle span's
// events, and the times its window spans.
using LifecycleTimes = std::array<std::pair<std::string_view, std::optional<events::EpochMillis>>, 7>;

LifecycleTimes LifecycleTimesOf(const ConnectOperationRecord& operation) {
  return {{{"started", operation.started_ms},
           {"analyzed", operation.analyzed_ms},
           {"ready", operation.ready_ms},
           {"finished", operation.finished_ms},
           {"failed", operation.failed_ms},
           {"canceled", operation.canceled_ms},
           {"closed", operation.closed_ms}}};
}

bool OperationEnded(const ConnectOperationRecord& operation) {
  return operation.closed_ms || operation.finished_ms || operation.failed_ms || operation.canceled_ms;
}

// Returns whether the operation has not ended by its lifecycle: no Closed yet, or a job of it still
// running (its findings, attached to this span, wait for them); once the application is over,
// only an operation without a terminal event. Without lifecycle events (an operation known from
// job tags only) there is no span and the answer is false.
bool AddLifecycleSpan(const BuildContext& context, const ConnectOperationRecord& operation, bool jobs_unended,
                      const SpanId& parent, BuiltSpans& built) {
  const std::optional<TimeWindow> window = LifecycleWindow(operation, context.now_ms);
  if (!window) return false;  // only known from job tags: no lifecycle to show
  const bool ended = OperationEnded(operation);
  Span span = NewSpan(context, tracing::kSparkConnectLifecycleSpanName, parent,
                      "operation/" + operation.operation_id, window->start_ms, window->end_ms);
  AddString(span, tracing::kSparkConnectOperationIdKey, operation.operation_id);
  AddString(span, tracing::kSparkConnectSessionIdKey, operation.session_id);
  AddString(span, tracing::kSparkConnectUserIdKey, operation.user_id);
  AddString(span, tracing::kSparkConnectJobTagKey, operation.job_tag);
  AddString(span, tracing::kSparkAppIdKey, context.model.application().app_id);
  if (operation.produced_row_count)
    AddInt(span, tracing::kSparkConnectProducedRowCountKey, *operation.produced_row_count);
  for (const auto& [name, time] : LifecycleTimesOf(operation)) {
    if (time) span.events.push_back(SpanEvent{std::string(name), MillisToUnixNanos(*time), {}});
  }
  if (operation.failed_ms) {
    span.status_code = tracing::StatusCode::kError;
    span.status_message = operation.error_message;
  }
  AddExecutorFacts(context, span);
  AddResourceFacts(context, span);
  // Who else ran tasks meanwhile: on a shared Spark Connect server the executors are split by task time.
  const ExecutorSharing sharing =
      SharingDuring(context.model, operation.operation_id,
                    {static_cast<events::EpochMillis>(span.start_time_unix_nano / 1'000'000),
                     static_cast<events::EpochMillis>(span.end_time_unix_nano / 1'000'000)},
                    context.now_ms);
  AddInt(span, tracing::kOthersRunTimeMs, sharing.others_run_time_ms);
  AddInt(span, tracing::kOtherOperations, sharing.other_operations);
  // Open until Closed, which follows the terminal event once the client released the operation
  // (or the server dropped it): its end moves from the terminal event to Closed. An operation
  // that ended but was never closed when the application ended is complete nonetheless.
  const bool unended = (!operation.closed_ms || jobs_unended) && !(context.application_over && ended);
  if (unended) MarkUnended(context, span, built);
  built.spans.push_back(std::move(span));
  return unended;
}

// Whether a job, or a stage of it that started, still lacks its end event.
bool AnyJobUnended(const ApplicationModel& model, const std::vector<std::int32_t>& job_ids) {
  for (std::int32_t job_id : job_ids) {
    if (!model.jobs().at(job_id).completion_ms) return true;
    for (const StageAttemptRecord* stage : model.StagesOfJob(job_id)) {
      if (stage->StartMs() && !stage->completion_ms) return true;
    }
  }
  return false;
}

}  // namespace

bool BuiltSpans::IsOpen(const tracing::SpanId& id) const {
  return std::find(open.begin(), open.end(), id) != open.end();
}

events::EpochMillis SpanNowMs(const ApplicationModel& model) {
  const ApplicationRecord& app = model.application();
  if (app.end_ms) return *app.end_ms;
  return app.last_event_ms.value_or(app.start_ms.value_or(0));
}

std::optional<TimeWindow> LifecycleWindow(const ConnectOperationRecord& operation,
                                          events::EpochMillis now_ms) {
  std::optional<events::EpochMillis> start;
  std::optional<events::EpochMillis> end;
  for (const auto& [name, time] : LifecycleTimesOf(operation)) {
    if (!time) continue;
    start = start ? std::min(*start, *time) : *time;
    end = end ? std::max(*end, *time) : *time;
  }
  if (!start) return std::nullopt;
  // The span's end is never before its start (NewSpan).
  return TimeWindow{*start, std::max(*start, OperationEnded(operation) ? *end : std::max(*end, now_ms))};
}

std::uint64_t MillisToUnixNanos(events::EpochMillis time_ms) {
  return time_ms <= 0 ? 0 : static_cast<std::uint64_t>(time_ms) * 1'000'000ULL;
}

BuiltSpans BuildOperationSpans(const ApplicationModel& model, std::string_view operation_id,
                               const OperationSpanRef& operation_span, const SpanBuildOptions& options) {
  BuiltSpans built;
  const ConnectOperationRecord* operation = model.FindOperation(operation_id);
  if (operation == nullptr) return built;
  const ApplicationRecord& app = model.application();
  const BuildContext context{model, ApplicationKey(app.app_id, app.attempt_id), operation_span.trace,
                             SpanNowMs(model), app.end_ms.has_value() || options.application_over};
  const std::vector<std::int32_t> job_ids = model.JobsOfOperation(operation_id);
  const bool jobs_unended = AnyJobUnended(model, job_ids);
  const bool unended =
      AddLifecycleSpan(context, *operation, jobs_unended, operation_span.parent, built) || jobs_unended;
  AddSqlExecutionSpans(context, operation_id, operation_span.parent, options, built);
  for (std::int32_t job_id : job_ids)
    AddJobSpans(context, model.jobs().at(job_id), operation_span.parent, built);
  if (std::optional<PhaseBreakdown> phases = OperationPhases(model, *operation, options.write_command)) {
    AddPhaseSpans(context, *phases, operation_span.parent, options, unended && !context.application_over,
                  unended && context.application_over, built);
  }
  return built;
}

BuiltSpans BuildApplicationSpans(const ApplicationModel& model, const SpanBuildOptions& options) {
  BuiltSpans built;
  const ApplicationRecord& app = model.application();
  if (!app.start_ms) return built;
  const std::string application_key = ApplicationKey(app.app_id, app.attempt_id);
  const BuildContext context{model, application_key, ApplicationTraceId(application_key), SpanNowMs(model),
                             app.end_ms.has_value() || options.application_over};
  const SpanId no_parent{};
  Span root = NewSpan(context, tracing::kSparkApplicationSpanName, no_parent, "application", *app.start_ms,
                      context.now_ms);
  AddString(root, tracing::kSparkAppIdKey, app.app_id);
  if (app.attempt_id) AddString(root, tracing::kSparkAppAttemptIdKey, *app.attempt_id);
  AddString(root, tracing::kSparkAppNameKey, app.app_name);
  if (!app.spark_version.empty()) AddString(root, tracing::kSparkVersionKey, app.spark_version);
  AddInt(root, tracing::kSparkAppExecutorsAddedKey, static_cast<std::int64_t>(model.executors().size()));
  AddInt(root, tracing::kSparkAppConnectOperationsKey, static_cast<std::int64_t>(model.operations().size()));
  // Over without an ApplicationEnd: the log stopped (completed or abandoned) before the driver said.
  if (!app.end_ms)
    AddString(root, tracing::kSparkAppStatusKey, context.application_over ? "unknown" : "running");
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  if (phases) {
    for (std::size_t phase = 0; phase < kPhaseCount; ++phase) {
      AddInt(
          root,
          std::string(tracing::kSparkPhasePrefix) + std::string(PhaseName(static_cast<Phase>(phase))) + ".ms",
          phases->total_ms[phase]);
    }
  }
  AddExecutorFacts(context, root);
  AddResourceFacts(context, root);
  const SpanId root_id = root.span_id;
  if (!app.end_ms) MarkUnended(context, root, built);
  built.spans.push_back(std::move(root));

  AddSqlExecutionSpans(context, std::nullopt, root_id, options, built);
  for (const auto& [job_id, job] : model.jobs()) {
    if (model.OperationOfJob(job)) continue;  // in its operation's trace
    AddJobSpans(context, job, root_id, built);
  }
  for (const auto& [key, stage] : model.stages()) {
    if (!model.JobOfStageAttempt(stage)) AddStageSpan(context, stage, root_id, built);
  }
  if (phases) {
    AddPhaseSpans(context, *phases, root_id, options, !context.application_over,
                  context.application_over && !app.end_ms, built);
  }
  return built;
}

}  // namespace sparktrace::listener::correlate
