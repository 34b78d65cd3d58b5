// The simulated event log joins and measures in listener/correlate as the scenario says: operation
// ↔ jobs ↔ stages by Spark's job tags (3.5.0/3.5.1 order too), interleaved sessions kept apart,
// and each injected problem visible in the figures a diagnosis reads, against its clean twin
// (same seed, same ids).

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "listener/correlate/phases.h"
#include "tests/unit/sim/eventlog/sim_eventlog_test_support.h"

namespace sparktrace::sim::eventlog {
namespace {

using listener::correlate::ApplicationPhases;
using listener::correlate::OperationPhases;
using listener::correlate::Phase;
using testing::GenerateAndParse;
using testing::LogOptions;
using testing::ParsedLog;
using testing::Share;
using testing::StageTotals;
using testing::Totals;

TEST(SimEventLogModel, OperationsJoinTheirJobsAndStages) {
  const ParsedLog parsed = GenerateAndParse(LogOptions("clean", 1.0));
  const auto& model = parsed.model;
  ASSERT_EQ(model.operations().size(), 6u);
  EXPECT_EQ(model.jobs().size(), 12u);
  for (const OperationSpec& spec : parsed.log.operations) {
    SCOPED_TRACE(spec.operation_id);
    const listener::correlate::ConnectOperationRecord* operation = model.FindOperation(spec.operation_id);
    ASSERT_NE(operation, nullptr);
    EXPECT_EQ(operation->job_tag, "SparkConnect_OperationTag_User_airflow_Session_" + spec.session_id +
                                      "_Operation_" + spec.operation_id);
    EXPECT_EQ(operation->session_id, spec.session_id);
    EXPECT_EQ(operation->user_id, "airflow");
    ASSERT_TRUE(operation->started_ms && operation->analyzed_ms && operation->ready_ms &&
                operation->finished_ms && operation->closed_ms);
    EXPECT_LT(*operation->started_ms, *operation->analyzed_ms);
    EXPECT_LT(*operation->ready_ms, *operation->finished_ms);
    EXPECT_LT(*operation->finished_ms, *operation->closed_ms);
    const std::vector<std::int32_t> jobs = model.JobsOfOperation(spec.operation_id);
    ASSERT_EQ(jobs.size(), 2u);
    for (std::int32_t job_id : jobs) {
      const listener::correlate::JobRecord& job = model.jobs().at(job_id);
      EXPECT_EQ(job.connect_operation_id, spec.operation_id);
      EXPECT_EQ(job.status, listener::correlate::JobStatus::kSucceeded);
      ASSERT_TRUE(job.sql_execution_id.has_value());
      EXPECT_EQ(model.sql_executions().at(*job.sql_execution_id).connect_operation_id, spec.operation_id);
      // Each job ran one stage; the second lists the first's stage again (skipped, not re-run).
      const auto stages = model.StagesOfJob(job_id);
      ASSERT_EQ(stages.size(), 1u);
      EXPECT_TRUE(stages[0]->completed);
      EXPECT_EQ(stages[0]->tasks.tasks_ended, stages[0]->num_tasks);
      EXPECT_GE(*stages[0]->submission_ms, *job.submission_ms);
      EXPECT_LE(*stages[0]->completion_ms, *job.completion_ms);
    }
    EXPECT_EQ(model.jobs().at(jobs[1]).stage_ids.size(), 2u);
    // A write's result stage writes output; a read's does not.
    const auto result_stage = model.StagesOfJob(jobs[1])[0];
    EXPECT_EQ(result_stage->tasks.WritesOutput(), spec.write);
    const auto phases = OperationPhases(model, *operation);
    ASSERT_TRUE(phases.has_value());
    EXPECT_GT(phases->TotalMs(Phase::kCompute), 0);
    EXPECT_EQ(phases->TotalMs(Phase::kIoWrite) > 0, spec.write);
  }
}

TEST(SimEventLogModel, Spark350TagsSwapUserAndSessionAndStillJoin) {
  OfflineLogOptions options = LogOptions("clean", 1.0, 7, 2);
  options.app.spark_version = "3.5.0";
  const ParsedLog parsed = GenerateAndParse(options);
  ASSERT_EQ(parsed.model.operations().size(), 2u);
  for (const OperationSpec& spec : parsed.log.operations) {
    const listener::correlate::ConnectOperationRecord* operation =
        parsed.model.FindOperation(spec.operation_id);
    ASSERT_NE(operation, nullptr);
    EXPECT_EQ(operation->job_tag, "SparkConnect_OperationTag_User_" + spec.session_id +
                                      "_Session_airflow_Operation_" + spec.operation_id);
    EXPECT_EQ(operation->user_id, "airflow");
    EXPECT_EQ(operation->session_id, spec.session_id);
    EXPECT_EQ(parsed.model.JobsOfOperation(spec.operation_id).size(), 2u);
  }
}

TEST(SimEventLogModel, InterleavedSessionsKeepTheirJobsApart) {
  OfflineLogOptions options = LogOptions("clean", 1.0, 11, 6);
  options.sessions = 2;
  const ParsedLog parsed = GenerateAndParse(options);
  const auto& model = parsed.model;
  ASSERT_EQ(model.operations().size(), 6u);
  std::set<std::string> sessions;
  std::size_t jobs = 0;
  bool overlapping = false;
  for (const auto& [id, operation] : model.operations()) {
    sessions.insert(operation.session_id);
    jobs += model.JobsOfOperation(id).size();
    for (const auto& [other_id, other] : model.operations()) {
      if (other_id == id || other.session_id == operation.session_id) continue;
      if (*operation.started_ms < *other.closed_ms && *other.started_ms < *operation.closed_ms)
        overlapping = true;
    }
    // An operation's phases count only its own stages: its compute time fits in its jobs.
    const auto phases = OperationPhases(model, operation);
    ASSERT_TRUE(phases.has_value());
    std::int64_t own_stage_ms = 0;
    for (std::int32_t job_id : model.JobsOfOperation(id)) {
      for (const auto* stage : model.StagesOfJob(job_id))
        own_stage_ms += *stage->completion_ms - *stage->submission_ms;
    }
    EXPECT_LE(phases->TotalMs(Phase::kCompute) + phases->TotalMs(Phase::kIoWrite), own_stage_ms);
  }
  EXPECT_EQ(sessions.size(), 2u);
  EXPECT_TRUE(overlapping) << "the two sessions' operations should run at the same time";
  EXPECT_EQ(jobs, model.jobs().size());
  EXPECT_EQ(parsed.events.at("ConnectSession"), 2);
}

TEST(SimEventLogModel, CleanResourceWaitIsTheFirstExecutorsArrival) {
  const ParsedLog parsed = GenerateAndParse(LogOptions("clean", 1.0));
  const auto phases = ApplicationPhases(parsed.model);
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->TotalMs(Phase::kResourceWait), parsed.log.knobs.first_executor_wait_ms);
  EXPECT_GE(parsed.log.knobs.first_executor_wait_ms, 2000);
  EXPECT_LE(parsed.log.knobs.first_executor_wait_ms, 4000);
}

TEST(SimEventLogModel, SlowExecutorAllocationWaitsExactlyTheConfiguredTime) {
  for (double strength : {0.25, 1.0}) {
    SCOPED_TRACE(strength);
    const ParsedLog parsed = GenerateAndParse(LogOptions("slow-executor-allocation", strength));
    const ScenarioKnobs& knobs = parsed.log.knobs;
    EXPECT_EQ(knobs.reacquire_wait_ms, static_cast<std::int64_t>(strength * 90'000));
    const auto app = ApplicationPhases(parsed.model);
    ASSERT_TRUE(app.has_value());
    // Before the first executor, and the second operation's pending tasks after dynamic
    // allocation let every executor go.
    EXPECT_EQ(app->TotalMs(Phase::kResourceWait), knobs.first_executor_wait_ms + knobs.reacquire_wait_ms);
    const auto* second = parsed.model.FindOperation(parsed.log.operations[1].operation_id);
    ASSERT_NE(second, nullptr);
    const auto operation = OperationPhases(parsed.model, *second);
    ASSERT_TRUE(operation.has_value());
    EXPECT_EQ(operation->TotalMs(Phase::kResourceWait), knobs.reacquire_wait_ms);
    int removed = 0;
    for (const auto& executor : parsed.model.executors()) removed += executor.removed_ms ? 1 : 0;
    EXPECT_EQ(removed, 4);
  }
}

TEST(SimEventLogModel, SlowWritesRaiseTheIoWriteShare) {
  const ParsedLog clean = GenerateAndParse(LogOptions("clean", 1.0));
  const ParsedLog slow = GenerateAndParse(LogOptions("slow-writes", 1.0));
  const double clean_share = Share(*ApplicationPhases(clean.model), Phase::kIoWrite);
  const double slow_share = Share(*ApplicationPhases(slow.model), Phase::kIoWrite);
  EXPECT_GT(slow_share, clean_share * 2) << clean_share << " vs " << slow_share;
  // The write operations now spend most of their time writing; their clean twins do not.
  const auto write_share = [](const ParsedLog& parsed) {
    std::int64_t writing = 0;
    std::int64_t total = 0;
    for (const OperationSpec& spec : parsed.log.operations) {
      if (!spec.write) continue;
      const auto phases = OperationPhases(parsed.model, *parsed.model.FindOperation(spec.operation_id));
      writing += phases->TotalMs(Phase::kIoWrite);
      total += phases->window.end_ms - phases->window.start_ms;
    }
    return static_cast<double>(writing) / static_cast<double>(total);
  };
  EXPECT_GT(write_share(slow), 0.6);
  EXPECT_LT(write_share(clean), 0.45);
  bool classic_committer = false;
  for (const LogLine& line : slow.log.lines) {
    if (line.text.find(R"("spark.hadoop.fs.s3a.committer.name":"file")") != std::string::npos)
      classic_committer = true;
  }
  EXPECT_TRUE(classic_committer);
}

// max / p50 of the successful task durations of the stage attempt where it is largest.
double WorstSkew(const listener::correlate::ApplicationModel& model) {
  double worst = 0;
  for (const auto& [key, stage] : model.stages()) {
    const auto p50 = stage.tasks.successful_durations.Quantile(0.5);
    if (!p50 || *p50 <= 0 || stage.tasks.successful_durations.count() < 8) continue;
    worst = std::max(worst, static_cast<double>(stage.tasks.successful_durations.max_ms()) / *p50);
  }
  return worst;
}

TEST(SimEventLogModel, SkewMakesAFewTasksFarLongerThanTheMedian) {
  const ParsedLog clean = GenerateAndParse(LogOptions("clean", 1.0));
  const ParsedLog skewed = GenerateAndParse(LogOptions("skew", 1.0));
  EXPECT_LT(WorstSkew(clean.model), 2.5);
  EXPECT_GT(WorstSkew(skewed.model), 8.0);
  EXPECT_GT(Totals(skewed.model).shuffle_read_bytes, Totals(clean.model).shuffle_read_bytes);
}

TEST(SimEventLogModel, SpillIsLargeRelativeToTheData) {
  const StageTotals clean = Totals(GenerateAndParse(LogOptions("clean", 1.0)).model);
  const StageTotals spill = Totals(GenerateAndParse(LogOptions("spill", 1.0)).model);
  EXPECT_EQ(clean.memory_spilled, 0);
  EXPECT_EQ(clean.disk_spilled, 0);
  EXPECT_GT(spill.memory_spilled, spill.shuffle_read_bytes + spill.input_bytes / 2);
  EXPECT_GT(spill.disk_spilled, 0);
  const StageTotals weak = Totals(GenerateAndParse(LogOptions("spill", 0.2)).model);
  EXPECT_GT(weak.memory_spilled, 0);
  EXPECT_LT(weak.memory_spilled, spill.memory_spilled);
}

TEST(SimEventLogModel, GcPressureIsALargeShareOfRunTime) {
  const StageTotals clean = Totals(GenerateAndParse(LogOptions("clean", 1.0)).model);
  const StageTotals gc = Totals(GenerateAndParse(LogOptions("gc-pressure", 1.0)).model);
  const double clean_share = static_cast<double>(clean.gc_ms) / static_cast<double>(clean.run_ms);
  const double gc_share = static_cast<double>(gc.gc_ms) / static_cast<double>(gc.run_ms);
  EXPECT_LT(clean_share, 0.06);
  EXPECT_GT(gc_share, 0.35);
}

TEST(SimEventLogModel, ShuffleBottleneckRaisesTheFetchWaitShare) {
  const StageTotals clean = Totals(GenerateAndParse(LogOptions("clean", 1.0)).model);
  const StageTotals slow = Totals(GenerateAndParse(LogOptions("shuffle-bottleneck", 1.0)).model);
  EXPECT_LT(static_cast<double>(clean.fetch_wait_ms) / static_cast<double>(clean.run_ms), 0.03);
  EXPECT_GT(static_cast<double>(slow.fetch_wait_ms) / static_cast<double>(slow.run_ms), 0.2);
}

TEST(SimEventLogModel, IdleExecutorsLeaveLongIdleGaps) {
  const auto clean = ApplicationPhases(GenerateAndParse(LogOptions("clean", 1.0)).model);
  const auto idle = ApplicationPhases(GenerateAndParse(LogOptions("idle-executors", 1.0)).model);
  EXPECT_LT(Share(*clean, Phase::kIdle), 0.3);
  EXPECT_GT(Share(*idle, Phase::kIdle), 0.7);
}

TEST(SimEventLogModel, FailingTasksAreRetriedAndAnExecutorIsKilled) {
  const ParsedLog parsed = GenerateAndParse(LogOptions("failing-tasks", 0.6));
  const StageTotals totals = Totals(parsed.model);
  EXPECT_GT(totals.failed_tasks, 3);
  for (const auto& [id, operation] : parsed.model.operations())
    EXPECT_TRUE(operation.finished_ms.has_value());
  for (const auto& [id, job] : parsed.model.jobs())
    EXPECT_EQ(job.status, listener::correlate::JobStatus::kSucceeded);
  int killed = 0;
  for (const auto& executor : parsed.model.executors()) {
    if (executor.removed_reason.find("exit code 137") != std::string::npos) ++killed;
  }
  // One per operation, except the first: its stage starts before any executor has arrived.
  EXPECT_EQ(killed, 5);
  bool out_of_memory = false;
  for (const LogLine& line : parsed.log.lines) {
    if (line.text.find(R"("Class Name":"java.lang.OutOfMemoryError")") != std::string::npos)
      out_of_memory = true;
  }
  EXPECT_TRUE(out_of_memory);
  EXPECT_EQ(Totals(GenerateAndParse(LogOptions("clean", 1.0)).model).failed_tasks, 0);
}

TEST(SimEventLogModel, SevereFailingTasksFailTheSecondOperation) {
  const ParsedLog parsed = GenerateAndParse(LogOptions("failing-tasks", 1.0));
  const auto* failed = parsed.model.FindOperation(parsed.log.operations[1].operation_id);
  ASSERT_NE(failed, nullptr);
  EXPECT_TRUE(failed->failed_ms.has_value());
  EXPECT_FALSE(failed->finished_ms.has_value());
  EXPECT_NE(failed->error_message.find("failed 4 times"), std::string::npos) << failed->error_message;
  EXPECT_NE(failed->error_message.find("java.lang.OutOfMemoryError"), std::string::npos);
  const auto jobs = parsed.model.JobsOfOperation(failed->operation_id);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(parsed.model.jobs().at(jobs[1]).status, listener::correlate::JobStatus::kFailed);
  int failed_operations = 0;
  for (const auto& [id, operation] : parsed.model.operations())
    failed_operations += operation.failed_ms ? 1 : 0;
  EXPECT_EQ(failed_operations, 1);
}

TEST(SimEventLogModel, StrengthZeroIsTheCleanLog) {
  const GeneratedLog clean = GenerateLog(LogOptions("clean", 1.0, 3));
  for (Problem problem : kAllProblems) {
    SCOPED_TRACE(ProblemName(problem));
    const GeneratedLog zero = GenerateLog(LogOptions(ProblemName(problem), 0.0, 3));
    ASSERT_EQ(zero.lines.size(), clean.lines.size());
    for (std::size_t i = 0; i < clean.lines.size(); ++i)
      ASSERT_EQ(zero.lines[i].text, clean.lines[i].text) << i;
  }
}

TEST(SimEventLogModel, StrongerIsWorse) {
  // Monotone in strength: a corpus can sweep it.
  double previous_gc = 0;
  std::int64_t previous_wait = 0;
  for (double strength : {0.0, 0.25, 0.5, 1.0}) {
    const StageTotals gc = Totals(GenerateAndParse(LogOptions("gc-pressure", strength)).model);
    const double share = static_cast<double>(gc.gc_ms) / static_cast<double>(gc.run_ms);
    EXPECT_GT(share, previous_gc);
    previous_gc = share;
    const auto phases =
        ApplicationPhases(GenerateAndParse(LogOptions("slow-executor-allocation", strength)).model);
    EXPECT_GT(phases->TotalMs(Phase::kResourceWait), previous_wait);
    previous_wait = phases->TotalMs(Phase::kResourceWait);
  }
}

}  // namespace
}  // namespace sparktrace::sim::eventlog
