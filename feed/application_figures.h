#pragma once
// ApplicationFigures: one application's per-application metrics (feed_metrics.h) as a plain
// snapshot, computed on the feed thread after a poll and read at scrape time — never the live
// model. FiguresOf computes it from the model (executors, properties, the application's times:
// never forgotten), the phase totals and the event totals (both kept whatever the model forgets).
//
// "absent" figures are nullopt: no series until the figure exists (no executor yet, no task with a
// CPU time, no write phase, ...).
//
// Pure function; plain values.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "feed/application_event_totals.h"
#include "feed/application_phase_totals.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"

namespace sparktrace::feed {

// The Airflow task (dag id, task id) a Spark Connect operation came from, as the proxy read it from
// the call's x-airflow-* headers. Never the run id or try number: every run would add a label value.
struct AirflowTask {
  std::string dag_id;
  std::string task_id;
  bool operator==(const AirflowTask&) const = default;
};

struct ApplicationFigures {
  std::string app_name;  // the label; the app id when the application has no name
  bool running = false;  // no ApplicationEnd yet, its log neither completed nor abandoned

  // Phase totals over the application's window, and the phase at its latest event (nullopt once
  // it is over, or before its window has a length).
  std::int64_t window_ms = 0;
  std::array<std::int64_t, listener::correlate::kPhaseCount> total_ms{};  // indexed by Phase
  std::optional<listener::correlate::Phase> active_phase;

  // Executors.
  std::optional<double> time_to_first_executor_seconds;  // application start → first ExecutorAdded
  std::int64_t executors = 0;                            // alive at the latest event
  std::int64_t executor_cores = 0;                       // their cores
  // Σ task time on the listed executors / Σ cores × lifetime within the window.
  std::optional<double> executor_utilization_ratio;
  std::optional<std::int64_t> executor_peak_jvm_heap_bytes;
  std::optional<std::int64_t> executor_memory_limit_bytes;  // spark.executor.memory

  // Tasks.
  std::optional<double> task_cpu_ratio;            // Σ CPU time / Σ run time (tasks with a CPU time)
  std::optional<double> gc_time_ratio;             // Σ GC time / Σ run time
  std::optional<double> serialization_time_ratio;  // (deserialize + result ser.) / (run + both)
  std::optional<double> shuffle_skew_ratio;        // largest read skew of a completed stage attempt
  std::int64_t output_bytes = 0;
  std::optional<double> write_throughput_bytes_per_second;  // output bytes / io_write seconds
  std::optional<double> compute_task_p95_seconds;
  std::optional<double> write_task_p95_seconds;
  std::int64_t memory_spilled_bytes = 0;
  std::int64_t disk_spilled_bytes = 0;
  ApplicationEventCounts counts;
  TaskDurationHistogram task_durations;

  // The Airflow task of the application's latest traced operation that had one. Not in the driver's
  // events: the feed sets it from its operation lookups (FiguresOf leaves it nullopt).
  std::optional<AirflowTask> airflow_task;
};

ApplicationFigures FiguresOf(std::string app_name, const listener::correlate::ApplicationModel& model,
                             const PhaseTotals& phases, const ApplicationEventTotals& totals, bool over);

}  // namespace sparktrace::feed
