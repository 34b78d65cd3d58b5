#pragma once
// EventLogGenerator: the deterministic core of the event-log simulator. It plays one Spark
// application — a Spark Connect server — in virtual time: its start, its executors, and each
// operation it is given (planned by PlanOperation, shaped by the scenario), and renders the
// listener events as Spark's event logger writes them, one JSON line each.
//
// Two steps per operation, so that concurrent operations interleave as in a real log: Plan (times,
// tasks, metrics; virtual time) and Render (one planned event at a time, in log order). Spark's
// global ids — job, stage, task, RDD and SQL execution ids — are assigned as the events naming
// them first are rendered, so they increase in log order whatever the interleaving.
//
// Threads: not synchronised; the caller serialises all calls (LiveEventLog holds a mutex).

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sim/eventlog/application_identity.h"
#include "sim/eventlog/executor_pool.h"
#include "sim/eventlog/operation_plan.h"
#include "sim/eventlog/scenario.h"

namespace sparktrace::sim::eventlog {

struct LogLine {
  EpochMillis time_ms = 0;  // when the event happened, as written (after the TimeMapping)
  std::string text;         // one JSON object, no newline
  bool flush = true;        // Spark's event logger flushes after writing it
};

class EventLogGenerator {
 public:
  // `time` maps virtual times to written ones (identity offline). The first executors are
  // requested at once and arrive knobs().first_executor_wait_ms after app.start_ms.
  EventLogGenerator(ApplicationIdentity app, Scenario scenario, TimeMapping time = {});

  const ApplicationIdentity& app() const { return app_; }
  const Scenario& scenario() const { return scenario_; }
  const ScenarioKnobs& knobs() const { return knobs_; }
  const ExecutorPool& executors() const { return pool_; }
  const TimeMapping& time_mapping() const { return time_; }
  int operations_planned() const { return next_ordinal_; }

  // LogStart, ResourceProfileAdded, the driver's BlockManagerAdded, EnvironmentUpdate and
  // ApplicationStart, all dated app.start_ms.
  std::vector<LogLine> StartApplication() const;
  // ExecutorAdded (and BlockManagerAdded) of the first executors, dated when they arrive.
  std::vector<LogLine> InitialExecutors() const;

  // Plans the next operation (ordinal = operations planned before), starting at `start_ms`
  // (virtual). May add or remove executors (scenario effects).
  OperationPlan PlanOperation(const OperationSpec& spec, EpochMillis start_ms);

  // The lines of plan.events[index], assigning the global ids the event introduces. Render every
  // plan's events in their order, and all events in log (time) order.
  std::vector<LogLine> Render(OperationPlan& plan, std::size_t index);

  // SparkListenerApplicationEnd at `end_ms` (virtual).
  std::vector<LogLine> EndApplication(EpochMillis end_ms) const;

 private:
  void AssignIds(OperationPlan& plan, const PlannedEvent& event);

  const ApplicationIdentity app_;
  const Scenario scenario_;
  const ScenarioKnobs knobs_;
  const TimeMapping time_;
  ExecutorPool pool_;
  std::vector<int> initial_executors_;
  std::set<std::string> sessions_started_;
  int next_ordinal_ = 0;
  std::int64_t next_sql_execution_id_ = 0;
  int next_job_id_ = 0;
  int next_stage_id_ = 0;
  int next_rdd_id_ = 0;
  std::int64_t next_task_id_ = 0;
};

}  // namespace sparktrace::sim::eventlog
