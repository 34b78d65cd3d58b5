// EventParser on hand-written lines: field order, escapes, unknown types, and every way a line can be broken.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"
#include "tests/unit/listener/events/listener_event_parser_test_support.h"

namespace sparktrace::listener::events {
namespace {

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
