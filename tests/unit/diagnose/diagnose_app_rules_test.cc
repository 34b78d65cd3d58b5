// The application-scoped rules (resource-wait-long, idle-executors, task-failures, the
// slow-spark-jobs summary) and DiagnoseOperation's scoping.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "tests/unit/diagnose/diagnose_test_lines.h"

namespace sparktrace::diagnose {
namespace {

using test_lines::AppShape;
using test_lines::EvidenceNamed;
using test_lines::FindById;
using test_lines::HealthyApp;
using test_lines::Ids;
using test_lines::kMiBytes;
using test_lines::kT0;
using test_lines::ModelOf;
using test_lines::StageSpec;
using test_lines::Task;

using test_lines::Diagnose;

// ---- resource-wait-long ----

TEST(DiagnoseAppRules, ResourceWaitFiresOnALongWaitForTheFirstExecutor) {
  auto log = HealthyApp({}, AppShape{.executors_at_ms = 90'000});
  log.Environment({{"spark.master", "k8s://https://k8s:443"}, {"spark.dynamicAllocation.enabled", "true"}});
  const auto findings = Diagnose(log);
  const Finding* wait = FindById(findings, kResourceWaitLong);
  ASSERT_NE(wait, nullptr) << Ids(findings);
  EXPECT_EQ(wait->scope.kind, ScopeKind::kApplication);
  EXPECT_EQ(wait->scope.app_id, "app-test");
  EXPECT_NEAR(wait->impact_seconds, 90.0, 1e-9);  // the wait itself
  EXPECT_EQ(EvidenceNamed(*wait, "startup_wait_ms")->value, 90'000);
  EXPECT_EQ(wait->severity, Severity::kCritical);  // 90 s of 132 s
  const bool kubernetes_fix = std::any_of(wait->fix.begin(), wait->fix.end(), [](const std::string& fix) {
    return fix.find("spark.kubernetes.allocation.batch.size") != std::string::npos;
  });
  EXPECT_TRUE(kubernetes_fix);
  EXPECT_EQ(wait->recipe, "docs/recipes/troubleshoot/resource-wait-long.md");
}

TEST(DiagnoseAppRules, ResourceWaitNearMissShortStartup) {
  const auto findings = Diagnose(HealthyApp({}, AppShape{.executors_at_ms = 20'000}));  // under 30 s
  EXPECT_EQ(FindById(findings, kResourceWaitLong), nullptr) << Ids(findings);
}

// ---- idle-executors ----

TEST(DiagnoseAppRules, IdleExecutorsFiresOnALongDriverSideGap) {
  const auto findings = Diagnose(HealthyApp({}, AppShape{.end_after_ms = 300'000}));
  const Finding* idle = FindById(findings, kIdleExecutors);
  ASSERT_NE(idle, nullptr) << Ids(findings);
  // 8 slots alive from +2 s to the end at +343.02 s, 320 slot-seconds busy.
  const double slot_ms = 8.0 * 341'020;
  EXPECT_NEAR(EvidenceNamed(*idle, "slot_ms")->value, slot_ms, 1.0);
  EXPECT_NEAR(EvidenceNamed(*idle, "busy_slot_ms")->value, 320'000, 1.0);
  EXPECT_GT(EvidenceNamed(*idle, "driver_gap_idle_slot_ms")->value,
            EvidenceNamed(*idle, "tail_idle_slot_ms")->value);
  // Idle slot time as wall time of the average allocation (slot_ms / wall slots).
  EXPECT_NEAR(idle->impact_seconds, (slot_ms - 320'000) / (slot_ms / 343'020) / 1000, 0.01);
  EXPECT_EQ(idle->recipe, "docs/recipes/troubleshoot/slow-spark-jobs.md#idle-executors");
}

// A quarter of the slot time with no stage at all, in a busy application whose total idle share
// stays under one half: the driver kept the executors waiting, which tails and waves never do.
TEST(DiagnoseAppRules, IdleExecutorsFiresOnDriverGapsUnderTheTotalShare) {
  const auto findings =
      Diagnose(HealthyApp([](StageSpec& stage) { stage.tasks = 200; }, AppShape{.end_after_ms = 100'000}));
  const Finding* idle = FindById(findings, kIdleExecutors);
  ASSERT_NE(idle, nullptr) << Ids(findings);
  const Evidence* total = EvidenceNamed(*idle, "idle_share");
  const Evidence* gaps = EvidenceNamed(*idle, "driver_gap_share");
  ASSERT_TRUE(total && gaps);
  EXPECT_LT(total->value, *total->threshold) << "not the total share's finding";
  EXPECT_GE(gaps->value, *gaps->threshold);
  EXPECT_NEAR(gaps->value, 8.0 * 101 / (8.0 * 371.03), 0.01);  // the 1 s before the job, the 100 s after
}

// One single-task stage of 200 s after a full-width one: the other slots wait on it. Total idle
// stays under one half, and there is no driver gap to speak of.
TEST(DiagnoseAppRules, IdleExecutorsFiresWhileANarrowStageRuns) {
  test_lines::LogBuilder log;
  log.Executor("1", kT0 + 2'000).Executor("2", kT0 + 2'000);
  log.JobStart(0, kT0 + 3'000, {0, 1});
  StageSpec wide;
  wide.start_ms = kT0 + 3'000;
  wide.tasks = 400;
  StageSpec narrow;
  narrow.stage_id = 1;
  narrow.name = "coalesce at Job.scala:40";
  narrow.start_ms = log.Stage(wide);
  narrow.tasks = 1;
  narrow.task_ms = 200'000;
  const std::int64_t end = log.Stage(narrow);
  log.JobEnd(0, end + 5).AppEnd(end + 1'000);
  const auto findings = Diagnose(log);
  const Finding* idle = FindById(findings, kIdleExecutors);
  ASSERT_NE(idle, nullptr) << Ids(findings);
  EXPECT_LT(EvidenceNamed(*idle, "idle_share")->value, 0.5);
  EXPECT_LT(EvidenceNamed(*idle, "driver_gap_share")->value, 0.15);
  const Evidence* narrow_share = EvidenceNamed(*idle, "narrow_stage_idle_share");
  ASSERT_NE(narrow_share, nullptr);
  EXPECT_GE(narrow_share->value, *narrow_share->threshold);
}

TEST(DiagnoseAppRules, IdleExecutorsNearMissWithoutExecutorEvents) {
  // The same gap in a log without ExecutorAdded (local mode): executors unknown, no finding.
  test_lines::LogBuilder log;
  log.JobStart(0, kT0 + 1'000, {0});
  StageSpec stage;
  stage.start_ms = kT0 + 1'000;
  stage.executors = {"driver"};
  const std::int64_t end = log.Stage(stage);
  log.JobEnd(0, end).AppEnd(end + 300'000);
  EXPECT_EQ(FindById(Diagnose(log), kIdleExecutors), nullptr);
}

// ---- task-failures ----

TEST(DiagnoseAppRules, TaskFailuresGroupsByReasonAndAFailedJobIsCritical) {
  auto log = HealthyApp([](StageSpec& stage) {
    stage.adjust = [](int index, Task& task) {
      if (index < 2) {
        task.failure_reason =
            R"({"Reason":"ExceptionFailure","Class Name":"java.lang.IllegalStateException",)"
            R"("Description":"bad row 17","Stack Trace":[]})";
      } else if (index == 2) {
        task.failure_reason = R"({"Reason":"FetchFailed","Message":"Failed to connect to h:7337"})";
      }
    };
  });
  log.JobEnd(0, kT0 + 50'000, /*succeeded=*/false);
  const auto findings = Diagnose(log);
  const Finding* failures = FindById(findings, kTaskFailures);
  ASSERT_NE(failures, nullptr) << Ids(findings);
  EXPECT_EQ(failures->severity, Severity::kCritical);
  EXPECT_EQ(EvidenceNamed(*failures, "failed_tasks")->value, 3);
  ASSERT_NE(EvidenceNamed(*failures, "tasks:ExceptionFailure java.lang.IllegalStateException"), nullptr);
  EXPECT_EQ(EvidenceNamed(*failures, "tasks:ExceptionFailure java.lang.IllegalStateException")->value, 2);
  EXPECT_EQ(EvidenceNamed(*failures, "sample:ExceptionFailure java.lang.IllegalStateException")->text,
            "java.lang.IllegalStateException: bad row 17");
  EXPECT_EQ(EvidenceNamed(*failures, "tasks:FetchFailed")->value, 1);
  EXPECT_EQ(EvidenceNamed(*failures, "failed_jobs")->value, 1);
  EXPECT_EQ(failures->recipe, "docs/recipes/troubleshoot/slow-spark-jobs.md#task-failures");
}

TEST(DiagnoseAppRules, TaskFailuresNearMissKilledSpeculativeCopyIsNoFailure) {
  const auto findings = Diagnose(HealthyApp([](StageSpec& stage) {
    stage.adjust = [](int index, Task& task) {
      if (index == 0)
        task.failure_reason = R"({"Reason":"TaskKilled","Kill Reason":"another attempt succeeded"})";
    };
  }));
  EXPECT_EQ(FindById(findings, kTaskFailures), nullptr) << Ids(findings);
}

// ---- slow-spark-jobs ----

TEST(DiagnoseAppRules, SummaryNamesThePhaseJobAndStagesOnlyWhenSomethingFired) {
  EXPECT_EQ(FindById(Diagnose(HealthyApp()), kSlowSparkJobs), nullptr);
  const auto findings = Diagnose(HealthyApp({}, AppShape{.executors_at_ms = 90'000}));
  const Finding* summary = FindById(findings, kSlowSparkJobs);
  ASSERT_NE(summary, nullptr) << Ids(findings);
  EXPECT_EQ(&findings.front(), summary);
  EXPECT_NE(summary->title.find("mostly resource_wait"), std::string::npos) << summary->title;
  EXPECT_NE(summary->title.find("longest job 0"), std::string::npos) << summary->title;
  ASSERT_NE(EvidenceNamed(*summary, "longest_stage_1"), nullptr);
  EXPECT_EQ(summary->recipe, "docs/recipes/troubleshoot/slow-spark-jobs.md");
  ASSERT_FALSE(summary->related.empty());
  EXPECT_EQ(summary->related.front().relation, "summarises");
}

// ---- operations ----

TEST(DiagnoseAppRules, OperationFindingsCoverOnlyThatOperationsStages) {
  const std::string skewed_tag = listener::correlate::test_lines::OperationTag("u", "s", "op-skewed");
  const std::string fine_tag = listener::correlate::test_lines::OperationTag("u", "s", "op-fine");
  test_lines::LogBuilder log;
  log.Executor("1", kT0 + 1'000).Executor("2", kT0 + 1'000);
  log.Line(listener::correlate::test_lines::ConnectOperation("Started", skewed_tag, "op-skewed", kT0 + 2'000,
                                                             "s", "u"));
  log.JobStart(0, kT0 + 2'000, {0}, {skewed_tag});
  StageSpec skewed;
  skewed.start_ms = kT0 + 2'000;
  skewed.figures.shuffle_read_bytes = 32 * kMiBytes;
  skewed.adjust = [](int index, Task& task) {
    if (index != 0) return;
    task.finish_ms = task.launch_ms + 120'000;
    task.shuffle_read_bytes = 640 * kMiBytes;
  };
  std::int64_t end = log.Stage(skewed);
  log.JobEnd(0, end);
  log.Line(listener::correlate::test_lines::ConnectOperation("Finished", skewed_tag, "op-skewed", end + 10));
  log.Line(
      listener::correlate::test_lines::ConnectOperation("Started", fine_tag, "op-fine", end + 100, "s", "u"));
  log.JobStart(1, end + 100, {1}, {fine_tag});
  StageSpec fine;
  fine.stage_id = 1;
  fine.start_ms = end + 100;
  end = log.Stage(fine);
  log.JobEnd(1, end);
  log.Line(listener::correlate::test_lines::ConnectOperation("Finished", fine_tag, "op-fine", end + 10));
  log.AppEnd(end + 100);
  const listener::correlate::ApplicationModel model = ModelOf(log);

  const std::vector<Finding> fine_findings =
      DiagnoseOperation(model, *model.FindOperation("op-fine"), RuleThresholds{});
  EXPECT_TRUE(fine_findings.empty()) << Ids(fine_findings);
  const std::vector<Finding> skewed_findings =
      DiagnoseOperation(model, *model.FindOperation("op-skewed"), RuleThresholds{});
  const Finding* skew = FindById(skewed_findings, kDataSkew);
  ASSERT_NE(skew, nullptr) << Ids(skewed_findings);
  EXPECT_EQ(skew->scope.operation_id, "op-skewed");
  EXPECT_EQ(skew->scope.stage_id, 0);
  EXPECT_EQ(FindById(skewed_findings, kIdleExecutors), nullptr);  // not judged per operation
  for (const Finding& finding : skewed_findings) EXPECT_EQ(finding.scope.operation_id, "op-skewed");
}

}  // namespace
}  // namespace sparktrace::diagnose
