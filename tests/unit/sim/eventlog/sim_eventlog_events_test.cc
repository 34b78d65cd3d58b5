// The simulated event log is read exactly like a real one: every line parses with listener/events'
// EventParser, the only events it ignores are the ones it ignores in real logs, and the shapes and
// order are Spark's.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/eventlog/event_log_generator.h"
#include "tests/unit/sim/eventlog/sim_eventlog_test_support.h"

namespace sparktrace::sim::eventlog {
namespace {

using testing::GenerateAndParse;
using testing::LogOptions;
using testing::ParsedLog;

// Event types a Spark 3.5/4.0 log has that the listener may not model.
const std::set<std::string> kUnmodelled = {
    "SparkListenerResourceProfileAdded", "SparkListenerBlockManagerAdded", "SparkListenerBlockManagerRemoved",
    "SparkListenerEnvironmentUpdate"};

std::vector<std::string> AllScenarioNames() {
  std::vector<std::string> names = {"clean"};
  for (Problem problem : kAllProblems) names.emplace_back(ProblemName(problem));
  names.emplace_back("skew,spill,gc-pressure");
  return names;
}

TEST(SimEventLogEvents, EveryLineParsesInEveryScenario) {
  for (const std::string& name : AllScenarioNames()) {
    for (double strength : {0.3, 1.0}) {
      SCOPED_TRACE(name + " at " + std::to_string(strength));
      const ParsedLog parsed = GenerateAndParse(LogOptions(name, strength));
      EXPECT_EQ(parsed.malformed, 0) << parsed.first_malformed;
      for (const auto& [type, count] : parsed.events) {
        const bool modelled = type == "LogStart" || type == "ApplicationStart" || type == "ApplicationEnd" ||
                              type == "ExecutorAdded" || type == "ExecutorRemoved" || type == "JobStart" ||
                              type == "JobEnd" || type == "StageSubmitted" || type == "StageCompleted" ||
                              type == "TaskStart" || type == "TaskEnd" || type == "SqlExecutionStart" ||
                              type == "SqlExecutionEnd" || type == "ConnectSession" ||
                              type == "ConnectOperation" || type == "EnvironmentUpdate" ||
                              type == "DriverAccumUpdates";
        EXPECT_TRUE(modelled || kUnmodelled.contains(type)) << "unexpected ignored event " << type;
      }
      EXPECT_EQ(parsed.events.at("LogStart"), 1);
      EXPECT_EQ(parsed.events.at("ApplicationStart"), 1);
      EXPECT_EQ(parsed.events.at("ApplicationEnd"), 1);
      EXPECT_EQ(parsed.events.at("TaskStart"), parsed.events.at("TaskEnd"));
      EXPECT_EQ(parsed.events.at("SqlExecutionStart"), 6);
      EXPECT_EQ(parsed.events.at("SqlExecutionEnd"), 6);
      EXPECT_EQ(parsed.events.at("DriverAccumUpdates"), 6);  // the plans' driver-side metrics
      EXPECT_EQ(parsed.events.at("JobStart"), 12);
      EXPECT_EQ(parsed.events.at("ConnectSession"), 1);
      // Started, Analyzed, ReadyForExecution, Finished or Failed, Closed.
      EXPECT_EQ(parsed.events.at("ConnectOperation"), 6 * 5);
      EXPECT_GE(parsed.events.at("ExecutorAdded"), 4);
    }
  }
}

TEST(SimEventLogEvents, LinesAreCompactJsonInLogOrder) {
  const GeneratedLog log = GenerateLog(LogOptions("clean", 1.0));
  ASSERT_GT(log.lines.size(), 100u);
  EXPECT_EQ(log.lines.front().text, R"({"Event":"SparkListenerLogStart","Spark Version":"4.0.0"})");
  EXPECT_EQ(log.lines.back().text.rfind(R"({"Event":"SparkListenerApplicationEnd","Timestamp":)", 0), 0u);
  EXPECT_NE(log.lines.back().text.find(R"("ExitCode":0})"), std::string::npos);
  for (std::size_t i = 1; i < log.lines.size(); ++i) {
    EXPECT_LE(log.lines[i - 1].time_ms, log.lines[i].time_ms)
        << "line " << i << ": " << log.lines[i].text.substr(0, 120);
    EXPECT_EQ(log.lines[i].text.find('\n'), std::string::npos);
    EXPECT_EQ(log.lines[i].text.find(R"(": )"), std::string::npos)
        << "not compact: " << log.lines[i].text.substr(0, 120);
  }
  // Spark does not flush after task events and stage submissions.
  for (const LogLine& line : log.lines) {
    const bool task_or_submit = line.text.starts_with(R"({"Event":"SparkListenerTask)") ||
                                line.text.starts_with(R"({"Event":"SparkListenerStageSubmitted")");
    EXPECT_EQ(line.flush,
              !task_or_submit && !line.text.starts_with(R"({"Event":"SparkListenerEnvironmentUpdate")"));
  }
}

TEST(SimEventLogEvents, Spark35WritesNoSpark4Fields) {
  OfflineLogOptions options = LogOptions("clean", 1.0);
  options.app.spark_version = "3.5.4";
  const GeneratedLog log = GenerateLog(options);
  for (const LogLine& line : log.lines) {
    EXPECT_EQ(line.text.find("ExitCode"), std::string::npos);
    EXPECT_EQ(line.text.find("Peak On Heap Execution Memory"), std::string::npos);
    EXPECT_EQ(line.text.find("jobGroupId"), std::string::npos);
  }
}

TEST(SimEventLogEvents, JobsCarryTheOperationTagAsSparkWritesIt) {
  OfflineLogOptions options = LogOptions("clean", 1.0, 7, 1);
  OperationSpec spec;
  spec.operation_id = "5b0a2f7e-2c1d-4f7a-9b1e-0c6a4d8e9f10";
  spec.session_id = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
  spec.user_id = "etl_user";
  spec.user_tags = {"nightly"};
  options.specs = {spec};
  const GeneratedLog log = GenerateLog(options);
  const std::string tag = "SparkConnect_OperationTag_User_etl_user_Session_" + spec.session_id +
                          "_Operation_" + spec.operation_id;
  const std::string session_tag =
      "SparkConnect_SessionTag_User_etl_user_Session_" + spec.session_id + "_Tag_nightly";
  int job_starts = 0;
  for (const LogLine& line : log.lines) {
    if (!line.text.starts_with(R"({"Event":"SparkListenerJobStart")")) continue;
    ++job_starts;
    EXPECT_NE(line.text.find(R"("spark.job.tags":")" + tag + "," + session_tag + "\""), std::string::npos)
        << line.text.substr(line.text.find("Properties"));
  }
  EXPECT_EQ(job_starts, 2);
}

}  // namespace
}  // namespace sparktrace::sim::eventlog
