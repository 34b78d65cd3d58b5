// What the model keeps for the diagnosis rules: the allow-listed environment properties (never a
// secret), stage names, failures grouped by reason with out-of-memory detection, per-task bytes,
// shuffle write time and per-executor task time.

#include <gtest/gtest.h>

#include <string>

#include "listener/correlate/application_model.h"
#include "listener/correlate/task_statistics.h"
#include "listener/events/kept_properties.h"
#include "tests/unit/diagnose/diagnose_test_lines.h"

namespace sparktrace::diagnose {
namespace {

using test_lines::kMiBytes;
using test_lines::kT0;

TEST(DiagnoseModelInputs, EnvironmentKeepsTheAllowListAndNeverASecret) {
  test_lines::LogBuilder log;
  log.Environment({{"spark.sql.shuffle.partitions", "400"},
                   {"spark.sql.adaptive.enabled", "true"},
                   {"spark.hadoop.fs.s3a.committer.name", "magic"},
                   {"spark.hadoop.fs.s3a.secret.key", "SECRET1"},
                   {"spark.hadoop.fs.s3a.access.key", "AKIA"},
                   {"spark.executor.extraJavaOptions", "-Dpassword=x"},
                   {"spark.kubernetes.authenticate.driver.oauthToken", "tok"},
                   {"spark.driver.host", "10.0.0.1"},
                   {"spark.executor.memory", "8g"}},
                  {{"fs.s3a.fast.upload.buffer", "bytebuffer"},
                   {"fs.s3a.session.token", "tok"},
                   {"fs.s3a.server-side-encryption.key", "k"},
                   {"dfs.replication", "3"}});
  const auto model = test_lines::ModelOf(log);
  EXPECT_EQ(model.Property("spark.sql.shuffle.partitions"), "400");
  EXPECT_EQ(model.Property("spark.executor.memory"), "8g");
  EXPECT_EQ(model.Property("fs.s3a.committer.name"), "magic");  // through spark.hadoop.
  EXPECT_EQ(model.Property("fs.s3a.fast.upload.buffer"), "bytebuffer");
  for (const auto& [key, value] : model.properties()) {
    EXPECT_NE(value, "SECRET1") << key;
    EXPECT_NE(value, "AKIA") << key;
    EXPECT_NE(value, "tok") << key;
    EXPECT_NE(value, "k") << key;
  }
  EXPECT_FALSE(model.Property("spark.executor.extraJavaOptions").has_value());
  EXPECT_FALSE(model.Property("spark.driver.host").has_value());
  EXPECT_FALSE(model.Property("dfs.replication").has_value());
  EXPECT_EQ(model.properties().size(), 5u);
}

TEST(DiagnoseModelInputs, KeptPropertiesTable) {
  EXPECT_TRUE(listener::events::IsKeptProperty("spark.dynamicAllocation.minExecutors"));
  EXPECT_TRUE(listener::events::IsKeptProperty("mapreduce.fileoutputcommitter.algorithm.version"));
  EXPECT_TRUE(listener::events::IsKeptProperty("fs.s3a.multipart.size"));
  EXPECT_FALSE(listener::events::IsKeptProperty("fs.s3a.access.key"));
  EXPECT_FALSE(listener::events::IsKeptProperty("fs.s3a.bucket.b.secret.key"));
  EXPECT_FALSE(listener::events::IsKeptProperty("spark.hadoop.fs.s3a.aws.credentials.provider"));
  EXPECT_FALSE(listener::events::IsKeptProperty("spark.executor.extraClassPath"));
  EXPECT_FALSE(listener::events::IsKeptProperty("spark.app.name"));
}

TEST(DiagnoseModelInputs, LooksLikeOutOfMemory) {
  for (const char* message :
       {"java.lang.OutOfMemoryError: Java heap space",
        "Container killed by YARN for exceeding memory limits. 5.5 GB of 5.5 GB used",
        "Container from a bad node: ... Exit code is 137",
        "The executor with id 3 exited with exit code 143.", "exitCode=137 OOMKilled",
        "com.nvidia.spark.rapids.jni.GpuSplitAndRetryOOM: GPU OutOfMemory: could not split"}) {
    EXPECT_TRUE(listener::correlate::LooksLikeOutOfMemory(message)) << message;
  }
  for (const char* message : {"Executor killed by driver.", "java.io.IOException: No space left on device",
                              "exit code 1", "Task 137 failed", ""}) {
    EXPECT_FALSE(listener::correlate::LooksLikeOutOfMemory(message)) << message;
  }
}

TEST(DiagnoseModelInputs, StageFiguresForTheRules) {
  test_lines::LogBuilder log;
  log.Executor("1", kT0 + 1'000).Executor("2", kT0 + 1'000);
  test_lines::StageSpec stage;
  stage.name = "save at Writer.scala:7";
  stage.start_ms = kT0 + 2'000;
  stage.tasks = 4;
  stage.figures.input_bytes = 10 * kMiBytes;
  stage.figures.shuffle_write_time_ns = 1'500'000;
  stage.adjust = [](int index, test_lines::Task& task) {
    if (index == 0) task.shuffle_read_bytes = 30 * kMiBytes;
    if (index == 1) {
      task.failure_reason = R"({"Reason":"ExecutorLostFailure","Executor ID":"2","Exit Caused By App":true,)"
                            R"("Loss Reason":"Container killed by YARN for exceeding memory limits"})";
    }
    if (index == 2) {
      task.failure_reason = R"({"Reason":"ExecutorLostFailure","Executor ID":"2","Loss Reason":"node lost"})";
    }
  };
  log.Stage(stage);
  const auto model = test_lines::ModelOf(log);
  ASSERT_EQ(model.stages().size(), 1u);
  const listener::correlate::StageAttemptRecord& record = model.stages().begin()->second;
  EXPECT_EQ(record.name, "save at Writer.scala:7");
  const listener::correlate::TaskStatistics& tasks = record.tasks;
  EXPECT_EQ(tasks.shuffle_write_time_ns, 4 * 1'500'000);
  EXPECT_EQ(tasks.successful_task_bytes.count(), 2);  // the two successful tasks
  EXPECT_EQ(tasks.successful_task_bytes.max_ms(), 40 * kMiBytes);
  EXPECT_EQ(tasks.task_time_ms, 4 * 10'000);
  EXPECT_EQ(tasks.failed_tasks, 2);
  EXPECT_EQ(tasks.out_of_memory_tasks, 1);
  ASSERT_EQ(tasks.failure_groups.size(), 1u);  // one reason, two attempts
  EXPECT_EQ(tasks.failure_groups[0].reason, "ExecutorLostFailure");
  EXPECT_EQ(tasks.failure_groups[0].count, 2);
  EXPECT_TRUE(tasks.failure_groups[0].out_of_memory);
  EXPECT_EQ(tasks.failure_groups[0].task_time_ms, 20'000);
  EXPECT_EQ(tasks.failure_groups[0].sample_message, "Container killed by YARN for exceeding memory limits");
  ASSERT_EQ(model.executor_usage().size(), 2u);
  EXPECT_EQ(model.executor_usage().at("1").busy_ms, 20'000);
  EXPECT_EQ(model.executor_usage().at("2").tasks, 2);
}

TEST(DiagnoseModelInputs, FailureGroupsAreBounded) {
  listener::correlate::TaskStatistics tasks;
  for (int i = 0; i < 20; ++i) {
    listener::events::TaskEnd end;
    end.reason = listener::events::TaskEndReason::kExceptionFailure;
    end.reason_detail = "com.example.Error" + std::to_string(i) + ": boom";
    end.launch_time_ms = 1;
    end.finish_time_ms = 2;
    tasks.Add(end);
  }
  EXPECT_EQ(tasks.failure_groups.size(), listener::correlate::kMaxFailureGroups);
  std::int64_t counted = 0;
  for (const auto& group : tasks.failure_groups) counted += group.count;
  EXPECT_EQ(counted, 20);
}

}  // namespace
}  // namespace sparktrace::diagnose

namespace sparktrace::diagnose {
namespace {

TEST(DiagnoseModelInputs, ConnectStageNamesLoseTheirPlan) {
  test_lines::LogBuilder log;
  log.Line(test_lines::StageLine(
      false, 4, 0, "Spark Connect - root { read { named_table { unparsed_identifier: \\\"secret_t\\\" } } }",
      1, kT0, 0));
  const auto model = test_lines::ModelOf(log);
  EXPECT_EQ(model.stages().begin()->second.name, "Spark Connect - root");
}

}  // namespace
}  // namespace sparktrace::diagnose
