#pragma once
// A hand-written Spark 3.5 event log with one SQL execution (a plan given as a tree of nodes with
// metrics), one job of one stage whose tasks report the plan's SQL metrics in their "Accumulables"
// (strings in "Update", as Spark writes them), and driver-side metric updates: what the plan rules
// (diagnose/rules/plan_*.cc) read, fed through the production parser.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "diagnose/diagnose.h"
#include "listener/correlate/application_model.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::diagnose::plan_test_lines {

using listener::correlate::test_lines::Quoted;
using listener::correlate::test_lines::Str;

inline constexpr std::int64_t kPlanT0 = 1'700'000'000'000;

struct PlanMetric {
  std::string name;
  std::int64_t accumulator_id = 0;
  std::string type = "sum";
};

struct PlanNode {
  std::string name;
  std::vector<PlanMetric> metrics;
  std::vector<PlanNode> children;
};

inline std::string PlanJson(const PlanNode& node) {
  std::string children;
  for (const PlanNode& child : node.children) children += (children.empty() ? "" : ",") + PlanJson(child);
  std::string metrics;
  for (const PlanMetric& metric : node.metrics) {
    metrics += (metrics.empty() ? "" : ",") + std::string(R"({"name":)") + Quoted(metric.name) +
               R"(,"accumulatorId":)" + Str(metric.accumulator_id) + R"(,"metricType":)" +
               Quoted(metric.type) + "}";
  }
  return R"({"nodeName":)" + Quoted(node.name) + R"(,"simpleString":)" + Quoted(node.name + " [detail]") +
         R"(,"children":[)" + children + R"(],"metadata":{},"metrics":[)" + metrics + "]}";
}

struct PlanLog {
  PlanNode plan;
  int tasks = 10;
  std::int64_t task_ms = 60'000;  // every task runs this long, all at once
  // Per task: accumulator id → the task's value (the same for every task).
  std::map<std::int64_t, std::int64_t> per_task;
  // Driver-side updates (SparkListenerDriverAccumUpdates): (accumulator id, value).
  std::vector<std::pair<std::int64_t, std::int64_t>> driver;
  std::map<std::string, std::string> properties;
};

inline std::vector<std::string> PlanLogLines(const PlanLog& log) {
  const std::int64_t start = kPlanT0 + 2000;
  const std::int64_t end = start + log.task_ms;
  std::string properties;
  for (const auto& [key, value] : log.properties)
    properties += (properties.empty() ? "" : ",") + Quoted(key) + ":" + Quoted(value);
  std::vector<std::string> lines = {
      listener::correlate::test_lines::LogStart("3.5.1"),
      listener::correlate::test_lines::AppStart("app-plan", kPlanT0),
      R"({"Event":"SparkListenerEnvironmentUpdate","JVM Information":{},"Spark Properties":{)" + properties +
          R"(},"Hadoop Properties":{},"System Properties":{},"Classpath Entries":{}})",
      listener::correlate::test_lines::ExecutorAdded("1", kPlanT0 + 1000),
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":4,)"
      R"("rootExecutionId":4,"description":"q","details":"","physicalPlanDescription":"","sparkPlanInfo":)" +
          PlanJson(log.plan) + R"(,"time":)" + Str(start) + R"(,"modifiedConfigs":{},"jobTags":[]})",
      R"({"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":)" + Str(start) +
          R"(,"Stage Infos":[{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"q","Number of Tasks":)" +
          Str(log.tasks) +
          R"(,"RDD Info":[],"Parent IDs":[],"Details":"","Accumulables":[]}],"Stage IDs":[0],)"
          R"("Properties":{"spark.sql.execution.id":"4"}})",
      listener::correlate::test_lines::StageSubmitted(0, start, log.tasks),
  };
  std::map<std::int64_t, std::int64_t> running;
  for (int task = 0; task < log.tasks; ++task) {
    std::string accumulables;
    for (const auto& [id, value] : log.per_task) {
      running[id] += value;
      accumulables += (accumulables.empty() ? "" : ",") + std::string(R"({"ID":)") + Str(id) +
                      R"(,"Name":"m","Update":")" + Str(value) + R"(","Value":")" + Str(running[id]) +
                      R"(","Internal":true,"Count Failed Values":true,"Metadata":"sql"})";
    }
    lines.push_back(
        R"({"Event":"SparkListenerTaskEnd","Stage ID":0,"Stage Attempt ID":0,"Task Type":"ResultTask",)"
        R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":)" +
        Str(task) + R"(,"Index":)" + Str(task) + R"(,"Attempt":0,"Launch Time":)" + Str(start) +
        R"(,"Executor ID":"1","Host":"h","Locality":"ANY","Speculative":false,"Getting Result Time":0,)"
        R"("Finish Time":)" +
        Str(end) + R"(,"Failed":false,"Killed":false,"Accumulables":[)" + accumulables +
        R"(]},"Task Metrics":{"Executor Deserialize Time":1,"Executor Run Time":)" + Str(log.task_ms) +
        R"(,"Executor CPU Time":1000,"Result Size":10,"JVM GC Time":2,"Result Serialization Time":0,)"
        R"("Memory Bytes Spilled":0,"Disk Bytes Spilled":0,"Peak Execution Memory":0,)"
        R"("Shuffle Read Metrics":{"Remote Bytes Read":0,"Local Bytes Read":0,"Fetch Wait Time":0,)"
        R"("Total Records Read":0},"Shuffle Write Metrics":{"Shuffle Bytes Written":0,)"
        R"("Shuffle Write Time":0,"Shuffle Records Written":0},"Input Metrics":{"Bytes Read":0,)"
        R"("Records Read":0},"Output Metrics":{"Bytes Written":0,"Records Written":0}}})");
  }
  lines.push_back(listener::correlate::test_lines::StageCompleted(0, start, end + 100, log.tasks));
  lines.push_back(listener::correlate::test_lines::JobEnd(0, end + 200));
  std::string updates;
  for (const auto& [id, value] : log.driver)
    updates += (updates.empty() ? "" : ",") + std::string("[") + Str(id) + "," + Str(value) + "]";
  lines.push_back(
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates","executionId":4,)"
      R"("accumUpdates":[)" +
      updates + "]}");
  lines.push_back(listener::correlate::test_lines::SqlExecutionEnd(4, end + 300));
  lines.push_back(listener::correlate::test_lines::AppEnd(end + 1000));
  return lines;
}

// The findings of the application as a whole.
inline std::vector<Finding> DiagnosePlanLog(const PlanLog& log) {
  listener::correlate::ApplicationModel model;
  listener::correlate::test_lines::Feed(model, PlanLogLines(log));
  return DiagnoseApplication(model, RuleThresholds{});
}

inline const Finding* FindPlanFinding(const std::vector<Finding>& findings, std::string_view id) {
  for (const Finding& finding : findings) {
    if (finding.id == id) return &finding;
  }
  return nullptr;
}

}  // namespace sparktrace::diagnose::plan_test_lines
