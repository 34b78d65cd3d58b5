#include "sim/eventlog/event_log_generator.h"

#include <utility>

#include "sim/eventlog/application_lines.h"
#include "sim/eventlog/operation_lines.h"
#include "sim/eventlog/operation_planner.h"

namespace sparktrace::sim::eventlog {
namespace {

// The driver asks for its first executors right after the SparkContext is up.
constexpr EpochMillis kFirstRequestAfterStartMs = 400;

}  // namespace

EventLogGenerator::EventLogGenerator(ApplicationIdentity app, Scenario scenario, TimeMapping time)
    : app_(std::move(app)), scenario_(std::move(scenario)), knobs_(KnobsFor(scenario_)), time_(time) {
  const EpochMillis request_ms = app_.start_ms + kFirstRequestAfterStartMs;
  for (int i = 0; i < knobs_.executors; ++i) {
    const EpochMillis added_ms =
        app_.start_ms + knobs_.first_executor_wait_ms + i * knobs_.executor_stagger_ms;
    initial_executors_.push_back(
        pool_.Add(knobs_.cores_per_executor, std::min(request_ms, added_ms), added_ms));
  }
}

std::vector<LogLine> EventLogGenerator::StartApplication() const {
  const EpochMillis at = time_.Time(app_.start_ms);
  return {
      LogLine{at, LogStartLine(app_), true},
      LogLine{at, ResourceProfileAddedLine(knobs_), true},
      LogLine{at, DriverBlockManagerAddedLine(app_), true},
      // Spark does not flush after the environment; ApplicationStart right after it does.
      LogLine{at, EnvironmentUpdateLine(app_, scenario_, knobs_), false},
      LogLine{at, ApplicationStartLine(app_), true},
  };
}

std::vector<LogLine> EventLogGenerator::InitialExecutors() const {
  std::vector<LogLine> lines;
  for (int executor : initial_executors_) {
    const EpochMillis at = time_.Time(pool_.at(executor).added_ms);
    for (std::string& text : ExecutorAddedLines(pool_.at(executor), time_)) {
      lines.push_back(LogLine{at, std::move(text), true});
    }
  }
  return lines;
}

OperationPlan EventLogGenerator::PlanOperation(const OperationSpec& spec, EpochMillis start_ms) {
  PlanInputs inputs;
  inputs.scenario = &scenario_;
  inputs.knobs = &knobs_;
  inputs.spark_version = app_.spark_version;
  inputs.ordinal = next_ordinal_++;
  inputs.new_session = sessions_started_.insert(spec.user_id + "\n" + spec.session_id).second;
  inputs.start_ms = start_ms;
  return eventlog::PlanOperation(spec, inputs, pool_);
}

void EventLogGenerator::AssignIds(OperationPlan& plan, const PlannedEvent& event) {
  switch (event.kind) {
    case PlannedEventKind::kSqlExecutionStart:
      if (plan.sql_execution_id < 0) plan.sql_execution_id = next_sql_execution_id_++;
      break;
    case PlannedEventKind::kJobStart: {
      JobPlan& job = plan.jobs.at(static_cast<std::size_t>(event.ref));
      if (job.global_job_id < 0) job.global_job_id = next_job_id_++;
      // Spark creates a job's missing stages at submission, parents first.
      for (int stage_index : job.stages) {
        StagePlan& stage = plan.stages.at(static_cast<std::size_t>(stage_index));
        if (stage.global_stage_id >= 0) continue;
        stage.global_stage_id = next_stage_id_++;
        next_rdd_id_ += 3;  // a scan, a map and the stage's last RDD
        stage.rdd_id = next_rdd_id_ - 1;
      }
      break;
    }
    case PlannedEventKind::kTaskStart: {
      TaskPlan& task = plan.tasks.at(static_cast<std::size_t>(event.ref));
      if (task.global_task_id < 0) task.global_task_id = next_task_id_++;
      break;
    }
    default:
      break;
  }
}

std::vector<LogLine> EventLogGenerator::Render(OperationPlan& plan, std::size_t index) {
  const PlannedEvent& event = plan.events.at(index);
  AssignIds(plan, event);
  std::vector<LogLine> lines;
  const EpochMillis at = time_.Time(event.time_ms);
  for (std::string& text : OperationEventLines(plan, event, pool_, app_, time_)) {
    lines.push_back(LogLine{at, std::move(text), FlushesAfter(event.kind)});
  }
  return lines;
}

std::vector<LogLine> EventLogGenerator::EndApplication(EpochMillis end_ms) const {
  const EpochMillis at = time_.Time(end_ms);
  return {LogLine{at, ApplicationEndLine(app_, at), true}};
}

}  // namespace sparktrace::sim::eventlog
