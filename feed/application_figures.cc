#include "feed/application_figures.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "listener/correlate/spark_memory_size.h"

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::DurationSample;
using listener::correlate::ExecutorRecord;
using listener::correlate::Phase;
using listener::correlate::SparkMemoryBytes;
using listener::events::EpochMillis;

namespace {

std::optional<double> Ratio(std::int64_t numerator, std::int64_t denominator) {
  if (denominator <= 0) return std::nullopt;
  return static_cast<double>(numerator) / static_cast<double>(denominator);
}

std::optional<double> P95Seconds(const DurationSample& durations) {
  const std::optional<std::int64_t> p95 = durations.Quantile(0.95);
  if (!p95) return std::nullopt;
  return static_cast<double>(*p95) / 1000.0;
}

void SetExecutorFigures(const ApplicationModel& model, const PhaseTotals& phases,
                        ApplicationFigures& figures) {
  const std::vector<ExecutorRecord>& executors = model.executors();
  const std::optional<EpochMillis> start = model.application().start_ms;
  if (executors.empty()) return;
  const auto first = std::min_element(executors.begin(), executors.end(),
                                      [](const auto& a, const auto& b) { return a.added_ms < b.added_ms; });
  if (start) {
    figures.time_to_first_executor_seconds =
        static_cast<double>(std::max<EpochMillis>(0, first->added_ms - *start)) / 1000.0;
  }
  std::set<std::string_view> ids;
  for (const ExecutorRecord& executor : executors) {
    ids.insert(executor.executor_id);
    if (executor.removed_ms) continue;
    ++figures.executors;
    figures.executor_cores += executor.total_cores;
  }
  if (!start) return;
  // Allocated core time within the window: cores × the part of each lifetime inside it.
  const EpochMillis window_start = *start;
  const EpochMillis window_end = *start + phases.window_ms;
  std::int64_t allocated_core_ms = 0;
  for (const ExecutorRecord& executor : executors) {
    const EpochMillis from = std::max(executor.added_ms, window_start);
    const EpochMillis to = std::min(executor.removed_ms.value_or(window_end), window_end);
    if (to > from) allocated_core_ms += static_cast<std::int64_t>(executor.total_cores) * (to - from);
  }
  // Task time of the listed executors only: in local mode tasks run on "driver", which allocates
  // no cores here.
  std::int64_t busy_ms = 0;
  for (const auto& [id, usage] : model.executor_usage()) {
    if (ids.contains(id)) busy_ms += usage.busy_ms;
  }
  figures.executor_utilization_ratio = Ratio(busy_ms, allocated_core_ms);
}

}  // namespace

ApplicationFigures FiguresOf(std::string app_name, const ApplicationModel& model, const PhaseTotals& phases,
                             const ApplicationEventTotals& totals, bool over) {
  ApplicationFigures figures;
  figures.app_name = std::move(app_name);
  figures.running = !over;
  figures.window_ms = phases.window_ms;
  figures.total_ms = phases.total_ms;
  if (!over) figures.active_phase = phases.latest;

  SetExecutorFigures(model, phases, figures);
  figures.executor_peak_jvm_heap_bytes = totals.peak_jvm_heap_bytes();
  if (const std::optional<std::string_view> memory = model.Property("spark.executor.memory")) {
    figures.executor_memory_limit_bytes = SparkMemoryBytes(*memory);
  }

  const TaskTimeSums& sums = totals.task_sums();
  figures.task_cpu_ratio = Ratio(sums.cpu_ns, sums.run_ms_with_cpu * 1'000'000);
  figures.gc_time_ratio = Ratio(sums.gc_ms, sums.run_ms);
  const std::int64_t serialization_ms = sums.deserialize_ms + sums.result_serialization_ms;
  figures.serialization_time_ratio = Ratio(serialization_ms, sums.run_ms + serialization_ms);
  figures.shuffle_skew_ratio = totals.max_read_skew_ratio();
  figures.output_bytes = sums.output_bytes;
  const std::int64_t write_ms = phases.total_ms[static_cast<std::size_t>(Phase::kIoWrite)];
  if (write_ms > 0) {
    figures.write_throughput_bytes_per_second =
        static_cast<double>(sums.output_bytes) * 1000.0 / static_cast<double>(write_ms);
  }
  figures.compute_task_p95_seconds = P95Seconds(totals.compute_task_durations());
  figures.write_task_p95_seconds = P95Seconds(totals.write_task_durations());
  figures.memory_spilled_bytes = sums.memory_spilled_bytes;
  figures.disk_spilled_bytes = sums.disk_spilled_bytes;
  figures.counts = totals.counts();
  figures.task_durations = totals.task_durations();
  return figures;
}

}  // namespace sparktrace::feed
