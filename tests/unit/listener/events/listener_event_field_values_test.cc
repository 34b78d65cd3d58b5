// Field values of particular real events, checked by hand against the JSON lines of shared/data.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/result.h"
#include "listener/events/connect_job_tag.h"
#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::listener::events {
namespace {

// Every event of one log, in order (malformed lines as nullopt).
class LogEvents {
 public:
  static Result<LogEvents> Load(std::string_view relative_path) {
    const auto data_dir = test_data::FindDataDir();
    if (!data_dir) return Error{ErrorCode::kNotFound, test_data::DataDirMissingMessage()};
    std::string why;
    std::optional<std::string> content = test_data::ReadLogFile(*data_dir / relative_path, why);
    if (!content) return Error{ErrorCode::kIo, why};
    LogEvents log;
    EventParser parser;
    for (std::string_view line : test_data::SplitLines(*content)) {
      Result<SparkEvent> result = parser.Parse(line);
      log.events_.push_back(result.ok() ? std::optional<SparkEvent>(std::move(*result)) : std::nullopt);
    }
    return log;
  }

  // The event on 1-based line `line_number`, if it is an Event.
  template <typename Event>
  const Event* At(std::size_t line_number) const {
    if (line_number == 0 || line_number > events_.size() || !events_[line_number - 1]) return nullptr;
    return std::get_if<Event>(&*events_[line_number - 1]);
  }

  template <typename Event>
  std::vector<const Event*> All() const {
    std::vector<const Event*> found;
    for (const auto& event : events_) {
      if (event && std::holds_alternative<Event>(*event)) found.push_back(&std::get<Event>(*event));
    }
    return found;
  }

 private:
  std::vector<std::optional<SparkEvent>> events_;
};

// Skips every test when the shared data is absent, saying where it was looked for.
class ListenerEventFieldValues : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test_data::FindDataDir()) GTEST_SKIP() << test_data::DataDirMissingMessage();
  }
};

TEST_F(ListenerEventFieldValues, TaskEndMetricsOfSpark33) {
  const Result<LogEvents> events = LogEvents::Load("spark-events/local-1642039451826");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  // Line 44: task 14 of stage 2, a shuffle-reading task on the driver.
  const TaskEnd* task = events->At<TaskEnd>(44);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->stage_id, 2);
  EXPECT_EQ(task->stage_attempt_id, 0);
  EXPECT_EQ(task->reason, TaskEndReason::kSuccess);
  EXPECT_EQ(task->reason_detail, "");
  EXPECT_EQ(task->task_id, 14);
  EXPECT_EQ(task->index, 6);
  EXPECT_EQ(task->attempt, 0);
  EXPECT_EQ(task->executor_id, "driver");
  EXPECT_EQ(task->launch_time_ms, 1642039497056);
  EXPECT_EQ(task->finish_time_ms, 1642039497115);
  EXPECT_FALSE(task->speculative);
  EXPECT_FALSE(task->failed);
  EXPECT_FALSE(task->killed);
  ASSERT_TRUE(task->has_metrics);
  const TaskMetrics& metrics = task->metrics;
  EXPECT_EQ(metrics.executor_deserialize_time_ms, 4);
  EXPECT_EQ(metrics.executor_run_time_ms, 50);
  EXPECT_EQ(metrics.executor_cpu_time_ns, 21709000);
  EXPECT_EQ(metrics.peak_execution_memory_bytes, 0);
  EXPECT_EQ(metrics.result_size_bytes, 2848);
  EXPECT_EQ(metrics.jvm_gc_time_ms, 0);
  EXPECT_EQ(metrics.result_serialization_time_ms, 0);
  EXPECT_EQ(metrics.memory_bytes_spilled, 0);
  EXPECT_EQ(metrics.disk_bytes_spilled, 0);
  EXPECT_EQ(metrics.shuffle_remote_bytes_read, 0);
  EXPECT_EQ(metrics.shuffle_local_bytes_read, 376);
  EXPECT_EQ(metrics.shuffle_fetch_wait_time_ms, 0);
  EXPECT_EQ(metrics.shuffle_records_read, 10);
  EXPECT_EQ(metrics.shuffle_bytes_written, 59);
  EXPECT_EQ(metrics.shuffle_write_time_ns, 976166);
  EXPECT_EQ(metrics.shuffle_records_written, 1);
  EXPECT_EQ(metrics.input_bytes_read, 0);
  EXPECT_EQ(metrics.input_records_read, 0);
  EXPECT_EQ(metrics.output_bytes_written, 0);
  EXPECT_EQ(metrics.output_records_written, 0);
}

TEST_F(ListenerEventFieldValues, ExecutorChurnAndSpeculationOfSpark311) {
  const Result<LogEvents> events = LogEvents::Load("spark-events/application_1628109047826_1317105");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  const LogStart* start = events->At<LogStart>(1);
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->spark_version, "3.1.1.119");

  const ExecutorAdded* added = events->At<ExecutorAdded>(6);
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->executor_id, "1");
  EXPECT_EQ(added->time_ms, 1628637966675);
  EXPECT_EQ(added->host, "host-25253");
  EXPECT_EQ(added->total_cores, 1);
  EXPECT_FALSE(added->request_time_ms.has_value());  // 3.4+

  const std::vector<const ExecutorRemoved*> removed = events->All<ExecutorRemoved>();
  ASSERT_EQ(removed.size(), 6u);
  EXPECT_EQ(removed[0]->executor_id, "1");
  EXPECT_EQ(removed[0]->time_ms, 1628638118895);
  EXPECT_EQ(
      removed[0]->reason,
      "Container container_e18_1628109047826_1317105_01_000002 exited from explicit termination request.");

  // Line 49: the speculative copy of task index 3 killed because the original won.
  const TaskEnd* killed = events->At<TaskEnd>(49);
  ASSERT_NE(killed, nullptr);
  EXPECT_EQ(killed->reason, TaskEndReason::kTaskKilled);
  EXPECT_EQ(killed->reason_detail, "another attempt succeeded");
  EXPECT_EQ(killed->task_id, 4);
  EXPECT_EQ(killed->index, 3);
  EXPECT_EQ(killed->attempt, 1);
  EXPECT_TRUE(killed->speculative);
  EXPECT_TRUE(killed->killed);
}

TEST_F(ListenerEventFieldValues, JobStartPropertiesOfSpark31) {
  const Result<LogEvents> events = LogEvents::Load("spark-events/app-20200706201101-0003");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  // One SQL execution (id 0) spanning 3 jobs; the first two are broadcast exchanges in a job group.
  const JobStart* first = events->At<JobStart>(9);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->job_id, 0);
  EXPECT_EQ(first->submission_time_ms, 1594091478844);
  EXPECT_EQ(first->stage_ids, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(first->properties.sql_execution_id, 0);
  EXPECT_EQ(first->properties.job_group_id, "bb0234e5-4157-49a4-b40c-6d538d9f2ec8");
  EXPECT_FALSE(first->properties.sql_root_execution_id.has_value());  // 3.4+
  EXPECT_TRUE(first->properties.job_tags.empty());

  const JobStart* third = events->At<JobStart>(85);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->job_id, 2);
  EXPECT_EQ(third->submission_time_ms, 1594091481039);
  EXPECT_EQ(third->properties.sql_execution_id, 0);
  EXPECT_FALSE(third->properties.job_group_id.has_value());
}

TEST_F(ListenerEventFieldValues, FailedJobStageAndTaskOfSpark12) {
  const Result<LogEvents> events = LogEvents::Load("spark-events/local-1422981780767");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  // Line 59: task 19 of stage 2 threw; stage 2 and job 1 failed because of it.
  const TaskEnd* task = events->At<TaskEnd>(59);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->reason, TaskEndReason::kExceptionFailure);
  EXPECT_EQ(task->reason_detail, "java.lang.RuntimeException: got a 3, failing");
  EXPECT_EQ(task->task_id, 19);
  EXPECT_FALSE(task->metrics.executor_cpu_time_ns.has_value());  // 2.1+
  EXPECT_FALSE(task->metrics.peak_execution_memory_bytes.has_value());

  const JobEnd* job = events->At<JobEnd>(61);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->job_id, 1);
  EXPECT_EQ(job->result, JobResult::kFailed);
  EXPECT_FALSE(job->completion_time_ms.has_value());  // 1.2-era logs have none
  EXPECT_EQ(
      job->failure_message.rfind("Job aborted due to stage failure: Task 3 in stage 2.0 failed 1 times", 0),
      0u);
  EXPECT_LE(job->failure_message.size(), kMaxMessageBytes);

  bool saw_failed_stage = false;
  for (const StageCompleted* stage : events->All<StageCompleted>()) {
    if (!stage->stage.failure_reason) continue;
    saw_failed_stage = true;
    EXPECT_EQ(stage->stage.stage_id, 2);
    EXPECT_EQ(stage->stage.num_tasks, 8);
    EXPECT_EQ(stage->stage.submission_time_ms, 1422981786296);
    EXPECT_EQ(stage->stage.completion_time_ms, 1422981786347);
  }
  EXPECT_TRUE(saw_failed_stage);
}

TEST_F(ListenerEventFieldValues, PeakExecutionMemoryOfSpark23ComesFromTheAccumulable) {
  const Result<LogEvents> events = LogEvents::Load("spark-events/app-20180109111548-0000");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  // Line 17: task 1, "internal.metrics.peakExecutionMemory" update 896; no "Peak Execution Memory".
  const TaskEnd* task = events->At<TaskEnd>(17);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->task_id, 1);
  EXPECT_EQ(task->metrics.peak_execution_memory_bytes, 896);
  EXPECT_TRUE(task->metrics.executor_cpu_time_ns.has_value());
  // Line 14: a failed task without that accumulable: the peak stays unknown.
  const TaskEnd* failed = events->At<TaskEnd>(14);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, TaskEndReason::kExceptionFailure);
  EXPECT_FALSE(failed->metrics.peak_execution_memory_bytes.has_value());
}

TEST_F(ListenerEventFieldValues, ApplicationStartOfASecondAttempt) {
  // The file name differs from the App ID inside (README): read the id, never the name.
  const Result<LogEvents> events = LogEvents::Load("spark-events/local-1426633911242");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  const std::vector<const ApplicationStart*> starts = events->All<ApplicationStart>();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0]->app_id, "local-1426533911241");
  EXPECT_EQ(starts[0]->attempt_id, "2");
  EXPECT_EQ(starts[0]->time_ms, 1426633910242);
  EXPECT_EQ(starts[0]->spark_user, "irashid");
  EXPECT_EQ(starts[0]->app_name, "Spark shell");
}

TEST_F(ListenerEventFieldValues, BroadcastJobTagsOfSpark353AreNotConnectTags) {
  const Result<LogEvents> events = LogEvents::Load("spark-events-problems/nds_q72_dataproc_2_2.zstd");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  std::size_t tagged_jobs = 0;
  for (const JobStart* job : events->All<JobStart>()) {
    if (job->properties.job_tags.empty()) continue;
    ++tagged_jobs;
    ASSERT_EQ(job->properties.job_tags.size(), 1u);
    EXPECT_EQ(job->properties.job_tags[0].rfind("broadcast exchange (runId ", 0), 0u)
        << job->properties.job_tags[0];
    EXPECT_FALSE(ParseConnectJobTag(job->properties.job_tags[0]).has_value());
  }
  EXPECT_EQ(tagged_jobs, 8u);  // README-rapids: 8 of 49 jobs
  // Spark 3.5 SQL executions carry jobTags, empty here.
  const std::vector<const SqlExecutionStart*> executions = events->All<SqlExecutionStart>();
  ASSERT_FALSE(executions.empty());
  for (const SqlExecutionStart* execution : executions) {
    ASSERT_TRUE(execution->job_tags.has_value());
    EXPECT_TRUE(execution->job_tags->empty());
    EXPECT_EQ(execution->root_execution_id, execution->execution_id);
  }
}

TEST_F(ListenerEventFieldValues, SubExecutionsOfDatabricksShareARoot) {
  const Result<LogEvents> events = LogEvents::Load("spark-events-problems/db_subExecution_id.zstd");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  // README-rapids: SQL executions 5-10 have root execution id 5.
  std::size_t under_root_5 = 0;
  for (const SqlExecutionStart* execution : events->All<SqlExecutionStart>()) {
    EXPECT_FALSE(execution->job_tags.has_value());  // 3.3: no jobTags yet
    ASSERT_TRUE(execution->root_execution_id.has_value());
    if (execution->execution_id >= 5 && execution->execution_id <= 10) {
      EXPECT_EQ(*execution->root_execution_id, 5) << "execution " << execution->execution_id;
      ++under_root_5;
    }
  }
  EXPECT_EQ(under_root_5, 6u);
}

TEST_F(ListenerEventFieldValues, SpillOfTheAqeShuffleLogAddsUp) {
  const Result<LogEvents> events = LogEvents::Load("spark-events-problems/aqeshuffle_eventlog.zstd");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  std::int64_t memory_spilled = 0;
  std::int64_t disk_spilled = 0;
  std::int64_t gc_ms = 0;
  std::int64_t run_ms = 0;
  for (const TaskEnd* task : events->All<TaskEnd>()) {
    memory_spilled += task->metrics.memory_bytes_spilled;
    disk_spilled += task->metrics.disk_bytes_spilled;
    gc_ms += task->metrics.jvm_gc_time_ms;
    run_ms += task->metrics.executor_run_time_ms;
  }
  // README-rapids: spill 553,648,128 / 118,948,980 bytes; GC 5,994 of 41,388 ms run time.
  EXPECT_EQ(memory_spilled, 553648128);
  EXPECT_EQ(disk_spilled, 118948980);
  EXPECT_EQ(gc_ms, 5994);
  EXPECT_EQ(run_ms, 41388);
}

TEST_F(ListenerEventFieldValues, SqlExecutionsOfStructuredStreaming) {
  const Result<LogEvents> events = LogEvents::Load("spark-events/local-1596020211915");
  ASSERT_TRUE(events.ok()) << events.error().ToString();
  EXPECT_EQ(events->All<SqlExecutionStart>().size(), 24u);
  EXPECT_EQ(events->All<SqlExecutionEnd>().size(), 24u);
}

}  // namespace
}  // namespace sparktrace::listener::events
