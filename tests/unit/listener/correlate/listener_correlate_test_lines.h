#pragma once
// Hand-written Spark event-log lines for the correlation tests, in the JSON shapes Spark writes
// (facts §1c/§1e), fed to an ApplicationModel through listener/events' real parser.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/events/event_parser.h"

namespace sparktrace::listener::correlate::test_lines {

// Spark Connect session and operation ids the tests share.
inline constexpr std::string_view kSessionA = "8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f";
inline constexpr std::string_view kSessionB = "11111111-2222-4333-8444-555555555555";
inline constexpr std::string_view kOperationA = "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59";
inline constexpr std::string_view kOperationB = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";

inline std::string Str(std::int64_t value) { return std::to_string(value); }

inline std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// The operation tag in the order Spark 3.5.2+/4.x writes it.
inline std::string OperationTag(std::string_view user, std::string_view session, std::string_view operation) {
  return "SparkConnect_OperationTag_User_" + std::string(user) + "_Session_" + std::string(session) +
         "_Operation_" + std::string(operation);
}

inline std::string LogStart(std::string_view version) {
  return R"({"Event":"SparkListenerLogStart","Spark Version":")" + std::string(version) + "\"}";
}

inline std::string AppStart(std::string_view app_id, std::int64_t time_ms) {
  return R"({"Event":"SparkListenerApplicationStart","App Name":"test","App ID":")" + std::string(app_id) +
         R"(","Timestamp":)" + Str(time_ms) + R"(,"User":"tester"})";
}

inline std::string AppEnd(std::int64_t time_ms) {
  return R"({"Event":"SparkListenerApplicationEnd","Timestamp":)" + Str(time_ms) + "}";
}

inline std::string ExecutorAdded(std::string_view id, std::int64_t time_ms) {
  return R"({"Event":"SparkListenerExecutorAdded","Timestamp":)" + Str(time_ms) + R"(,"Executor ID":")" +
         std::string(id) + R"(","Executor Info":{"Host":"h","Total Cores":4}})";
}

inline std::string ExecutorRemoved(std::string_view id, std::int64_t time_ms) {
  return R"({"Event":"SparkListenerExecutorRemoved","Timestamp":)" + Str(time_ms) + R"(,"Executor ID":")" +
         std::string(id) + R"(","Removed Reason":"lost"})";
}

// A JobStart with the given tags (joined with ',' as spark.job.tags) and optional SQL execution id.
inline std::string JobStart(int job_id, std::int64_t time_ms, const std::vector<int>& stage_ids,
                            const std::vector<std::string>& tags, std::int64_t sql_execution_id = -1) {
  std::string stages;
  for (int stage_id : stage_ids) stages += (stages.empty() ? "" : ",") + Str(stage_id);
  std::string joined;
  for (const std::string& tag : tags) joined += (joined.empty() ? "" : ",") + tag;
  std::string properties = R"("spark.job.description":"Spark Connect - plan")";
  if (!tags.empty()) properties += R"(,"spark.job.tags":)" + Quoted(joined);
  if (sql_execution_id >= 0) properties += R"(,"spark.sql.execution.id":)" + Quoted(Str(sql_execution_id));
  return R"({"Event":"SparkListenerJobStart","Job ID":)" + Str(job_id) + R"(,"Submission Time":)" +
         Str(time_ms) + R"(,"Stage Infos":[],"Stage IDs":[)" + stages + R"(],"Properties":{)" + properties +
         "}}";
}

inline std::string JobEnd(int job_id, std::int64_t time_ms, bool succeeded = true) {
  const std::string result =
      succeeded ? R"({"Result":"JobSucceeded"})"
                : R"({"Result":"JobFailed","Exception":{"Message":"boom","Stack Trace":[]}})";
  return R"({"Event":"SparkListenerJobEnd","Job ID":)" + Str(job_id) + R"(,"Completion Time":)" +
         Str(time_ms) + R"(,"Job Result":)" + result + "}";
}

inline std::string StageSubmitted(int stage_id, std::int64_t time_ms, int num_tasks, int attempt = 0) {
  return R"({"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":)" + Str(stage_id) +
         R"(,"Stage Attempt ID":)" + Str(attempt) + R"(,"Stage Name":"s","Number of Tasks":)" +
         Str(num_tasks) + R"(,"Submission Time":)" + Str(time_ms) + R"(},"Properties":{}})";
}

inline std::string StageCompleted(int stage_id, std::int64_t submitted_ms, std::int64_t completed_ms,
                                  int num_tasks, int attempt = 0) {
  return R"({"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":)" + Str(stage_id) +
         R"(,"Stage Attempt ID":)" + Str(attempt) + R"(,"Stage Name":"s","Number of Tasks":)" +
         Str(num_tasks) + R"(,"Submission Time":)" + Str(submitted_ms) + R"(,"Completion Time":)" +
         Str(completed_ms) + "}}";
}

// A task end with run time = duration, CPU time, GC time and output/shuffle/input figures.
struct TaskFigures {
  bool failed = false;
  std::int64_t output_bytes = 0;
  std::int64_t output_records = 0;
  std::int64_t shuffle_write_bytes = 0;
  std::int64_t input_bytes = 0;
  std::int64_t peak_memory = 0;
};

inline std::string TaskEnd(int stage_id, std::int64_t task_id, std::int64_t launch_ms, std::int64_t finish_ms,
                           const TaskFigures& figures = {}) {
  const std::string reason =
      figures.failed ? R"({"Reason":"ExceptionFailure","Class Name":"java.lang.RuntimeException",)"
                       R"("Description":"bad row","Stack Trace":[]})"
                     : R"({"Reason":"Success"})";
  const std::int64_t run_ms = finish_ms - launch_ms;
  return R"({"Event":"SparkListenerTaskEnd","Stage ID":)" + Str(stage_id) +
         R"(,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":)" + reason +
         R"(,"Task Info":{"Task ID":)" + Str(task_id) + R"(,"Index":0,"Attempt":0,"Launch Time":)" +
         Str(launch_ms) +
         R"(,"Executor ID":"1","Host":"h","Locality":"ANY","Speculative":false,"Getting Result Time":0,)"
         R"("Finish Time":)" +
         Str(finish_ms) + R"(,"Failed":)" + (figures.failed ? "true" : "false") +
         R"(,"Killed":false,"Accumulables":[]},"Task Metrics":{"Executor Deserialize Time":1,)"
         R"("Executor Run Time":)" +
         Str(run_ms) + R"(,"Executor CPU Time":)" + Str(run_ms * 500'000) +
         R"(,"Result Size":10,"JVM GC Time":2,"Result Serialization Time":0,"Memory Bytes Spilled":0,)"
         R"("Disk Bytes Spilled":0,"Peak Execution Memory":)" +
         Str(figures.peak_memory) +
         R"(,"Shuffle Read Metrics":{"Remote Bytes Read":0,"Local Bytes Read":0,"Fetch Wait Time":0,)"
         R"("Total Records Read":0},"Shuffle Write Metrics":{"Shuffle Bytes Written":)" +
         Str(figures.shuffle_write_bytes) +
         R"(,"Shuffle Write Time":0,"Shuffle Records Written":0},"Input Metrics":{"Bytes Read":)" +
         Str(figures.input_bytes) + R"(,"Records Read":0},"Output Metrics":{"Bytes Written":)" +
         Str(figures.output_bytes) + R"(,"Records Written":)" + Str(figures.output_records) + "}}}";
}

inline std::string SqlExecutionStart(std::int64_t execution_id, std::int64_t time_ms,
                                     const std::vector<std::string>& job_tags, std::int64_t root_id = -1) {
  std::string tags;
  for (const std::string& tag : job_tags) tags += (tags.empty() ? "" : ",") + Quoted(tag);
  std::string line =
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":)" +
      Str(execution_id);
  if (root_id >= 0) line += R"(,"rootExecutionId":)" + Str(root_id);
  return line + R"(,"description":"q","details":"","physicalPlanDescription":"","sparkPlanInfo":{},"time":)" +
         Str(time_ms) + R"(,"modifiedConfigs":{},"jobTags":[)" + tags + "]}";
}

inline std::string SqlExecutionEnd(std::int64_t execution_id, std::int64_t time_ms) {
  return R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd","executionId":)" +
         Str(execution_id) + R"(,"time":)" + Str(time_ms) + R"(,"errorMessage":null})";
}

// One SparkListenerConnectOperation<phase> event: phase is "Started", "Analyzed", "ReadyForExecution",
// "Finished", "Failed", "Canceled" or "Closed".
inline std::string ConnectOperation(std::string_view phase, std::string_view tag,
                                    std::string_view operation_id, std::int64_t time_ms,
                                    std::string_view session = "", std::string_view user = "") {
  std::string line = R"({"Event":"org.apache.spark.sql.connect.service.SparkListenerConnectOperation)" +
                     std::string(phase) + R"(","jobTag":)" + Quoted(tag) + R"(,"operationId":)" +
                     Quoted(operation_id) + R"(,"eventTime":)" + Str(time_ms);
  if (phase == "Started") {
    line += R"(,"sessionId":)" + Quoted(session) + R"(,"userId":)" + Quoted(user) +
            R"(,"userName":"","statementText":"plan","sparkSessionTags":[])";
  }
  if (phase == "Finished") line += R"(,"producedRowCount":7)";
  if (phase == "Failed") line += R"(,"errorMessage":"AnalysisException")";
  return line + R"(,"extraTags":{}})";
}

// Parses each line with the production parser and applies it; a line that does not parse fails
// the test (the lines here are meant to be valid).
inline void Feed(ApplicationModel& model, const std::vector<std::string>& lines) {
  events::EventParser parser;
  for (const std::string& line : lines) {
    Result<events::SparkEvent> event = parser.Parse(line);
    ASSERT_TRUE(event.ok()) << event.error().ToString() << "\n" << line;
    model.Apply(*event);
  }
}

}  // namespace sparktrace::listener::correlate::test_lines
