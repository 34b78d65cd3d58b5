// low-parallelism: fires on a stage with fewer tasks than free slots whose tasks move ≥ 512 MiB or run
// ≥ 10x (and ≥ 60 s of) the typical task; stays quiet at the boundaries' other side, with as many tasks
// as slots, with small tasks, and when other stages keep the slots busy. Slots are those of the
// executors alive when the stage's first task launched.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "tests/unit/diagnose/diagnose_test_lines.h"

namespace sparktrace::diagnose {
namespace {

using test_lines::EvidenceNamed;
using test_lines::FindById;
using test_lines::HealthyApp;
using test_lines::Ids;
using test_lines::kMiBytes;
using test_lines::kT0;
using test_lines::LogBuilder;
using test_lines::ModelOf;
using test_lines::StageSpec;

constexpr std::int64_t kGiBytes = 1024 * kMiBytes;

using test_lines::Diagnose;

// HealthyApp's stage 1 (2 executors x 4 cores = 8 slots; stage 0 is 16 tasks of 10 s, the typical
// task) as `tasks` tasks of task_ms, each reading task_bytes of shuffle, all in one wave.
std::function<void(StageSpec&)> NarrowStage(int tasks, std::int64_t task_ms, std::int64_t task_bytes) {
  return [=](StageSpec& stage) {
    stage.tasks = tasks;
    stage.task_ms = task_ms;
    stage.figures.shuffle_read_bytes = task_bytes;
  };
}

double Value(const Finding& finding, std::string_view name) {
  const Evidence* evidence = EvidenceNamed(finding, name);
  EXPECT_NE(evidence, nullptr) << name;
  return evidence ? evidence->value : -1;
}

TEST(DiagnoseLowParallelism, FiresOnTwoBigTasksOnEightSlots) {
  const auto findings = Diagnose(HealthyApp(NarrowStage(2, 100'000, kGiBytes)));
  const Finding* low = FindById(findings, kLowParallelism);
  ASSERT_NE(low, nullptr) << Ids(findings);
  EXPECT_EQ(low->scope.kind, ScopeKind::kStage);
  EXPECT_EQ(low->scope.stage_id, 1);
  EXPECT_EQ(low->recipe, "docs/recipes/troubleshoot/low-parallelism.md");
  EXPECT_EQ(Value(*low, "tasks"), 2);
  EXPECT_EQ(EvidenceNamed(*low, "tasks")->threshold, 7.0);  // fewer than the 8 free slots
  EXPECT_EQ(Value(*low, "free_slots"), 8);
  EXPECT_EQ(Value(*low, "slots_alive"), 8);
  EXPECT_EQ(Value(*low, "task_bytes"), static_cast<double>(kGiBytes));
  // 2 GiB in 128 MiB partitions = 16 = two waves of the 8 slots, each 200 s / 16 = 12.5 s: 25 s
  // instead of the stage's 100.01 s.
  EXPECT_EQ(Value(*low, "suggested_partitions"), 16);
  EXPECT_NEAR(Value(*low, "full_parallelism_stage_ms"), 25'000, 1);
  EXPECT_NEAR(low->impact_seconds, 75.01, 0.01);
  EXPECT_EQ(low->severity, Severity::kCritical);  // 75 s of a 124 s application
  ASSERT_FALSE(low->fix.empty());
  // 2 tasks, fewer than the default 200 shuffle partitions: the query set the count.
  EXPECT_EQ(low->fix.front().rfind("the 2 tasks are fewer than spark.sql.shuffle.partitions (200)", 0), 0u)
      << low->fix.front();
  EXPECT_NE(low->title.find("2 tasks on 8 free slots moved 1.0 GiB each"), std::string::npos) << low->title;
}

TEST(DiagnoseLowParallelism, RaisesSparkSqlShufflePartitionsWhenItHeldTheCount) {
  auto log = HealthyApp(NarrowStage(2, 100'000, kGiBytes));
  log.Environment({{"spark.sql.shuffle.partitions", "2"}, {"spark.sql.adaptive.enabled", "false"}});
  const std::vector<Finding> findings = Diagnose(log);  // kept: `low` points into it
  const Finding* low = FindById(findings, kLowParallelism);
  ASSERT_NE(low, nullptr) << Ids(findings);
  ASSERT_GE(low->fix.size(), 2u);
  EXPECT_EQ(low->fix[0].rfind("more shuffle partitions: spark.sql.shuffle.partitions=16 (now 2;", 0), 0u)
      << low->fix[0];
  EXPECT_NE(low->fix[1].find("spark.sql.adaptive.enabled=true (now false)"), std::string::npos)
      << low->fix[1];
}

TEST(DiagnoseLowParallelism, BytesBoundaryIsFiveHundredTwelveMibPerTask) {
  // 90 s tasks: 9x the typical 10 s task, under the duration path's 10x, so bytes alone decide.
  const auto at = Diagnose(HealthyApp(NarrowStage(2, 90'000, 512 * kMiBytes)));
  EXPECT_NE(FindById(at, kLowParallelism), nullptr) << Ids(at);
  const auto below = Diagnose(HealthyApp(NarrowStage(2, 90'000, 512 * kMiBytes - 1)));
  EXPECT_EQ(FindById(below, kLowParallelism), nullptr) << Ids(below);
}

TEST(DiagnoseLowParallelism, DurationBoundaryIsTenTimesTheTypicalTask) {
  // 10 MiB per task: only the duration path can fire. The typical task is stage 0's 10 s.
  const auto at = Diagnose(HealthyApp(NarrowStage(2, 100'000, 10 * kMiBytes)));
  const Finding* low = FindById(at, kLowParallelism);
  ASSERT_NE(low, nullptr) << Ids(at);
  EXPECT_NEAR(Value(*low, "task_duration_ratio"), 10.0, 1e-9);
  EXPECT_EQ(Value(*low, "typical_task_ms"), 10'000);
  EXPECT_NE(low->fix.front().find("long for the data they read"), std::string::npos) << low->fix.front();
  const auto below = Diagnose(HealthyApp(NarrowStage(2, 99'000, 10 * kMiBytes)));
  EXPECT_EQ(FindById(below, kLowParallelism), nullptr) << Ids(below);
}

TEST(DiagnoseLowParallelism, DurationPathNeedsAMinuteOfTask) {
  // Stage 0 of 1 s tasks: 59 s tasks are 59x the typical task but under the 60 s floor.
  const auto short_typical = [](StageSpec& stage) { stage.task_ms = 1'000; };
  auto log_with = [&](std::int64_t narrow_ms) {
    LogBuilder log;
    log.Executor("1", kT0 + 2'000).Executor("2", kT0 + 2'000);
    log.JobStart(0, kT0 + 3'000, {0, 1});
    StageSpec compute;
    compute.stage_id = 0;
    compute.start_ms = kT0 + 3'000;
    short_typical(compute);
    StageSpec narrow;
    narrow.stage_id = 1;
    narrow.start_ms = log.Stage(compute);
    NarrowStage(2, narrow_ms, 10 * kMiBytes)(narrow);
    const std::int64_t end = log.Stage(narrow);
    log.JobEnd(0, end + 5).AppEnd(end + 1'000);
    return log;
  };
  EXPECT_EQ(FindById(Diagnose(log_with(59'000)), kLowParallelism), nullptr);
  EXPECT_NE(FindById(Diagnose(log_with(60'000)), kLowParallelism), nullptr);
}

TEST(DiagnoseLowParallelism, AsManyTasksAsSlotsOrMoreDoesNotFire) {
  for (int tasks : {8, 16}) {
    const auto findings = Diagnose(HealthyApp([tasks](StageSpec& stage) {
      NarrowStage(tasks, 100'000, kGiBytes)(stage);
      stage.slots = 8;  // waves of 8
    }));
    EXPECT_EQ(FindById(findings, kLowParallelism), nullptr) << tasks << ": " << Ids(findings);
  }
  const auto seven = Diagnose(HealthyApp(NarrowStage(7, 100'000, kGiBytes)));
  EXPECT_NE(FindById(seven, kLowParallelism), nullptr) << Ids(seven);
}

TEST(DiagnoseLowParallelism, SmallShortTasksDoNotFire) {
  const auto findings = Diagnose(HealthyApp(NarrowStage(2, 5'000, 100 * kMiBytes)));
  EXPECT_EQ(FindById(findings, kLowParallelism), nullptr) << Ids(findings);
}

TEST(DiagnoseLowParallelism, CountsOnlyTheExecutorsAliveWhenTheStageStarted) {
  // 3 executors of 4 cores; 6 tasks of 1 GiB from +44 s. All three alive: 12 slots, so it fires.
  // Executors 2 and 3 removed at +20 s: 4 slots, fewer than the tasks. Executor 3 added at +40 s,
  // before the stage: counted.
  auto log_with = [](bool remove_two, bool third_late) {
    LogBuilder log;
    log.Executor("1", kT0 + 2'000).Executor("2", kT0 + 2'000);
    log.Executor("3", third_late ? kT0 + 40'000 : kT0 + 2'000);
    if (remove_two) log.ExecutorRemoved("2", kT0 + 20'000, "idle").ExecutorRemoved("3", kT0 + 20'000, "idle");
    log.JobStart(0, kT0 + 3'000, {0, 1});
    StageSpec compute;
    compute.stage_id = 0;
    compute.start_ms = kT0 + 3'000;
    compute.executors = {"1"};
    compute.slots = 4;
    StageSpec narrow;
    narrow.stage_id = 1;
    narrow.start_ms = log.Stage(compute) + 1'000;  // 16 tasks in 4 waves of 10 s: ends at +43 s
    NarrowStage(6, 100'000, kGiBytes)(narrow);
    narrow.executors = {"1"};
    const std::int64_t end = log.Stage(narrow);
    log.JobEnd(0, end + 5).AppEnd(end + 1'000);
    return log;
  };
  const auto all = Diagnose(log_with(false, false));
  const Finding* low = FindById(all, kLowParallelism);
  ASSERT_NE(low, nullptr) << Ids(all);
  EXPECT_EQ(Value(*low, "slots_alive"), 12);
  EXPECT_EQ(FindById(Diagnose(log_with(true, false)), kLowParallelism), nullptr);
  // Executor 3 added at +40 s, before the narrow stage's start at +44 s: counted.
  const auto late = Diagnose(log_with(false, true));
  ASSERT_NE(FindById(late, kLowParallelism), nullptr);
  EXPECT_EQ(Value(*FindById(late, kLowParallelism), "slots_alive"), 12);
}

TEST(DiagnoseLowParallelism, AnExecutorAddedAfterTheFirstTaskDoesNotCount) {
  // 1 executor of 4 cores at the stage's start, a second one 10 s into it: 4 slots, 4 tasks.
  LogBuilder log;
  log.Executor("1", kT0 + 2'000);
  log.JobStart(0, kT0 + 3'000, {0});
  StageSpec narrow;
  narrow.stage_id = 0;
  narrow.start_ms = kT0 + 3'000;
  NarrowStage(4, 100'000, kGiBytes)(narrow);
  narrow.executors = {"1"};
  log.Executor("2", kT0 + 13'000);
  const std::int64_t end = log.Stage(narrow);
  log.JobEnd(0, end + 5).AppEnd(end + 1'000);
  const auto findings = Diagnose(log);
  EXPECT_EQ(FindById(findings, kLowParallelism), nullptr) << Ids(findings);
}

TEST(DiagnoseLowParallelism, SlotsOtherStagesKeptBusyAreNotFree) {
  // Two jobs at once on 8 slots: a 6-task stage and a 2-task stage of 1 GiB tasks, side by side
  // for 100 s. Only 2 slots were free for the narrow stage: 2 tasks fill them.
  auto log_with = [](int other_tasks) {
    LogBuilder log;
    log.Executor("1", kT0 + 2'000).Executor("2", kT0 + 2'000);
    log.JobStart(0, kT0 + 3'000, {0}).JobStart(1, kT0 + 3'000, {1});
    StageSpec other;
    other.stage_id = 0;
    other.start_ms = kT0 + 3'000;
    other.tasks = other_tasks;
    other.task_ms = 100'000;
    other.figures.input_bytes = 64 * kMiBytes;
    StageSpec narrow;
    narrow.stage_id = 1;
    narrow.start_ms = kT0 + 3'000;
    NarrowStage(2, 100'000, kGiBytes)(narrow);
    const std::int64_t end = std::max(log.Stage(other), log.Stage(narrow));
    log.JobEnd(0, end).JobEnd(1, end).AppEnd(end + 1'000);
    return log;
  };
  const auto busy = Diagnose(log_with(6));
  EXPECT_EQ(FindById(busy, kLowParallelism), nullptr) << Ids(busy);
  // With 4 tasks beside it, 4 slots were free: it fires, and says how many were busy.
  const auto half = Diagnose(log_with(4));
  const Finding* low = FindById(half, kLowParallelism);
  ASSERT_NE(low, nullptr) << Ids(half);
  EXPECT_EQ(Value(*low, "free_slots"), 4);
  EXPECT_NEAR(Value(*low, "slots_busy_with_other_stages"), 4.0, 0.01);
}

TEST(DiagnoseLowParallelism, AWriteStageIsToldToRepartitionBeforeTheWrite) {
  const auto findings = Diagnose(HealthyApp([](StageSpec& stage) {
    NarrowStage(2, 100'000, kGiBytes)(stage);
    stage.name = "parquet at Job.scala:30";
    stage.figures.output_bytes = 512 * kMiBytes;
  }));
  const Finding* low = FindById(findings, kLowParallelism);
  ASSERT_NE(low, nullptr) << Ids(findings);
  EXPECT_EQ(low->fix.front().rfind("repartition before the write: df.repartition(16)", 0), 0u)
      << low->fix.front();
  // 2 tasks, fewer than spark.sql.shuffle.partitions (200): the count came from the query, so lowering
  // the setting to 16 is not advised.
  for (const std::string& fix : low->fix) {
    EXPECT_EQ(fix.find("spark.sql.shuffle.partitions=16"), std::string::npos) << fix;
  }
}

TEST(DiagnoseLowParallelism, ThresholdsComeFromTheRulesFile) {
  RuleThresholds thresholds;
  thresholds.low_parallelism.min_task_bytes = 2 * kGiBytes;
  thresholds.low_parallelism.min_duration_ratio = 100;
  EXPECT_EQ(FindById(Diagnose(HealthyApp(NarrowStage(2, 100'000, kGiBytes)), thresholds), kLowParallelism),
            nullptr);
  thresholds = RuleThresholds{};
  thresholds.low_parallelism.enabled = false;
  EXPECT_EQ(FindById(Diagnose(HealthyApp(NarrowStage(2, 100'000, kGiBytes)), thresholds), kLowParallelism),
            nullptr);
}

TEST(DiagnoseLowParallelism, LocalModeWithoutExecutorsIsNotJudged) {
  LogBuilder log;
  log.JobStart(0, kT0 + 1'000, {0});
  StageSpec narrow;
  narrow.stage_id = 0;
  narrow.start_ms = kT0 + 1'000;
  NarrowStage(2, 100'000, kGiBytes)(narrow);
  narrow.executors = {"driver"};
  const std::int64_t end = log.Stage(narrow);
  log.JobEnd(0, end).AppEnd(end + 1'000);
  const auto findings = Diagnose(log);
  EXPECT_EQ(FindById(findings, kLowParallelism), nullptr) << Ids(findings);
}

}  // namespace
}  // namespace sparktrace::diagnose
