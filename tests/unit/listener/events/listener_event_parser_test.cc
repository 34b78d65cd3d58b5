// EventParser on hand-written lines: Connect events and job tags (facts §1c/§1e), version differences.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "listener/events/connect_job_tag.h"
#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"
#include "tests/unit/listener/events/listener_event_parser_test_support.h"

namespace sparktrace::listener::events {
namespace {

TEST(ListenerEventParser, ConnectOperationStarted) {
  const std::string line = ConnectLine(
      "SparkListenerConnectOperationStarted",
      "\"jobTag\":\"" + std::string(kTag) + "\",\"operationId\":\"" + std::string(kOperationId) +
          "\",\"eventTime\":1732262609240,\"sessionId\":\"8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f\","
          "\"userId\":\"data_eng\",\"userName\":\"Data Eng\","
          "\"statementText\":\"common { plan_id: 0 } sql { query: \\\"SELECT secret FROM t\\\" }\","
          "\"sparkSessionTags\":[\"nightly\"],\"extraTags\":{}");
  const auto event = ParseAs<ConnectOperationEvent>(line);
  EXPECT_EQ(event.phase, ConnectOperationPhase::kStarted);
  EXPECT_EQ(event.job_tag, kTag);
  EXPECT_EQ(event.operation_id, kOperationId);
  EXPECT_EQ(event.event_time_ms, 1732262609240);
  EXPECT_EQ(event.session_id, "8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f");
  EXPECT_EQ(event.user_id, "data_eng");
  EXPECT_FALSE(event.produced_row_count.has_value());
  EXPECT_TRUE(event.error_message.empty());

  const auto tag = ParseConnectJobTag(event.job_tag);
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->user_id, event.user_id);
  EXPECT_EQ(tag->session_id, event.session_id);
  EXPECT_EQ(tag->operation_id, event.operation_id);
}

TEST(ListenerEventParser, ConnectOperationLifecycle) {
  struct Case {
    std::string_view event;
    ConnectOperationPhase phase;
    std::string_view extra;
  };
  const Case cases[] = {
      {"SparkListenerConnectOperationAnalyzed", ConnectOperationPhase::kAnalyzed, ""},
      {"SparkListenerConnectOperationReadyForExecution", ConnectOperationPhase::kReadyForExecution, ""},
      {"SparkListenerConnectOperationFinished", ConnectOperationPhase::kFinished,
       ",\"producedRowCount\":128"},
      {"SparkListenerConnectOperationFailed", ConnectOperationPhase::kFailed,
       ",\"errorMessage\":\"[TABLE_OR_VIEW_NOT_FOUND] The table `t` cannot be found.\""},
      {"SparkListenerConnectOperationCanceled", ConnectOperationPhase::kCanceled, ""},
      {"SparkListenerConnectOperationClosed", ConnectOperationPhase::kClosed, ""},
  };
  for (const Case& test_case : cases) {
    SCOPED_TRACE(test_case.event);
    const std::string line =
        ConnectLine(test_case.event, "\"jobTag\":\"" + std::string(kTag) + "\",\"operationId\":\"" +
                                         std::string(kOperationId) + "\",\"eventTime\":1000" +
                                         std::string(test_case.extra) + ",\"extraTags\":{}");
    const auto event = ParseAs<ConnectOperationEvent>(line);
    EXPECT_EQ(event.phase, test_case.phase);
    EXPECT_EQ(event.job_tag, kTag);
    EXPECT_EQ(event.operation_id, kOperationId);
    EXPECT_EQ(event.event_time_ms, 1000);
    if (test_case.phase == ConnectOperationPhase::kFinished) {
      EXPECT_EQ(event.produced_row_count, 128);
    }
    if (test_case.phase == ConnectOperationPhase::kFailed) {
      EXPECT_EQ(event.error_message, "[TABLE_OR_VIEW_NOT_FOUND] The table `t` cannot be found.");
    }
  }
}

TEST(ListenerEventParser, ConnectFinishedWithUnknownRowCount) {
  // producedRowCount is an Option: Jackson writes None as null.
  const auto event = ParseAs<ConnectOperationEvent>(
      ConnectLine("SparkListenerConnectOperationFinished",
                  "\"jobTag\":\"" + std::string(kTag) + "\",\"operationId\":\"" + std::string(kOperationId) +
                      "\",\"eventTime\":5,\"producedRowCount\":null,\"extraTags\":{}"));
  EXPECT_EQ(event.phase, ConnectOperationPhase::kFinished);
  EXPECT_FALSE(event.produced_row_count.has_value());
}

TEST(ListenerEventParser, ConnectSessionEvents) {
  const auto started = ParseAs<ConnectSessionEvent>(ConnectLine(
      "SparkListenerConnectSessionStarted",
      "\"sessionId\":\"sess-aaa-111\",\"userId\":\"userA\",\"eventTime\":110000,\"extraTags\":{}"));
  EXPECT_EQ(started.phase, ConnectSessionPhase::kStarted);
  EXPECT_EQ(started.session_id, "sess-aaa-111");
  EXPECT_EQ(started.user_id, "userA");
  EXPECT_EQ(started.event_time_ms, 110000);

  const auto closed = ParseAs<ConnectSessionEvent>(ConnectLine(
      "SparkListenerConnectSessionClosed",
      "\"sessionId\":\"sess-aaa-111\",\"userId\":\"userA\",\"eventTime\":190000,\"extraTags\":{}"));
  EXPECT_EQ(closed.phase, ConnectSessionPhase::kClosed);
  EXPECT_EQ(closed.event_time_ms, 190000);
}

TEST(ListenerEventParser, ConnectServiceEventsOf40AreIgnored) {
  EventParser parser;
  const auto result =
      parser.Parse(ConnectLine("SparkListenerConnectServiceStarted",
                               "\"hostAddress\":\"10.0.0.1\",\"bindingPort\":15002,\"eventTime\":1"));
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  ASSERT_TRUE(std::holds_alternative<IgnoredEvent>(*result));
  EXPECT_EQ(std::get<IgnoredEvent>(*result).type,
            "org.apache.spark.sql.connect.service.SparkListenerConnectServiceStarted");
}

TEST(ListenerEventParser, JobStartOfAConnectOperation) {
  // Properties as ExecuteThreadRunner sets them (facts §1c), plus SQL's execution ids.
  const std::string session_tag =
      "SparkConnect_SessionTag_User_data_eng_Session_8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f_Tag_nightly";
  const std::string line =
      "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":7,\"Submission Time\":1732262609300,"
      "\"Stage Infos\":[{\"Stage ID\":11,\"Stage Attempt ID\":0,\"Stage Name\":\"collect\",\"Number of "
      "Tasks\":4,"
      "\"RDD Info\":[],\"Parent IDs\":[],\"Details\":\"\",\"Accumulables\":[]}],\"Stage IDs\":[11,12],"
      "\"Properties\":{\"spark.job.description\":\"Spark Connect - SELECT secret\","
      "\"spark.job.tags\":\"" +
      session_tag + "," + std::string(kTag) +
      "\",\"spark.job.interruptOnCancel\":\"true\",\"callSite.short\":\"Spark Connect - SELECT secret\","
      "\"spark.sql.execution.id\":\"42\",\"spark.sql.execution.root.id\":\"40\","
      "\"spark.hadoop.fs.s3a.secret.key\":\"*********(redacted)\"}}";
  const auto job = ParseAs<JobStart>(line);
  EXPECT_EQ(job.job_id, 7);
  EXPECT_EQ(job.submission_time_ms, 1732262609300);
  EXPECT_EQ(job.stage_ids, (std::vector<std::int32_t>{11, 12}));
  EXPECT_EQ(job.properties.job_tags, (std::vector<std::string>{session_tag, std::string(kTag)}));
  EXPECT_EQ(job.properties.sql_execution_id, 42);
  EXPECT_EQ(job.properties.sql_root_execution_id, 40);
  EXPECT_FALSE(job.properties.job_group_id.has_value());

  int operation_tags = 0;
  for (const std::string& tag : job.properties.job_tags) {
    if (const auto parsed = ParseConnectJobTag(tag)) {
      ++operation_tags;
      EXPECT_EQ(parsed->operation_id, kOperationId);
    }
  }
  EXPECT_EQ(operation_tags, 1);
}

TEST(ListenerEventParser, JobStartWithUnparseableExecutionIdKeepsTheRest) {
  const auto job = ParseAs<JobStart>(
      "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":1,\"Stage IDs\":[],"
      "\"Properties\":{\"spark.sql.execution.id\":\"not-a-number\",\"spark.jobGroup.id\":\"group\"}}");
  EXPECT_FALSE(job.properties.sql_execution_id.has_value());
  EXPECT_EQ(job.properties.job_group_id, "group");
  EXPECT_FALSE(job.submission_time_ms.has_value());
}

TEST(ListenerEventParser, SqlExecutionStartOf35And40) {
  const auto execution = ParseAs<SqlExecutionStart>(
      "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart\",\"executionId\":42,"
      "\"rootExecutionId\":40,\"description\":\"SELECT secret FROM t\",\"details\":\"\","
      "\"physicalPlanDescription\":\"== Physical Plan "
      "==\",\"sparkPlanInfo\":{\"nodeName\":\"Scan\",\"children\":[]},"
      "\"time\":1732262609250,\"modifiedConfigs\":{\"spark.sql.shuffle.partitions\":\"8\"},"
      "\"jobTags\":[\"" +
      std::string(kTag) + "\"],\"jobGroupId\":null}");
  EXPECT_EQ(execution.execution_id, 42);
  EXPECT_EQ(execution.root_execution_id, 40);
  EXPECT_EQ(execution.time_ms, 1732262609250);
  ASSERT_TRUE(execution.job_tags.has_value());
  EXPECT_EQ(*execution.job_tags, (std::vector<std::string>{std::string(kTag)}));
  EXPECT_FALSE(execution.job_group_id.has_value());

  const auto before_35 = ParseAs<SqlExecutionStart>(
      "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart\",\"executionId\":0,"
      "\"description\":\"count\",\"details\":\"\",\"physicalPlanDescription\":\"\",\"sparkPlanInfo\":{},"
      "\"time\":1}");
  EXPECT_FALSE(before_35.job_tags.has_value());
  EXPECT_FALSE(before_35.root_execution_id.has_value());
}

TEST(ListenerEventParser, SqlExecutionEnd) {
  const auto failed = ParseAs<SqlExecutionEnd>(
      "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd\",\"executionId\":3,"
      "\"time\":99,\"errorMessage\":\"Job aborted\"}");
  EXPECT_EQ(failed.execution_id, 3);
  EXPECT_EQ(failed.time_ms, 99);
  EXPECT_EQ(failed.error_message, "Job aborted");

  const auto succeeded = ParseAs<SqlExecutionEnd>(
      "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd\",\"executionId\":3,"
      "\"time\":99,\"errorMessage\":null}");
  EXPECT_FALSE(succeeded.error_message.has_value());
}

TEST(ListenerEventParser, ApplicationEndExitCodeOf40) {
  const auto end =
      ParseAs<ApplicationEnd>("{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":5,\"ExitCode\":1}");
  EXPECT_EQ(end.time_ms, 5);
  EXPECT_EQ(end.exit_code, 1);
}

TEST(ListenerEventParser, ExecutorAddedRequestTimeOf34) {
  const auto added = ParseAs<ExecutorAdded>(
      "{\"Event\":\"SparkListenerExecutorAdded\",\"Timestamp\":2000,\"Executor ID\":\"3\",\"Executor Info\":"
      "{\"Host\":\"10.0.0.7\",\"Total Cores\":8,\"Log "
      "Urls\":{\"stdout\":\"http://h/?token=x\"},\"Attributes\":{},"
      "\"Resources\":{},\"Resource Profile Id\":0,\"Registration Time\":1990,\"Request Time\":1500}}");
  EXPECT_EQ(added.executor_id, "3");
  EXPECT_EQ(added.host, "10.0.0.7");
  EXPECT_EQ(added.total_cores, 8);
  EXPECT_EQ(added.time_ms, 2000);
  EXPECT_EQ(added.request_time_ms, 1500);
}

TEST(ListenerEventParser, TaskEndWithoutMetricsAndWithUnknownReason) {
  const auto task = ParseAs<TaskEnd>(
      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":2,\"Stage Attempt ID\":1,\"Task "
      "Type\":\"ResultTask\","
      "\"Task End Reason\":{\"Reason\":\"SomeFutureReason\"},\"Task Info\":{\"Task ID\":9,\"Index\":3,"
      "\"Attempt\":0,\"Launch Time\":10,\"Executor ID\":\"1\",\"Host\":\"h\",\"Locality\":\"ANY\","
      "\"Speculative\":false,\"Getting Result Time\":0,\"Finish Time\":20,\"Failed\":true,\"Killed\":false,"
      "\"Accumulables\":[]}}");
  EXPECT_EQ(task.reason, TaskEndReason::kOther);
  EXPECT_EQ(task.reason_detail, "SomeFutureReason");
  EXPECT_FALSE(task.has_metrics);
  EXPECT_FALSE(task.metrics.executor_cpu_time_ns.has_value());
  EXPECT_EQ(task.stage_attempt_id, 1);
  EXPECT_TRUE(task.failed);
}

TEST(ListenerEventParser, TaskEndExecutorHeapPeak) {
  const std::string head =
      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":2,\"Stage Attempt ID\":0,\"Task End Reason\":"
      "{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":9,\"Launch Time\":10,\"Finish Time\":20}";
  const auto with_peak = ParseAs<TaskEnd>(
      head + ",\"Task Executor Metrics\":{\"JVMHeapMemory\":734003200,\"JVMOffHeapMemory\":182000000}}");
  EXPECT_EQ(with_peak.executor_peak_jvm_heap_bytes, 734'003'200);
  // Spark before 3.0 writes none; a null is none too.
  EXPECT_EQ(ParseAs<TaskEnd>(head + "}").executor_peak_jvm_heap_bytes, std::nullopt);
  EXPECT_EQ(ParseAs<TaskEnd>(head + ",\"Task Executor Metrics\":null}").executor_peak_jvm_heap_bytes,
            std::nullopt);
  EXPECT_NE(ErrorOf(head + ",\"Task Executor Metrics\":{\"JVMHeapMemory\":\"big\"}}").find("JVMHeapMemory"),
            std::string::npos);
}

TEST(ListenerEventParser, LongMessagesAreCutAtACharacterBoundary) {
  std::string reason;
  while (reason.size() < kMaxMessageBytes + 10) reason += "é";  // two bytes each
  reason += "x";
  const auto removed = ParseAs<ExecutorRemoved>(
      "{\"Event\":\"SparkListenerExecutorRemoved\",\"Timestamp\":1,"
      "\"Executor ID\":\"2\",\"Removed Reason\":\"" +
      reason + "\"}");
  EXPECT_LE(removed.reason.size(), kMaxMessageBytes);
  EXPECT_GE(removed.reason.size(), kMaxMessageBytes - 1);
  EXPECT_EQ(removed.reason.size() % 2, 0u);  // no half character
  EXPECT_EQ(removed.reason, reason.substr(0, removed.reason.size()));
}

}  // namespace
}  // namespace sparktrace::listener::events
