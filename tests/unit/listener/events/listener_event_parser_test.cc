// EventParser on hand-written lines: Spark Connect events and job tags shaped as Spark writes them
// (facts §1c/§1e), version differences, field order, and every way a line can be broken.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "listener/events/connect_job_tag.h"
#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::events {
namespace {

constexpr std::string_view kConnectPackage = "org.apache.spark.sql.connect.service.";
constexpr std::string_view kTag =
    "SparkConnect_OperationTag_User_data_eng_Session_8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f_Operation_"
    "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59";
constexpr std::string_view kOperationId = "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59";

template <typename Event>
Event ParseAs(std::string_view line) {
  EventParser parser;
  Result<SparkEvent> result = parser.Parse(line);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().ToString()) << "\n" << line;
  if (!result.ok()) return Event{};
  const Event* event = std::get_if<Event>(&*result);
  EXPECT_NE(event, nullptr) << "parsed as " << SparkEventName(*result) << "\n" << line;
  return event != nullptr ? *event : Event{};
}

std::string ErrorOf(std::string_view line) {
  EventParser parser;
  Result<SparkEvent> result = parser.Parse(line);
  EXPECT_FALSE(result.ok()) << "parsed as " << (result.ok() ? SparkEventName(*result) : "") << ": " << line;
  return result.ok() ? std::string() : result.error().message;
}

std::string ConnectLine(std::string_view event, std::string_view fields) {
  return "{\"Event\":\"" + std::string(kConnectPackage) + std::string(event) + "\"," + std::string(fields) +
         "}";
}

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

TEST(ListenerEventParser, FieldOrderDoesNotMatter) {
  // Spark writes "Event" first; a re-serialised log (e.g. sorted keys) must read the same.
  const auto job = ParseAs<JobEnd>(
      "{\"Completion Time\":20,\"Event\":\"SparkListenerJobEnd\",\"Job ID\":4,"
      "\"Job Result\":{\"Exception\":{\"Message\":\"boom\",\"Stack Trace\":[]},\"Result\":\"JobFailed\"}}");
  EXPECT_EQ(job.job_id, 4);
  EXPECT_EQ(job.completion_time_ms, 20);
  EXPECT_EQ(job.result, JobResult::kFailed);
  EXPECT_EQ(job.failure_message, "boom");

  const auto task = ParseAs<TaskStart>(
      "{\"Task Info\":{\"Launch Time\":5,\"Task ID\":77,\"Executor "
      "ID\":\"driver\",\"Index\":1,\"Attempt\":2},"
      "\"Stage ID\":3,\"Event\":\"SparkListenerTaskStart\",\"Stage Attempt ID\":0}");
  EXPECT_EQ(task.task_id, 77);
  EXPECT_EQ(task.stage_id, 3);
  EXPECT_EQ(task.attempt, 2);
  EXPECT_EQ(task.executor_id, "driver");
}

TEST(ListenerEventParser, EscapedStringsAreUnescaped) {
  const auto removed = ParseAs<ExecutorRemoved>(
      "{\"Event\":\"SparkListenerExecutorRemoved\",\"Timestamp\":1,\"Executor ID\":\"\\u0031\","
      "\"Removed Reason\":\"line one\\nline \\\"two\\\"\"}");
  EXPECT_EQ(removed.executor_id, "1");
  EXPECT_EQ(removed.reason, "line one\nline \"two\"");
}

TEST(ListenerEventParser, UnknownAndUnneededTypesAreIgnoredByName) {
  for (std::string_view type : {"SparkListenerBlockManagerAdded", "SparkListenerUnpersistRDD",
                                "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent",
                                "com.example.MyListenerEvent"}) {
    EventParser parser;
    const auto result =
        parser.Parse("{\"Event\":\"" + std::string(type) + "\",\"anything\":[1,{\"a\":null}]}");
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    ASSERT_TRUE(std::holds_alternative<IgnoredEvent>(*result));
    EXPECT_EQ(std::get<IgnoredEvent>(*result).type, type);
    EXPECT_EQ(SparkEventName(*result), type);
  }
}

TEST(ListenerEventParser, MalformedLinesAreErrors) {
  // The shape of line 4 of the rapids malformed_json_eventlog: a stray '_' before a key.
  EXPECT_NE(ErrorOf("{\"Event\":\"SparkListenerEnvironmentUpdate\",_\"JVM Information\":{}}")
                .find("SparkListenerEnvironmentUpdate: malformed JSON"),
            std::string::npos);
  const std::string_view broken[] = {
      "",
      " ",
      "{",
      "}",
      "[]",
      "[{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}]",
      "\"SparkListenerLogStart\"",
      "42",
      "null",
      "{}",
      "{\"Event\":42}",
      "{\"Event\":null}",
      "{\"Event\":\"\"}",
      "{\"event\":\"SparkListenerLogStart\"}",
      "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"",
      "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1}",
      "{\"Event\":\"SparkListenerLogStart\" \"Spark Version\":\"3.5.1\"}",
      "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}}",
      "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5\"} {\"Event\":\"X\"}",  // two objects
      "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}garbage",
      "{\"Event\":\"SparkListenerBlockManagerAdded\",\"Block Manager ID\":{\"Executor ID\":\"1\"}",
      "{\"Event\":\"SparkListenerBlockManagerAdded\",,\"x\":1}",
      "\xef\xbb\xbf{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.1\"}",  // BOM
      "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"\xff\xfe\"}",           // not UTF-8
  };
  for (std::string_view line : broken) {
    SCOPED_TRACE(line);
    ErrorOf(line);
  }
}

TEST(ListenerEventParser, MissingOrMistypedRequiredFieldsNameTheField) {
  EXPECT_EQ(
      ErrorOf(
          "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Task End Reason\":{\"Reason\":\"Success\"}}"),
      "SparkListenerTaskEnd: missing required field \"Task Info\"");
  EXPECT_EQ(
      ErrorOf(
          "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Task End Reason\":{\"Reason\":\"Success\"},"
          "\"Task Info\":{\"Task ID\":1}}"),
      "SparkListenerTaskEnd: missing required field \"Launch Time\"");
  EXPECT_NE(ErrorOf("{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":\"one\"}").find("field \"Stage ID\""),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(
          "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Task End Reason\":{\"Reason\":\"Success\"},"
          "\"Task Info\":{\"Task ID\":1,\"Launch Time\":1},\"Task Metrics\":{\"Shuffle Read Metrics\":"
          "{\"Remote Bytes Read\":1.5}}}")
          .find("field \"Remote Bytes Read\""),
      std::string::npos);
  EXPECT_NE(ErrorOf("{\"Event\":\"SparkListenerJobStart\",\"Job ID\":4294967296}").find("field \"Job ID\""),
            std::string::npos);
  EXPECT_EQ(ErrorOf("{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":1}"),
            "SparkListenerJobEnd: missing required field \"Job Result\"");
  EXPECT_EQ(
      ErrorOf(ConnectLine("SparkListenerConnectOperationClosed", "\"operationId\":\"x\",\"eventTime\":1")),
      "org.apache.spark.sql.connect.service.SparkListenerConnectOperationClosed: missing required field "
      "\"jobTag\"");
  EXPECT_EQ(ErrorOf("{\"Event\":\"SparkListenerLogStart\"}"),
            "SparkListenerLogStart: missing required field \"Spark Version\"");
}

TEST(ListenerEventParser, InPlaceAndCopyingGiveTheSameEvent) {
  const std::string line =
      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Stage Attempt ID\":0,\"Task "
      "Type\":\"ResultTask\","
      "\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":5,\"Index\":5,\"Attempt\":0,"
      "\"Launch Time\":100,\"Executor ID\":\"2\",\"Finish Time\":180,\"Failed\":false,\"Killed\":false,"
      "\"Accumulables\":[]},\"Task Metrics\":{\"Executor Run Time\":70,\"Executor CPU Time\":65000000,"
      "\"JVM GC Time\":3,\"Peak Execution Memory\":4096,\"Shuffle Read Metrics\":{\"Remote Bytes Read\":10,"
      "\"Local Bytes Read\":20,\"Fetch Wait Time\":4,\"Total Records Read\":7}}}";
  // A buffer holding the line, another line, and exactly the padding: the parser must not need more.
  std::string buffer = line + "\n{\"Event\":\"x\"}";
  buffer.append(kEventLinePadding, 'Z');
  const std::string_view in_buffer(buffer.data(), line.size());

  EventParser parser;
  const auto in_place = parser.Parse(in_buffer, buffer.size());
  const auto copied = parser.Parse(line);
  const auto too_little_padding = parser.Parse(in_buffer, line.size() + kEventLinePadding - 1);
  const auto thread_parser = ParseEvent(line);
  for (const auto* result : {&in_place, &copied, &too_little_padding, &thread_parser}) {
    ASSERT_TRUE(result->ok()) << result->error().ToString();
    const auto& task = std::get<TaskEnd>(**result);
    EXPECT_EQ(task.task_id, 5);
    EXPECT_EQ(task.finish_time_ms, 180);
    EXPECT_EQ(task.metrics.executor_cpu_time_ns, 65000000);
    EXPECT_EQ(task.metrics.peak_execution_memory_bytes, 4096);
    EXPECT_EQ(task.metrics.shuffle_remote_bytes_read, 10);
    EXPECT_EQ(task.metrics.shuffle_local_bytes_read, 20);
    EXPECT_EQ(task.metrics.shuffle_fetch_wait_time_ms, 4);
    EXPECT_EQ(task.metrics.shuffle_records_read, 7);
  }
}

TEST(ListenerEventParser, TruncatedLinesInsideABufferAreErrors) {
  // A line cut anywhere, followed in the buffer by more log: only the line itself may be read.
  const std::string line =
      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":12,\"Stage Attempt ID\":0,\"Task End Reason\":"
      "{\"Reason\":\"Success\"},\"Task Info\":{\"Task ID\":123,\"Launch Time\":1700000000000,\"Executor "
      "ID\":\"7\"},"
      "\"Task Metrics\":{\"Executor Run Time\":12345,\"Updated Blocks\":[]}}";
  std::string buffer = line + "\n" + line;
  buffer.append(kEventLinePadding, '\0');
  EventParser parser;
  ASSERT_TRUE(parser.Parse(std::string_view(buffer.data(), line.size()), buffer.size()).ok());
  for (std::size_t length = 0; length < line.size(); ++length) {
    const auto result = parser.Parse(std::string_view(buffer.data(), length), buffer.size());
    EXPECT_FALSE(result.ok()) << "prefix of " << length << " bytes parsed";
  }
}

TEST(ListenerEventParser, ArbitraryBytesNeverCrash) {
  // Mutations of valid lines (flipped, dropped, duplicated bytes), and pure noise. The test passes
  // when nothing crashes (run it under make asan) and every answer is one of the three outcomes.
  const std::vector<std::string> seeds = {
      ConnectLine("SparkListenerConnectOperationStarted",
                  "\"jobTag\":\"" + std::string(kTag) + "\",\"operationId\":\"" + std::string(kOperationId) +
                      "\",\"eventTime\":1,\"sessionId\":\"s\",\"userId\":\"u\",\"sparkSessionTags\":[],"
                      "\"extraTags\":{}"),
      "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Stage Attempt ID\":0,\"Task End "
      "Reason\":{\"Reason\":"
      "\"ExceptionFailure\",\"Class Name\":\"E\",\"Description\":\"d\",\"Stack Trace\":[]},\"Task "
      "Info\":{\"Task ID\":1,"
      "\"Launch Time\":1,\"Executor ID\":\"1\",\"Accumulables\":[{\"ID\":1,\"Name\":\"internal.metrics."
      "peakExecutionMemory\",\"Update\":5}]},\"Task Metrics\":{\"Executor Run Time\":1,\"Input Metrics\":"
      "{\"Bytes Read\":1}}}",
      "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":1,\"Stage "
      "IDs\":[1,2],\"Properties\":{\"spark.job.tags\":\"a,b\"}}",
      "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart\",\"executionId\":1,"
      "\"time\":2,"
      "\"jobTags\":[\"t\"]}",
  };
  std::mt19937 random(20260422);
  EventParser parser;
  std::size_t outcomes = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string line = seeds[random() % seeds.size()];
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int edit = 0; edit < edits && !line.empty(); ++edit) {
      const std::size_t at = random() % line.size();
      switch (random() % 4) {
        case 0:
          line[at] = static_cast<char>(random() & 0xff);
          break;
        case 1:
          line.erase(at, 1 + random() % 8);
          break;
        case 2:
          line.insert(at, line.substr(random() % line.size(), random() % 16));
          break;
        default:
          line.insert(at, 1, "{}[]\",:\\0-e"[random() % 11]);
          break;
      }
    }
    if (round % 10 == 0) {
      line.resize(random() % 200);
      for (char& c : line) c = static_cast<char>(random() & 0xff);
    }
    const auto result = parser.Parse(line);
    outcomes += result.ok() ? 1 : 0;
  }
  SUCCEED() << outcomes << " of 4000 mutated lines still parsed";
}

TEST(ListenerEventParser, LinesOverTheLimitAreRejectedUnparsed) {
  EventParserOptions options;
  options.max_line_bytes = 64;
  EventParser parser(options);
  const std::string line =
      "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1,\"pad\":\"" + std::string(100, 'x') + "\"}";
  const auto result = parser.Parse(line);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("longer than the limit"), std::string::npos);
  EXPECT_TRUE(parser.Parse("{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1}").ok());
}

TEST(ListenerEventParser, AParserIsReusableAcrossLinesOfAnySize) {
  EventParser parser;
  const std::string small = "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1}";
  const std::string large = "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":2,\"pad\":\"" +
                            std::string(1 << 20, 'x') + "\"}";
  for (const std::string* line : {&small, &large, &small, &large}) {
    const auto result = parser.Parse(*line);
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    EXPECT_EQ(std::get<ApplicationEnd>(*result).time_ms, line == &small ? 1 : 2);
  }
}

}  // namespace
}  // namespace sparktrace::listener::events
