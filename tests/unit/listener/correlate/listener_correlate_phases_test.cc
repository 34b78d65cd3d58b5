// Phase figures (listener/correlate/phases.h) against values computed by hand from the
// timestamps of real event logs, and synthetic cases for the rules the real logs do not reach.

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/span_builder.h"
#include "listener/correlate/task_statistics.h"
#include "listener/events/event_parser.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::listener::correlate {
namespace {

namespace lines = test_lines;

// Reads a real log into a model; skips the test when the data is absent.
bool LoadRealLog(const std::string& relative_path, ApplicationModel& model) {
  const std::optional<std::filesystem::path> data_dir = events::test_data::FindDataDir();
  if (!data_dir) return false;
  std::string why;
  const std::optional<std::string> content = events::test_data::ReadLogFile(*data_dir / relative_path, why);
  EXPECT_TRUE(content.has_value()) << why;
  if (!content) return false;
  events::EventParser parser;
  for (std::string_view line : events::test_data::SplitLines(*content)) {
    Result<events::SparkEvent> event = parser.Parse(line);
    EXPECT_TRUE(event.ok()) << relative_path << ": " << (event.ok() ? "" : event.error().ToString());
    if (event.ok()) model.Apply(*event);
  }
  return true;
}

void ExpectCoversWindow(const PhaseBreakdown& phases) {
  ASSERT_FALSE(phases.intervals.empty());
  EXPECT_EQ(phases.intervals.front().start_ms, phases.window.start_ms);
  EXPECT_EQ(phases.intervals.back().end_ms, phases.window.end_ms);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < phases.intervals.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(phases.intervals[i].start_ms, phases.intervals[i - 1].end_ms);
      EXPECT_NE(phases.intervals[i].phase, phases.intervals[i - 1].phase) << "adjacent intervals are merged";
    }
    sum += phases.intervals[i].end_ms - phases.intervals[i].start_ms;
  }
  EXPECT_EQ(sum, phases.window.end_ms - phases.window.start_ms);
}

// application_1553914137147_0018 (Spark 3.0.0-SNAPSHOT on YARN, 3 executors, 3 jobs):
//   ApplicationStart 1554755984286, ApplicationEnd 1554756046454   → window 62,168 ms
//   ExecutorAdded 1 at 1554755994596 (2 at ...995291, 3 at ...995362), none removed
//   stage 0.0 [1554755995763, 1554756012379]
//   stage 1.0 [1554756012416, 1554756027227]   (jobs 1 and 2 run concurrently)
//   stage 2.0 [1554756012430, 1554756046447]
//   No task wrote output.
// By hand:
//   resource_wait = 994596 − 984286 = 10,310 (start → first executor)
//   compute       = (012379 − 995763) + (046447 − 012416) = 16,616 + 34,031 = 50,647
//                   (stages 1 and 2 overlap: their union runs from 012416 to 046447)
//   idle          = (995763 − 994596) + (012416 − 012379) + (046454 − 046447) = 1,167 + 37 + 7 = 1,211
//   io_write      = 0;  10,310 + 50,647 + 1,211 = 62,168 ✓
TEST(ListenerCorrelatePhases, YarnApplicationWithThreeExecutors) {
  ApplicationModel model;
  if (!LoadRealLog("spark-events/application_1553914137147_0018", model)) {
    GTEST_SKIP() << events::test_data::DataDirMissingMessage();
  }
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->window.start_ms, 1554755984286);
  EXPECT_EQ(phases->window.end_ms, 1554756046454);
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), 10310);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 50647);
  EXPECT_EQ(phases->TotalMs(Phase::kIdle), 1211);
  EXPECT_EQ(phases->TotalMs(Phase::kIoWrite), 0);
  ExpectCoversWindow(*phases);
  // resource_wait, idle, compute, idle, compute, idle.
  ASSERT_EQ(phases->intervals.size(), 6U);
  EXPECT_EQ(phases->intervals[0].phase, Phase::kResourceWait);
  EXPECT_EQ(phases->intervals[0].end_ms, 1554755994596);
  EXPECT_EQ(phases->intervals[4].phase, Phase::kCompute);
  EXPECT_EQ(phases->intervals[4].start_ms, 1554756012416);
}

// application_1628109047826_1317105 (Spark 3.1.1 on YARN, dynamic allocation):
//   ApplicationStart 1628637895333, ApplicationEnd 1628638170208   → window 274,875 ms
//   first ExecutorAdded (executor 1) at 1628637966675; 10 added by 1628637985360
//   stage 0.0 [1628638073488, 1628638137679]
//   executors 1, 9, 2, 3, 6 removed during the stage (1628638118895 … 1628638133274): 5 stay
//   alive, so the stage never waits for resources; executor 4 removed after it (1628638139048).
// By hand:
//   resource_wait = 966675 − 895333 = 71,342
//   compute       = 137679 − 073488 = 64,191
//   idle          = (073488 − 966675) + (170208 − 137679) = 106,813 + 32,529 = 139,342
//   io_write      = 0;  71,342 + 64,191 + 139,342 = 274,875 ✓
TEST(ListenerCorrelatePhases, DynamicAllocationApplication) {
  ApplicationModel model;
  if (!LoadRealLog("spark-events/application_1628109047826_1317105", model)) {
    GTEST_SKIP() << events::test_data::DataDirMissingMessage();
  }
  EXPECT_EQ(model.executors().size(), 10U);
  // 5 task ends, one a speculative copy killed because the other attempt succeeded (README).
  const TaskStatistics& tasks = model.stages().at({0, 0}).tasks;
  EXPECT_EQ(tasks.tasks_ended, 5);
  EXPECT_EQ(tasks.killed_tasks, 1);
  EXPECT_EQ(tasks.failed_tasks, 0);
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), 71342);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 64191);
  EXPECT_EQ(phases->TotalMs(Phase::kIdle), 139342);
  EXPECT_EQ(phases->TotalMs(Phase::kIoWrite), 0);
  ExpectCoversWindow(*phases);
}

// local-1422981780767 (Spark 1.2 era, local mode): no ExecutorAdded at all, so no executor
// information and no resource_wait; jobs have no submission times.
//   ApplicationStart 1422981779720, ApplicationEnd 1422981788731   → window 9,011 ms
//   stages: 0 [784228, 784819] 591; 1 [785829, 786286] 457; 2 [786296, 786347] 51 (failed);
//           3 [787191, 787226] 35
// By hand: compute = 591 + 457 + 51 + 35 = 1,134; idle = 9,011 − 1,134 = 7,877.
TEST(ListenerCorrelatePhases, OldLocalModeLogWithoutExecutorEvents) {
  ApplicationModel model;
  if (!LoadRealLog("spark-events/local-1422981780767", model)) {
    GTEST_SKIP() << events::test_data::DataDirMissingMessage();
  }
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), 0);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 1134);
  EXPECT_EQ(phases->TotalMs(Phase::kIdle), 7877);
  ExpectCoversWindow(*phases);
  ASSERT_EQ(model.jobs().size(), 3U);
  EXPECT_EQ(model.jobs().at(1).status, JobStatus::kFailed);
  // Stage 2 is listed by job 1 only; with no job submission times the first listing job owns it.
  EXPECT_EQ(model.JobOfStageAttempt(model.stages().at({2, 0})), 1);
}

// python_udf_eventlog (Spark 3.5.5, local mode; spark-events-problems): a job that writes.
//   ApplicationStart 1774375206644, ApplicationEnd 1774375208728           → window 2,084 ms
//   ExecutorAdded "driver" 1774375206957 (logged before ApplicationStart, later in time)
//   stage 0.0 [1774375207520, 1774375207712] no output
//   stage 1.0 [1774375208236, 1774375208717] its task wrote 1,162 bytes / 20 records
// By hand:
//   resource_wait = 206957 − 206644 = 313
//   compute       = 207712 − 207520 = 192
//   io_write      = 208717 − 208236 = 481
//   idle          = (207520 − 206957) + (208236 − 207712) + (208728 − 208717) = 563 + 524 + 11 = 1,098
//   313 + 192 + 481 + 1,098 = 2,084 ✓
TEST(ListenerCorrelatePhases, LocalApplicationThatWritesOutput) {
  ApplicationModel model;
  if (!LoadRealLog("spark-events-problems/python_udf_eventlog", model)) {
    GTEST_SKIP() << events::test_data::DataDirMissingMessage();
  }
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->window.end_ms - phases->window.start_ms, 2084);
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), 313);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 192);
  EXPECT_EQ(phases->TotalMs(Phase::kIoWrite), 481);
  EXPECT_EQ(phases->TotalMs(Phase::kIdle), 1098);
  ExpectCoversWindow(*phases);
}

// truncated_eventlog (Spark 3.1.1, local mode; spark-events-problems): cut off mid-run, no
// ApplicationEnd, so the window ends at the latest event time, the last TaskEnd's finish.
//   ApplicationStart 1622043422343; latest event time 1622043428457     → window 6,114 ms
//   ExecutorAdded "driver" 1622043423204
//   stage 0.0 [1622043426387, 1622043427181] wrote output (17,280 bytes + records)
//   stages 1.0 (submitted 1622043427644) and 2.0 (…427656) never complete: run to the window end
// By hand:
//   resource_wait = 423204 − 422343 = 861
//   io_write      = 427181 − 426387 = 794
//   compute       = 428457 − 427644 = 813
//   idle          = (426387 − 423204) + (427644 − 427181) = 3,183 + 463 = 3,646
//   861 + 794 + 813 + 3,646 = 6,114 ✓
TEST(ListenerCorrelatePhases, TruncatedLogEndsAtItsLatestEvent) {
  ApplicationModel model;
  if (!LoadRealLog("spark-events-problems/truncated_eventlog", model)) {
    GTEST_SKIP() << events::test_data::DataDirMissingMessage();
  }
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->window.start_ms, 1622043422343);
  EXPECT_EQ(phases->window.end_ms, 1622043428457);
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), 861);
  EXPECT_EQ(phases->TotalMs(Phase::kIoWrite), 794);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 813);
  EXPECT_EQ(phases->TotalMs(Phase::kIdle), 3646);
  ExpectCoversWindow(*phases);
}

// Every real log of the data set (plain and zstd files; the rolling directories are
// listener/eventlog's business): the model takes it, the phases cover the window exactly, and
// the application trace builds with valid, distinct span ids.
TEST(ListenerCorrelatePhases, EveryRealLogGivesAConsistentBreakdown) {
  const std::optional<std::filesystem::path> data_dir = events::test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << events::test_data::DataDirMissingMessage();
  int logs = 0;
  for (const char* subdirectory : {"spark-events", "spark-events-problems"}) {
    for (const auto& entry : std::filesystem::directory_iterator(*data_dir / subdirectory)) {
      if (!entry.is_regular_file()) continue;
      const std::string name = entry.path().filename().string();
      std::string why;
      const std::optional<std::string> content = events::test_data::ReadLogFile(entry.path(), why);
      ASSERT_TRUE(content.has_value()) << why;
      ApplicationModel model;
      events::EventParser parser;
      for (std::string_view line : events::test_data::SplitLines(*content)) {
        Result<events::SparkEvent> event = parser.Parse(line);
        if (event.ok()) model.Apply(*event);  // malformed_json_eventlog has a corrupt line
      }
      ++logs;
      const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
      ASSERT_TRUE(phases.has_value()) << name;
      std::int64_t total = 0;
      for (std::int64_t phase_ms : phases->total_ms) total += phase_ms;
      EXPECT_EQ(total, phases->window.end_ms - phases->window.start_ms) << name;
      if (phases->window.end_ms > phases->window.start_ms) ExpectCoversWindow(*phases);
      const BuiltSpans built = BuildApplicationSpans(model, SpanBuildOptions{.max_phase_spans = 100'000});
      std::set<tracing::SpanId> ids;
      for (const tracing::Span& span : built.spans) {
        EXPECT_TRUE(tracing::IsValid(span.span_id)) << name << " " << span.name;
        EXPECT_LE(span.start_time_unix_nano, span.end_time_unix_nano) << name << " " << span.name;
        ids.insert(span.span_id);
      }
      EXPECT_EQ(ids.size(), built.spans.size()) << name;
    }
  }
  EXPECT_GE(logs, 30);
}

// Tasks pending while every executor is gone, and a stage that writes output:
//   app 0 … 1000; executor 1 added 100, removed 400; executor 2 added 600
//   stage 0 [200, 700] (no output), stage 1 [650, 900] writes 10 bytes
//   [0,100) resource_wait (no executor yet), [100,200) idle, [200,400) compute,
//   [400,600) resource_wait (stage running, no executor), [600,650) compute,
//   [650,900) io_write (stage 1 writes; io_write wins over compute), [900,1000) idle.
TEST(ListenerCorrelatePhases, PendingTasksWithoutExecutorsAndOutputWrites) {
  ApplicationModel model;
  lines::Feed(
      model,
      {lines::AppStart("app-1", 0), lines::ExecutorAdded("1", 100), lines::JobStart(0, 200, {0, 1}, {}),
       lines::StageSubmitted(0, 200, 1), lines::ExecutorRemoved("1", 400), lines::ExecutorAdded("2", 600),
       lines::StageSubmitted(1, 650, 1), lines::TaskEnd(0, 1, 610, 690),
       lines::StageCompleted(0, 200, 700, 1), lines::TaskEnd(1, 2, 660, 890, {.output_bytes = 10}),
       lines::StageCompleted(1, 650, 900, 1), lines::JobEnd(0, 900), lines::AppEnd(1000)});
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), 100 + 200);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 200 + 50);
  EXPECT_EQ(phases->TotalMs(Phase::kIoWrite), 250);
  EXPECT_EQ(phases->TotalMs(Phase::kIdle), 100 + 100);
  ExpectCoversWindow(*phases);
  ASSERT_EQ(phases->intervals.size(), 7U);
  EXPECT_EQ(phases->intervals[3].phase, Phase::kResourceWait);
  EXPECT_EQ(phases->intervals[3].start_ms, 400);
  EXPECT_EQ(phases->intervals[3].end_ms, 600);
}

// A log still being written: the window ends at the latest event time, and a stage that has not
// completed runs to it.
TEST(ListenerCorrelatePhases, InProgressLogEndsAtTheLatestEvent) {
  ApplicationModel model;
  lines::Feed(model, {lines::AppStart("app-2", 1000), lines::ExecutorAdded("driver", 1000),
                      lines::JobStart(0, 1100, {0}, {}), lines::StageSubmitted(0, 1200, 2),
                      lines::TaskEnd(0, 1, 1200, 1500)});
  const std::optional<PhaseBreakdown> phases = ApplicationPhases(model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->window.end_ms, 1500);
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), 0);  // executor added at the start itself
  EXPECT_EQ(phases->TotalMs(Phase::kIdle), 200);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 300);
}

TEST(ListenerCorrelatePhases, DurationSampleIsExactUpToItsLimitThenBounded) {
  DurationSample sample;
  EXPECT_FALSE(sample.Quantile(0.5).has_value());
  for (int i = 1; i <= 100; ++i) sample.Add(i);
  EXPECT_EQ(sample.Quantile(0.5), 50);
  EXPECT_EQ(sample.Quantile(0.95), 95);
  EXPECT_EQ(sample.Quantile(1.0), 100);
  EXPECT_EQ(sample.max_ms(), 100);
  EXPECT_TRUE(sample.exact());

  DurationSample large;
  const std::int64_t total = static_cast<std::int64_t>(kExactDurationLimit) * 3;
  for (std::int64_t i = 0; i < total; ++i) large.Add(i % 1000);
  EXPECT_EQ(large.count(), total);
  EXPECT_FALSE(large.exact());
  EXPECT_EQ(large.max_ms(), 999);
  // Uniform over 0..999: the reservoir's median and p95 are close to 500 and 950.
  EXPECT_NEAR(static_cast<double>(*large.Quantile(0.5)), 500.0, 15.0);
  EXPECT_NEAR(static_cast<double>(*large.Quantile(0.95)), 950.0, 15.0);
}

}  // namespace
}  // namespace sparktrace::listener::correlate
