#pragma once
// Airflow's own task on the attempt page (docs/trace-view-api.md, "airflow_task"): the attempt's
// reported "airflow.task" span (tracing/airflow_task_report.h) with its state, operator and times,
// and how much of the task was spent outside Spark, split into before the first Spark call,
// between calls and after the last.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "traceview/breakdown.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// Milliseconds of the task's own time with nothing of Spark in flight (the breakdown's "client"
// phase), inside Airflow's start and end. A task that never called Spark has all of it before
// the first call.
struct OutsideSpark {
  double before_first_call_ms = 0;
  double between_calls_ms = 0;
  double after_last_call_ms = 0;

  double ms() const { return before_first_call_ms + between_calls_ms + after_last_call_ms; }
};

struct AirflowTaskView {
  std::string span_id;
  std::string state;  // Airflow's, as last reported
  std::string operator_class;
  std::string hostname;
  double start_ms = 0;
  double end_ms = 0;
  bool running = false;  // the last report said "running": end_ms is when it was made
  OutsideSpark outside_spark;
  // The task's time with Spark in flight: wall_ms() - outside_spark.ms().
  double spark_ms = 0;

  double wall_ms() const { return end_ms - start_ms; }
};

// The attempt's reported task span: a root (no parent among `spans`) named "airflow.task" with an
// airflow.task.state attribute; the earliest one if several. nullopt for attempts without one
// (a task without the plugin, traces stored before reports existed). `parent` is
// ParentIndices(spans); `breakdown` is ComputeBreakdown(spans).
std::optional<AirflowTaskView> FindAirflowTask(std::span<const tracing::Span> spans,
                                               const std::vector<std::optional<std::size_t>>& parent,
                                               const Breakdown& breakdown);

// The "client" intervals of `breakdown` clipped to [start_ms, end_ms], split by where they lie
// against the first and last instants of Spark work.
OutsideSpark ComputeOutsideSpark(const Breakdown& breakdown, double start_ms, double end_ms);

}  // namespace sparktrace::traceview
