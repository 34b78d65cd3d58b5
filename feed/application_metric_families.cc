#include "feed/application_metric_families.h"

#include <array>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "common/metric_family_builders.h"

namespace sparktrace::feed {

using listener::correlate::kPhaseCount;
using listener::correlate::Phase;
using listener::correlate::PhaseName;

namespace {

using metric_builders::Family;
using metric_builders::Labels;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Figures = std::vector<const ApplicationFigures*>;

void AddGauge(MetricFamily& family, Labels labels, double value) {
  family.metric.push_back(metric_builders::Gauge(std::move(labels), value));
}

void AddCounter(MetricFamily& family, Labels labels, std::uint64_t value) {
  family.metric.push_back(metric_builders::Counter(std::move(labels), value));
}

double Seconds(std::int64_t ms) { return static_cast<double>(ms) / 1000.0; }

// One gauge per application, absent where `value` gives nullopt.
MetricFamily GaugePerApplication(
    const Figures& applications, std::string name, std::string help,
    const std::function<std::optional<double>(const ApplicationFigures&)>& value) {
  MetricFamily family = Family(std::move(name), std::move(help), MetricType::Gauge);
  for (const ApplicationFigures* figures : applications) {
    if (const std::optional<double> v = value(*figures)) AddGauge(family, {{"app", figures->app_name}}, *v);
  }
  return family;
}

void AddPhaseFamilies(const Figures& applications, std::vector<MetricFamily>& families) {
  struct PhaseGauge {
    Phase phase;
    const char* name;
    const char* help;
  };
  static constexpr std::array<PhaseGauge, kPhaseCount> kPhaseGauges = {{
      {Phase::kResourceWait, "spark_resource_wait_seconds",
       "Time the latest application of this name waited for executors (phase resource_wait)"},
      {Phase::kCompute, "spark_phase_compute_seconds", "Time with stages running (phase compute)"},
      {Phase::kIoWrite, "spark_phase_io_write_seconds", "Time with a stage writing output (phase io_write)"},
      {Phase::kIdle, "spark_phase_idle_seconds", "Time with no stage running (phase idle)"},
  }};
  MetricFamily ratio =
      Family("spark_phase_breakdown_ratio", "Share of the application's window in each phase (they sum to 1)",
             MetricType::Gauge);
  MetricFamily active = Family("spark_phase_active",
                               "1 for the phase the application is in at its latest event, 0 for the others "
                               "(all 0 once it is over)",
                               MetricType::Gauge);
  for (const PhaseGauge& gauge : kPhaseGauges) {
    MetricFamily family = Family(gauge.name, gauge.help, MetricType::Gauge);
    const std::size_t index = static_cast<std::size_t>(gauge.phase);
    const std::string phase_name(PhaseName(gauge.phase));
    for (const ApplicationFigures* figures : applications) {
      AddGauge(family, {{"app", figures->app_name}}, Seconds(figures->total_ms[index]));
      const double share = figures->window_ms > 0 ? static_cast<double>(figures->total_ms[index]) /
                                                        static_cast<double>(figures->window_ms)
                                                  : 0.0;
      AddGauge(ratio, {{"app", figures->app_name}, {"phase", phase_name}}, share);
      AddGauge(active, {{"app", figures->app_name}, {"phase", phase_name}},
               figures->active_phase == gauge.phase ? 1.0 : 0.0);
    }
    families.push_back(std::move(family));
  }
  families.push_back(std::move(ratio));
  families.push_back(std::move(active));
}

void AddExecutorFamilies(const Figures& applications, std::vector<MetricFamily>& families) {
  families.push_back(GaugePerApplication(applications, "spark_application_running",
                                         "1 while the application runs, 0 once it is over",
                                         [](const ApplicationFigures& f) { return f.running ? 1.0 : 0.0; }));
  families.push_back(GaugePerApplication(
      applications, "spark_time_to_first_executor_seconds", "Application start to its first ExecutorAdded",
      [](const ApplicationFigures& f) { return f.time_to_first_executor_seconds; }));
  families.push_back(GaugePerApplication(
      applications, "spark_executors", "Executors alive at the application's latest event",
      [](const ApplicationFigures& f) { return static_cast<double>(f.executors); }));
  families.push_back(GaugePerApplication(
      applications, "spark_executor_cores", "Cores of the executors alive at the latest event",
      [](const ApplicationFigures& f) { return static_cast<double>(f.executor_cores); }));
  families.push_back(GaugePerApplication(
      applications, "spark_executor_utilization_ratio",
      "Task time on the executors over their allocated core time (cores x lifetime within the window)",
      [](const ApplicationFigures& f) { return f.executor_utilization_ratio; }));
  families.push_back(GaugePerApplication(
      applications, "spark_executor_peak_jvm_heap_bytes",
      "Largest peak JVM heap use of an executor while a task ran (Task Executor Metrics JVMHeapMemory)",
      [](const ApplicationFigures& f) -> std::optional<double> {
        if (!f.executor_peak_jvm_heap_bytes) return std::nullopt;
        return static_cast<double>(*f.executor_peak_jvm_heap_bytes);
      }));
  families.push_back(GaugePerApplication(applications, "spark_executor_memory_limit_bytes",
                                         "The executors' heap size, spark.executor.memory",
                                         [](const ApplicationFigures& f) -> std::optional<double> {
                                           if (!f.executor_memory_limit_bytes) return std::nullopt;
                                           return static_cast<double>(*f.executor_memory_limit_bytes);
                                         }));
}

void AddTaskFamilies(const Figures& applications, std::vector<MetricFamily>& families) {
  families.push_back(GaugePerApplication(applications, "spark_task_cpu_ratio",
                                         "Task CPU time over task run time (compute efficiency)",
                                         [](const ApplicationFigures& f) { return f.task_cpu_ratio; }));
  families.push_back(
      GaugePerApplication(applications, "spark_output_bytes", "Bytes written by tasks (Output Metrics)",
                          [](const ApplicationFigures& f) { return static_cast<double>(f.output_bytes); }));
  families.push_back(GaugePerApplication(
      applications, "spark_write_throughput_bytes_per_second", "Output bytes over the io_write phase's time",
      [](const ApplicationFigures& f) { return f.write_throughput_bytes_per_second; }));
  MetricFamily p95 = Family("spark_task_duration_p95_seconds",
                            "p95 duration of successful tasks that wrote no output (compute) or wrote output "
                            "(write)",
                            MetricType::Gauge);
  for (const ApplicationFigures* figures : applications) {
    if (figures->compute_task_p95_seconds) {
      AddGauge(p95, {{"app", figures->app_name}, {"stage_kind", "compute"}},
               *figures->compute_task_p95_seconds);
    }
    if (figures->write_task_p95_seconds) {
      AddGauge(p95, {{"app", figures->app_name}, {"stage_kind", "write"}}, *figures->write_task_p95_seconds);
    }
  }
  families.push_back(std::move(p95));
  families.push_back(GaugePerApplication(applications, "spark_gc_time_ratio",
                                         "Task JVM GC time over task run time",
                                         [](const ApplicationFigures& f) { return f.gc_time_ratio; }));
  families.push_back(
      GaugePerApplication(applications, "spark_serialization_time_ratio",
                          "Task deserialization and result serialization time over those plus run time",
                          [](const ApplicationFigures& f) { return f.serialization_time_ratio; }));
  families.push_back(GaugePerApplication(
      applications, "spark_shuffle_skew_ratio",
      "Largest max/median bytes read by one task (input + shuffle read) of a completed stage",
      [](const ApplicationFigures& f) { return f.shuffle_skew_ratio; }));
  families.push_back(GaugePerApplication(
      applications, "spark_memory_spilled_bytes", "Bytes tasks spilled from memory",
      [](const ApplicationFigures& f) { return static_cast<double>(f.memory_spilled_bytes); }));
  families.push_back(GaugePerApplication(
      applications, "spark_disk_spilled_bytes", "Bytes tasks spilled to disk",
      [](const ApplicationFigures& f) { return static_cast<double>(f.disk_spilled_bytes); }));
}

void AddCounterFamilies(const Figures& applications, std::vector<MetricFamily>& families) {
  MetricFamily jobs =
      Family("spark_jobs_total", "Ended jobs of the latest application of this name, by status",
             MetricType::Counter);
  MetricFamily stages =
      Family("spark_stages_total", "Completed stage attempts, by status", MetricType::Counter);
  MetricFamily tasks =
      Family("spark_tasks_failed_total", "Failed task attempts (not killed), by reason", MetricType::Counter);
  MetricFamily lost =
      Family("spark_executors_lost_total",
             "Executors removed other than by the driver (idle, dynamic allocation) or at the "
             "application's end, by reason",
             MetricType::Counter);
  for (const ApplicationFigures* figures : applications) {
    const std::string& app = figures->app_name;
    const ApplicationEventCounts& counts = figures->counts;
    AddCounter(jobs, {{"app", app}, {"status", "succeeded"}}, counts.jobs_succeeded);
    AddCounter(jobs, {{"app", app}, {"status", "failed"}}, counts.jobs_failed);
    AddCounter(stages, {{"app", app}, {"status", "completed"}}, counts.stages_completed);
    AddCounter(stages, {{"app", app}, {"status", "failed"}}, counts.stages_failed);
    AddCounter(tasks, {{"app", app}, {"reason", "out_of_memory"}}, counts.tasks_failed_out_of_memory);
    AddCounter(tasks, {{"app", app}, {"reason", "other"}}, counts.tasks_failed_other);
    AddCounter(lost, {{"app", app}, {"reason", "out_of_memory"}}, counts.executors_lost_out_of_memory);
    AddCounter(lost, {{"app", app}, {"reason", "other"}}, counts.executors_lost_other);
  }
  families.push_back(std::move(jobs));
  families.push_back(std::move(stages));
  families.push_back(std::move(tasks));
  families.push_back(std::move(lost));
}

MetricFamily TaskDurationHistogramFamily(const Figures& applications) {
  MetricFamily family =
      Family("spark_task_duration_seconds", "Durations of successful tasks", MetricType::Histogram);
  for (const ApplicationFigures* figures : applications) {
    const TaskDurationHistogram& durations = figures->task_durations;
    ClientMetric metric;
    metric.label = {{"app", figures->app_name}};
    metric.histogram.sample_count = durations.count;
    metric.histogram.sample_sum = Seconds(durations.sum_ms);
    for (std::size_t bucket = 0; bucket < kTaskDurationBucketsMs.size(); ++bucket) {
      metric.histogram.bucket.push_back(
          {durations.cumulative_counts[bucket], Seconds(kTaskDurationBucketsMs[bucket])});
    }
    metric.histogram.bucket.push_back({durations.count, std::numeric_limits<double>::infinity()});
    family.metric.push_back(std::move(metric));
  }
  return family;
}

// An info metric: the identity is in the labels, one series per application (its latest task
// replaces the previous one), so the label set stays bounded by the application names.
MetricFamily AirflowInfoFamily(const Figures& applications) {
  MetricFamily family = Family("spark_application_airflow_info",
                               "1, labelled with the Airflow task (dag_id, task_id) of the application's "
                               "latest traced Spark Connect operation that carried an Airflow identity",
                               MetricType::Gauge);
  for (const ApplicationFigures* figures : applications) {
    if (!figures->airflow_task) continue;
    AddGauge(family,
             {{"app", figures->app_name},
              {"dag_id", figures->airflow_task->dag_id},
              {"task_id", figures->airflow_task->task_id}},
             1.0);
  }
  return family;
}

}  // namespace

std::vector<MetricFamily> ApplicationMetricFamilies(
    const std::vector<const ApplicationFigures*>& applications) {
  std::vector<MetricFamily> families;
  AddPhaseFamilies(applications, families);
  AddExecutorFamilies(applications, families);
  AddTaskFamilies(applications, families);
  AddCounterFamilies(applications, families);
  families.push_back(TaskDurationHistogramFamily(applications));
  families.push_back(AirflowInfoFamily(applications));
  return families;
}

}  // namespace sparktrace::feed
