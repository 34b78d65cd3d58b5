// The parser's shortcuts for the bytes Spark writes (issue 31's throughput budget), each against
// the shape it does not take: raw keys vs escaped keys or spaces around ':', a visit that stops
// once its wanted keys are read vs the same keys in another order, a metric name taken raw vs
// one with escapes, and accumulable updates summed by hand vs signed or long ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "listener/events/spark_event.h"
#include "tests/unit/listener/events/listener_event_parser_test_support.h"

namespace sparktrace::listener::events {
namespace {

std::string FastPathTaskEnd(const std::string& executor_metrics, const std::string& accumulables) {
  return R"({"Event":"SparkListenerTaskEnd","Stage ID":2,"Stage Attempt ID":0,)"
         R"("Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":9,"Launch Time":10,)"
         R"("Finish Time":20,"Accumulables":[)" +
         accumulables + R"(]},"Task Executor Metrics":)" + executor_metrics +
         R"(,"Task Metrics":{"Executor Run Time":7,"Shuffle Read Metrics":{"Remote Bytes Read":1,)"
         R"("Local Bytes Read":2,"Fetch Wait Time":3,"Total Records Read":4,"Remote Requests Duration":0,)"
         R"("Push Based Shuffle":{"Merged Remote Bytes Read":9}}}})";
}

TEST(ListenerEventFastPaths, KeysWithEscapesOrSpacesReadTheSameAsPlainOnes) {
  const auto plain = ParseAs<TaskStart>(
      R"({"Event":"SparkListenerTaskStart","Stage ID":3,"Stage Attempt ID":0,)"
      R"("Task Info":{"Task ID":77,"Index":1,"Attempt":2,"Launch Time":5,"Executor ID":"4"}})");
  const auto escaped = ParseAs<TaskStart>(
      R"({"Event":"SparkListenerTaskStart","Stage\u0020ID":3,"Stage Attempt ID" : 0,)"
      R"("Task Info" :{"Task\u0020ID":77, "Index":1,"Attempt"	:2,"Launch Time":5,"Executor ID":"4"}})");
  EXPECT_EQ(escaped.stage_id, plain.stage_id);
  EXPECT_EQ(escaped.task_id, 77);
  EXPECT_EQ(escaped.index, 1);
  EXPECT_EQ(escaped.attempt, 2);
  EXPECT_EQ(escaped.executor_id, "4");
  // A key that only starts like a wanted one is another key.
  EXPECT_NE(
      ErrorOf(R"({"Event":"SparkListenerTaskStart","Stage IDs":3,"Task Info":{"Task ID":1,"Launch Time":5}})")
          .find("Stage ID"),
      std::string::npos);
}

TEST(ListenerEventFastPaths, VisitsStopOnlyOnceEveryWantedKeyIsRead) {
  // Spark's order: the heap first, the shuffle figures before the push-based ones.
  const auto spark_order =
      ParseAs<TaskEnd>(FastPathTaskEnd(R"({"JVMHeapMemory":100,"JVMOffHeapMemory":5})", ""));
  EXPECT_EQ(spark_order.executor_peak_jvm_heap_bytes, 100);
  EXPECT_EQ(spark_order.metrics.shuffle_remote_bytes_read, 1);
  EXPECT_EQ(spark_order.metrics.shuffle_records_read, 4);
  EXPECT_EQ(spark_order.metrics.executor_run_time_ms, 7);
  // The heap last of several gauges: still found.
  const auto heap_last = ParseAs<TaskEnd>(
      FastPathTaskEnd(R"({"JVMOffHeapMemory":5,"OnHeapStorageMemory":6,"JVMHeapMemory":200})", ""));
  EXPECT_EQ(heap_last.executor_peak_jvm_heap_bytes, 200);
  // What follows the wanted keys is skipped, not read, as the gauges nobody reads always were.
  const auto after =
      ParseAs<TaskEnd>(FastPathTaskEnd(R"({"JVMHeapMemory":300,"JVMOffHeapMemory":"odd"})", ""));
  EXPECT_EQ(after.executor_peak_jvm_heap_bytes, 300);
  // A task start stops at "Speculative"; a task end reads on to "Finish Time", "Failed", "Killed".
  const auto start = ParseAs<TaskStart>(
      R"({"Event":"SparkListenerTaskStart","Stage ID":3,"Stage Attempt ID":0,"Task Info":{"Task ID":77,)"
      R"("Index":1,"Attempt":0,"Launch Time":5,"Executor ID":"4","Speculative":true,"Finish Time":0,)"
      R"("Failed":"not read","Accumulables":[]}})");
  EXPECT_TRUE(start.speculative);
  const auto end = ParseAs<TaskEnd>(FastPathTaskEnd("null", ""));
  EXPECT_EQ(end.finish_time_ms, 20);
}

TEST(ListenerEventFastPaths, AccumulableUpdatesOfEveryShapeAreRead) {
  const auto task = ParseAs<TaskEnd>(FastPathTaskEnd(
      "null",
      R"({"ID":40,"Name":"rows","Update":"7"},{"ID":41,"Name":"time","Update":"-3"},)"
      R"({"ID":42,"Name":"bytes","Update":"9223372036854775807"},{"ID":43,"Name":"big","Update":"99999999999999999999"},)"
      R"({"ID":44,"Name":"gpuTime","Update":"00:00:00.054"},{"ID":45,"Name":"plain","Update":12},)"
      R"({"ID":46,"Name":"plus","Update":"+1"},{"ID":47,"Name":"empty","Update":""})"));
  ASSERT_EQ(task.accumulable_updates.size(), 4u);
  EXPECT_EQ(task.accumulable_updates[0].update, 7);
  EXPECT_EQ(task.accumulable_updates[1].update, -3);
  EXPECT_EQ(task.accumulable_updates[2].update, 9223372036854775807);
  EXPECT_EQ(task.accumulable_updates[3].accumulator_id, 45);
  EXPECT_EQ(task.accumulable_updates[3].update, 12);
}

TEST(ListenerEventFastPaths, PlanMetricNamesWithEscapesAreUnescaped) {
  const auto start = ParseAs<SqlExecutionStart>(
      R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":1,)"
      R"("description":"q","details":"","physicalPlanDescription":"","sparkPlanInfo":{"nodeName":"Scan",)"
      R"("simpleString":"Scan","children":[],"metadata":{},"metrics":[)"
      R"({"name":"number of output rows","accumulatorId":3,"metricType":"sum","experimental":false},)"
      R"({"name":"time \"in\" scan","accumulatorId":4,"metricType":"tim\u0069ng"},)"
      R"({"metricType":"size","accumulatorId":5,"name":"size"}]},"time":1})");
  ASSERT_TRUE(start.plan);
  const std::vector<SqlPlanMetric>& metrics = start.plan->nodes.at(0).metrics;
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_EQ(metrics[0].name, "number of output rows");
  EXPECT_EQ(metrics[0].type, "sum");
  EXPECT_EQ(metrics[1].name, "time \"in\" scan");
  EXPECT_EQ(metrics[1].type, "timing");
  EXPECT_EQ(metrics[2].name, "size");
  EXPECT_EQ(metrics[2].accumulator_id, 5);
}

}  // namespace
}  // namespace sparktrace::listener::events
