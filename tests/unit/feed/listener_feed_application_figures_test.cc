// The per-application metrics (feed/application_figures.h, application_event_totals.h)
// computed from hand-written event-log lines, and rendered as FeedMetrics exports them.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "feed/application_event_totals.h"
#include "feed/application_figures.h"
#include "feed/application_phase_totals.h"
#include "feed/feed_metrics.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/spark_memory_size.h"
#include "listener/events/event_parser.h"
#include "tests/unit/diagnose/diagnose_test_lines.h"
#include "tests/unit/feed/listener_feed_test_support.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::feed {

using listener::correlate::ApplicationModel;
using listener::correlate::kPhaseCount;
using listener::correlate::Phase;
using listener::correlate::SparkMemoryBytes;
using listener::events::ApplicationEnd;
using listener::events::EventParser;
using listener::events::SparkEvent;

namespace {

namespace tl = listener::correlate::test_lines;
namespace dtl = diagnose::test_lines;
using dtl::kT0;

std::string ExecutorRemovedLine(std::string_view id, std::int64_t time_ms, std::string_view reason) {
  return R"({"Event":"SparkListenerExecutorRemoved","Timestamp":)" + tl::Str(time_ms) +
         R"(,"Executor ID":")" + std::string(id) + R"(","Removed Reason":")" + std::string(reason) + R"("})";
}

// An application as the feed holds it: the model and the totals fed the same events.
struct Fed {
  ApplicationModel model;
  ApplicationPhaseTotals phases;
  ApplicationEventTotals events;

  void Feed(const std::vector<std::string>& lines) {
    EventParser parser;
    for (const std::string& line : lines) {
      Result<SparkEvent> event = parser.Parse(line);
      ASSERT_TRUE(event.ok()) << event.error().message << "\n" << line;
      model.Apply(*event);
      events.Add(*event, model);
    }
  }

  ApplicationFigures Figures(bool over) const {
    const std::optional<PhaseTotals> totals = phases.Totals(model);
    EXPECT_TRUE(totals);
    return FiguresOf("etl", model, totals.value_or(PhaseTotals{}), events, over);
  }
};

std::string Failure(std::string_view class_name, std::string_view description) {
  return R"({"Reason":"ExceptionFailure","Class Name":")" + std::string(class_name) + R"(","Description":")" +
         std::string(description) + R"(","Stack Trace":[]})";
}

// Executors 1 (kept), 2 (lost to an OOM kill), 3 (let go by dynamic allocation); stage 1 of three
// successful compute tasks and two failed ones, stage 2 of one writing task, failed.
std::vector<std::string> RunningApplication() {
  std::vector<std::string> lines = {
      tl::AppStart("app-1", kT0),
      dtl::EnvironmentLine({{"spark.executor.memory", "4g"}, {"spark.master", "k8s://x"}}),
      tl::ExecutorAdded("1", kT0 + 1'000),
      tl::ExecutorAdded("2", kT0 + 1'500),
      tl::ExecutorAdded("3", kT0 + 1'600),
      tl::JobStart(1, kT0 + 2'000, {1}, {}),
      dtl::StageLine(false, 1, 0, "map", 5, kT0 + 2'000, 0),
  };
  const auto task = [](std::int64_t id, std::int64_t duration_ms) {
    dtl::Task t;
    t.stage = 1;
    t.task_id = id;
    t.launch_ms = kT0 + 2'000;
    t.finish_ms = kT0 + 2'000 + duration_ms;
    t.cpu_share = 0.5;
    return t;
  };
  dtl::Task a = task(1, 1'000);
  a.gc_ms = 100;
  a.input_bytes = 100;
  a.memory_spilled = 10;
  a.disk_spilled = 5;
  a.deserialize_ms = 100;
  a.jvm_heap_bytes = 300'000'000;
  dtl::Task b = task(2, 3'000);
  b.gc_ms = 200;
  b.input_bytes = 1'000;
  b.jvm_heap_bytes = 500'000'000;
  dtl::Task c = task(3, 2'000);
  c.input_bytes = 100;
  c.jvm_heap_bytes = 0;  // nothing polled during the task
  dtl::Task oom = task(4, 500);
  oom.failure_reason = Failure("java.lang.OutOfMemoryError", "Java heap space");
  dtl::Task other = task(5, 500);
  other.failure_reason = Failure("java.lang.RuntimeException", "bad row");
  for (const dtl::Task& t : {a, b, c, oom, other}) lines.push_back(dtl::TaskEndLine(t));
  lines.push_back(ExecutorRemovedLine("3", kT0 + 3'000, "Executor killed by driver."));
  lines.push_back(dtl::StageLine(true, 1, 0, "map", 5, kT0 + 2'000, kT0 + 5'000));
  lines.push_back(tl::JobEnd(1, kT0 + 5'000));
  lines.push_back(tl::JobStart(2, kT0 + 6'000, {2}, {}));
  lines.push_back(dtl::StageLine(false, 2, 0, "save", 1, kT0 + 6'000, 0));
  dtl::Task write = task(6, 4'000);
  write.stage = 2;
  write.launch_ms = kT0 + 6'000;
  write.finish_ms = kT0 + 10'000;
  write.output_bytes = 1'000;
  write.result_serialization_ms = 50;
  lines.push_back(dtl::TaskEndLine(write));
  lines.push_back(ExecutorRemovedLine(
      "2", kT0 + 8'000, "Container killed on request. Exit code is 137. Killed by external signal"));
  lines.push_back(dtl::StageLine(true, 2, 0, "save", 1, kT0 + 6'000, kT0 + 10'000, "Job aborted"));
  lines.push_back(tl::JobEnd(2, kT0 + 10'000, /*succeeded=*/false));
  return lines;
}

TEST(ListenerFeedApplicationFigures, TaskFiguresOfARunningApplication) {
  Fed app;
  app.Feed(RunningApplication());
  const ApplicationFigures f = app.Figures(/*over=*/false);

  // Σ run time of every task with metrics: 1000 + 3000 + 2000 + 500 + 500 + 4000.
  constexpr double kRunMs = 11'000;
  ASSERT_TRUE(f.task_cpu_ratio);
  EXPECT_DOUBLE_EQ(*f.task_cpu_ratio, 0.5);
  ASSERT_TRUE(f.gc_time_ratio);
  EXPECT_DOUBLE_EQ(*f.gc_time_ratio, 300 / kRunMs);
  ASSERT_TRUE(f.serialization_time_ratio);
  EXPECT_DOUBLE_EQ(*f.serialization_time_ratio, 150 / (kRunMs + 150));
  // Stage 1 read 100, 1000, 100 bytes per successful task (max / median = 10), but three tasks and
  // a kilobyte are below the data-skew rule's gates (SkewOfStagesLargeEnoughToJudge); stage 2 read
  // nothing.
  EXPECT_FALSE(f.shuffle_skew_ratio);
  EXPECT_EQ(f.output_bytes, 1'000);
  EXPECT_EQ(f.memory_spilled_bytes, 10);
  EXPECT_EQ(f.disk_spilled_bytes, 5);
  // Stage 2 wrote from 6 s to 10 s: the io_write phase.
  EXPECT_EQ(f.total_ms[static_cast<std::size_t>(Phase::kIoWrite)], 4'000);
  ASSERT_TRUE(f.write_throughput_bytes_per_second);
  EXPECT_DOUBLE_EQ(*f.write_throughput_bytes_per_second, 250.0);
  // p95 (nearest rank) of {1, 3, 2} s and of {4} s.
  ASSERT_TRUE(f.compute_task_p95_seconds);
  EXPECT_DOUBLE_EQ(*f.compute_task_p95_seconds, 3.0);
  ASSERT_TRUE(f.write_task_p95_seconds);
  EXPECT_DOUBLE_EQ(*f.write_task_p95_seconds, 4.0);
  // Successful tasks of 1, 2, 3 and 4 s.
  EXPECT_EQ(f.task_durations.count, 4u);
  EXPECT_EQ(f.task_durations.sum_ms, 10'000);
  EXPECT_EQ(f.task_durations.cumulative_counts[2], 0u);  // ≤ 0.5 s
  EXPECT_EQ(f.task_durations.cumulative_counts[3], 1u);  // ≤ 1 s
  EXPECT_EQ(f.task_durations.cumulative_counts[4], 2u);  // ≤ 2.5 s
  EXPECT_EQ(f.task_durations.cumulative_counts[5], 4u);  // ≤ 5 s
  EXPECT_EQ(f.counts.tasks_failed_out_of_memory, 1u);
  EXPECT_EQ(f.counts.tasks_failed_other, 1u);
  EXPECT_EQ(f.counts.jobs_succeeded, 1u);
  EXPECT_EQ(f.counts.jobs_failed, 1u);
  EXPECT_EQ(f.counts.stages_completed, 1u);
  EXPECT_EQ(f.counts.stages_failed, 1u);
  ASSERT_TRUE(f.executor_peak_jvm_heap_bytes);
  EXPECT_EQ(*f.executor_peak_jvm_heap_bytes, 500'000'000);
  ASSERT_TRUE(f.executor_memory_limit_bytes);
  EXPECT_EQ(*f.executor_memory_limit_bytes, std::int64_t{4} << 30);
}

TEST(ListenerFeedApplicationFigures, ExecutorsAndPhaseOfARunningApplication) {
  Fed app;
  app.Feed(RunningApplication());
  const ApplicationFigures f = app.Figures(/*over=*/false);
  EXPECT_TRUE(f.running);
  ASSERT_TRUE(f.time_to_first_executor_seconds);
  EXPECT_DOUBLE_EQ(*f.time_to_first_executor_seconds, 1.0);
  EXPECT_EQ(f.executors, 1);  // 2 and 3 were removed
  EXPECT_EQ(f.executor_cores, 4);
  // Busy: every task ran on executor 1, 11 s. Allocated up to the latest event (10 s): executor 1
  // 4 cores × 9 s, executor 2 4 × 6.5 s, executor 3 4 × 1.4 s.
  ASSERT_TRUE(f.executor_utilization_ratio);
  EXPECT_DOUBLE_EQ(*f.executor_utilization_ratio, 11'000.0 / (36'000 + 26'000 + 5'600));
  // The driver let executor 3 go; executor 2's container was killed with exit code 137.
  EXPECT_EQ(f.counts.executors_lost_out_of_memory, 1u);
  EXPECT_EQ(f.counts.executors_lost_other, 0u);
  // The writing stage ran until the latest event.
  EXPECT_EQ(f.active_phase, Phase::kIoWrite);
}

TEST(ListenerFeedApplicationFigures, AnApplicationThatEndedIsInNoPhaseAndLosesNoExecutorOnShutdown) {
  Fed app;
  app.Feed(RunningApplication());
  app.Feed({tl::AppEnd(kT0 + 12'000),
            ExecutorRemovedLine("1", kT0 + 12'050, "Container killed on request. Exit code is 143")});
  const ApplicationFigures f = app.Figures(/*over=*/true);
  EXPECT_FALSE(f.running);
  EXPECT_FALSE(f.active_phase);
  EXPECT_EQ(f.executors, 0);
  EXPECT_EQ(f.counts.executors_lost_out_of_memory, 1u) << "removed after ApplicationEnd: shutdown, no loss";
  EXPECT_EQ(f.counts.executors_lost_other, 0u);
}

// Skew is the largest max / median task read over stages the data-skew rule would judge: at least
// 8 successful tasks, the largest reading at least 16 MiB.
TEST(ListenerFeedApplicationFigures, SkewOfStagesLargeEnoughToJudge) {
  constexpr std::int64_t kMiB = std::int64_t{1} << 20;
  std::vector<std::string> lines = {tl::AppStart("app-1", kT0), tl::ExecutorAdded("1", kT0 + 100),
                                    tl::JobStart(1, kT0 + 1'000, {1, 2, 3}, {})};
  // Stage 1: 8 tasks of 16 MiB, one of them 160 MiB: 10. Stage 2: 8 tasks of 1 KiB, one of 1 MiB:
  // 1024, but nothing read is worth judging. Stage 3: 3 tasks, one reading 100x the median.
  const struct {
    std::int32_t stage;
    std::vector<std::int64_t> bytes;
  } stages[] = {
      {1, {16 * kMiB, 16 * kMiB, 16 * kMiB, 16 * kMiB, 16 * kMiB, 16 * kMiB, 16 * kMiB, 160 * kMiB}},
      {2, {1'024, 1'024, 1'024, 1'024, 1'024, 1'024, 1'024, kMiB}},
      {3, {20 * kMiB, 20 * kMiB, 2'000 * kMiB}}};
  std::int64_t task_id = 0;
  for (const auto& stage : stages) {
    const auto count = static_cast<std::int32_t>(stage.bytes.size());
    lines.push_back(dtl::StageLine(false, stage.stage, 0, "scan", count, kT0 + 1'000, 0));
    for (const std::int64_t bytes : stage.bytes) {
      dtl::Task t;
      t.stage = stage.stage;
      t.task_id = ++task_id;
      t.launch_ms = kT0 + 1'000;
      t.finish_ms = kT0 + 2'000;
      t.input_bytes = bytes;
      lines.push_back(dtl::TaskEndLine(t));
    }
    lines.push_back(dtl::StageLine(true, stage.stage, 0, "scan", count, kT0 + 1'000, kT0 + 2'000));
  }
  Fed app;
  app.Feed(lines);
  const ApplicationFigures f = app.Figures(/*over=*/false);
  ASSERT_TRUE(f.shuffle_skew_ratio);
  EXPECT_DOUBLE_EQ(*f.shuffle_skew_ratio, 10.0);

  FeedMetrics metrics(50, nullptr);
  metrics.Publish({}, {}, {f});
  EXPECT_DOUBLE_EQ(Value(metrics.Collect(), "spark_shuffle_skew_ratio", {{"app", "etl"}}), 10.0);
}

TEST(ListenerFeedApplicationFigures, AbsentFiguresBeforeTheyExist) {
  Fed app;
  app.Feed({tl::AppStart("app-1", kT0), tl::JobStart(1, kT0 + 100, {1}, {})});
  const ApplicationFigures f = app.Figures(/*over=*/false);
  EXPECT_FALSE(f.time_to_first_executor_seconds);
  EXPECT_FALSE(f.executor_utilization_ratio);
  EXPECT_FALSE(f.task_cpu_ratio);
  EXPECT_FALSE(f.gc_time_ratio);
  EXPECT_FALSE(f.write_throughput_bytes_per_second);
  EXPECT_FALSE(f.compute_task_p95_seconds);
  EXPECT_FALSE(f.shuffle_skew_ratio);
  EXPECT_FALSE(f.executor_peak_jvm_heap_bytes);
  EXPECT_FALSE(f.executor_memory_limit_bytes);

  FeedMetrics metrics(50, nullptr);
  metrics.Publish({}, {}, {f});
  const auto families = metrics.Collect();
  for (const char* absent : {"spark_time_to_first_executor_seconds", "spark_executor_utilization_ratio",
                             "spark_task_cpu_ratio", "spark_write_throughput_bytes_per_second",
                             "spark_task_duration_p95_seconds", "spark_executor_peak_jvm_heap_bytes",
                             "spark_executor_memory_limit_bytes", "spark_shuffle_skew_ratio"}) {
    const prometheus::MetricFamily* family = FindFamily(families, absent);
    ASSERT_NE(family, nullptr) << absent;
    EXPECT_TRUE(family->metric.empty()) << absent;
  }
  EXPECT_DOUBLE_EQ(Value(families, "spark_executors", {{"app", "etl"}}), 0.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_application_running", {{"app", "etl"}}), 1.0);
}

TEST(ListenerFeedApplicationFigures, ExportedWithTheirLabels) {
  Fed app;
  app.Feed(RunningApplication());
  FeedMetrics metrics(50, nullptr);
  metrics.Publish({}, {}, {app.Figures(/*over=*/false)});
  const auto families = metrics.Collect();
  const std::vector<std::pair<std::string, std::string>> etl = {{"app", "etl"}};
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_active", {{"app", "etl"}, {"phase", "io_write"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_phase_active", {{"app", "etl"}, {"phase", "compute"}}), 0.0);
  EXPECT_EQ(FindFamily(families, "spark_phase_active")->metric.size(), kPhaseCount);
  EXPECT_DOUBLE_EQ(Value(families, "spark_application_running", etl), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_time_to_first_executor_seconds", etl), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_executors", etl), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_executor_cores", etl), 4.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_task_cpu_ratio", etl), 0.5);
  EXPECT_DOUBLE_EQ(Value(families, "spark_output_bytes", etl), 1'000.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_write_throughput_bytes_per_second", etl), 250.0);
  EXPECT_DOUBLE_EQ(
      Value(families, "spark_task_duration_p95_seconds", {{"app", "etl"}, {"stage_kind", "compute"}}), 3.0);
  EXPECT_DOUBLE_EQ(
      Value(families, "spark_task_duration_p95_seconds", {{"app", "etl"}, {"stage_kind", "write"}}), 4.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_memory_spilled_bytes", etl), 10.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_disk_spilled_bytes", etl), 5.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_executor_peak_jvm_heap_bytes", etl), 500'000'000.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_executor_memory_limit_bytes", etl), 4'294'967'296.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_jobs_total", {{"app", "etl"}, {"status", "succeeded"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_jobs_total", {{"app", "etl"}, {"status", "failed"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_stages_total", {{"app", "etl"}, {"status", "completed"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_stages_total", {{"app", "etl"}, {"status", "failed"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_tasks_failed_total", {{"app", "etl"}, {"reason", "out_of_memory"}}),
                   1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_tasks_failed_total", {{"app", "etl"}, {"reason", "other"}}), 1.0);
  EXPECT_DOUBLE_EQ(
      Value(families, "spark_executors_lost_total", {{"app", "etl"}, {"reason", "out_of_memory"}}), 1.0);
  EXPECT_DOUBLE_EQ(Value(families, "spark_executors_lost_total", {{"app", "etl"}, {"reason", "other"}}), 0.0);
  EXPECT_FALSE(std::isnan(Value(families, "spark_gc_time_ratio", etl)));
  EXPECT_FALSE(std::isnan(Value(families, "spark_serialization_time_ratio", etl)));
  EXPECT_FALSE(std::isnan(Value(families, "spark_executor_utilization_ratio", etl)));

  const prometheus::MetricFamily* histogram = FindFamily(families, "spark_task_duration_seconds");
  ASSERT_NE(histogram, nullptr);
  EXPECT_EQ(histogram->type, prometheus::MetricType::Histogram);
  ASSERT_EQ(histogram->metric.size(), 1u);
  const auto& buckets = histogram->metric.front().histogram;
  EXPECT_EQ(buckets.sample_count, 4u);
  EXPECT_DOUBLE_EQ(buckets.sample_sum, 10.0);
  const std::vector<double> bounds = {
      0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, std::numeric_limits<double>::infinity()};
  ASSERT_EQ(buckets.bucket.size(), bounds.size());
  for (std::size_t i = 0; i < bounds.size(); ++i) EXPECT_DOUBLE_EQ(buckets.bucket[i].upper_bound, bounds[i]);
  EXPECT_EQ(buckets.bucket[3].cumulative_count, 1u);   // le 1
  EXPECT_EQ(buckets.bucket[5].cumulative_count, 4u);   // le 5
  EXPECT_EQ(buckets.bucket[13].cumulative_count, 4u);  // le +Inf
}

TEST(ListenerFeedApplicationFigures, DriverRemovalsAreNoLoss) {
  EXPECT_TRUE(RemovedByDriver("Executor killed by driver."));
  EXPECT_TRUE(
      RemovedByDriver("Container container_e18_1_2_01_000010 exited from explicit termination request."));
  EXPECT_TRUE(RemovedByDriver("Executor decommission: spark scale down"));
  EXPECT_TRUE(RemovedByDriver("Dynamic allocation"));
  EXPECT_FALSE(RemovedByDriver("Container marked as failed"));
  EXPECT_FALSE(RemovedByDriver("Executor decommission: worker decommissioned"));
  EXPECT_FALSE(
      RemovedByDriver("The executor with id 3 exited with exit code 137(SIGKILL, possible container OOM)."));
}

TEST(ListenerFeedSparkMemorySize, ReadsSizesAsSparkDoesForExecutorMemory) {
  EXPECT_EQ(SparkMemoryBytes("4g"), std::int64_t{4} << 30);
  EXPECT_EQ(SparkMemoryBytes("512m"), std::int64_t{512} << 20);
  EXPECT_EQ(SparkMemoryBytes("512MB"), std::int64_t{512} << 20);
  EXPECT_EQ(SparkMemoryBytes(" 2G "), std::int64_t{2} << 30);
  EXPECT_EQ(SparkMemoryBytes("1t"), std::int64_t{1} << 40);
  EXPECT_EQ(SparkMemoryBytes("4096"), std::int64_t{4096} << 20) << "no suffix: MiB";
  EXPECT_EQ(SparkMemoryBytes("1536k"), std::int64_t{1} << 20) << "whole MiB, as -Xmx gets it";
  EXPECT_EQ(SparkMemoryBytes("2097152b"), std::int64_t{2} << 20);
  EXPECT_EQ(SparkMemoryBytes("1.5g"), std::nullopt) << "Spark rejects fractions";
  EXPECT_EQ(SparkMemoryBytes("4 gigs"), std::nullopt);
  EXPECT_EQ(SparkMemoryBytes(""), std::nullopt);
  EXPECT_EQ(SparkMemoryBytes("-1g"), std::nullopt);
  EXPECT_EQ(SparkMemoryBytes("99999999999p"), std::nullopt) << "overflow";
}

}  // namespace
}  // namespace sparktrace::feed
