// SparkConnectTracer with Spark 4's execution_progress: events and attributes on the operation
// span, a live snapshot of the running operation for the store, and nothing for older servers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/connect/call_tracer_test_support.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::connect {
namespace {

using namespace call_tracer_testing;  // NOLINT(google-build-using-namespace): the shared test vocabulary

std::int64_t EventIntOfProgressTest(const SpanEvent& event, std::string_view key) {
  return AttributeAs<std::int64_t>(event.attributes, key).value_or(-1);
}

std::vector<const SpanEvent*> ProgressEventsOf(const Span& span) {
  std::vector<const SpanEvent*> events;
  for (const SpanEvent& event : span.events) {
    if (event.name == kSparkConnectProgressEventName) events.push_back(&event);
  }
  return events;
}

TEST_F(CallTracerTest, Spark4ProgressBecomesEventsAndFinalAttributesOfTheOperation) {
  harness_.spans.ExpectLive();
  Call execute(tracer_, "ExecutePlan", {});
  execute.Send(ReattachableSqlCommand());
  execute.Receive(Progress(0, 10, "p-1"));
  // While it runs: one live snapshot, at the first update (the next one is due an hour later).
  const std::vector<Span> live = harness_.spans.live_spans();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].name, kOperationSpan);
  EXPECT_EQ(StringAttribute(live[0], kSparkConnectOperationStateKey), "running");
  EXPECT_FALSE(StringAttribute(live[0], kSparkConnectOperationOutcomeKey).has_value());
  EXPECT_EQ(IntAttribute(live[0], kSparkConnectProgressTasksTotalKey), 10);
  EXPECT_EQ(IntAttribute(live[0], kSparkConnectProgressTasksDoneKey), 0);
  EXPECT_TRUE(SpansNamed(spans(), kOperationSpan).empty()) << "no final span while it runs";

  execute.Receive(Progress(4, 10, "p-2"));
  execute.Receive(Progress(10, 10, "p-3"));
  execute.Receive(ArrowBatch(5, 50, "r-1"));
  execute.Receive(ResultComplete("r-2"));
  execute.End();
  Call release(tracer_, "ReleaseExecute", {});
  release.Send(ReleaseAll());
  release.Receive(Released());
  release.End();

  EXPECT_EQ(harness_.spans.live_spans().size(), 1u);
  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  EXPECT_EQ(operation.span_id, live[0].span_id) << "the final span replaces the snapshot";
  EXPECT_EQ(operation.trace_id, live[0].trace_id);
  EXPECT_FALSE(StringAttribute(operation, kSparkConnectOperationStateKey).has_value());
  EXPECT_EQ(StringAttribute(operation, kSparkConnectOperationOutcomeKey), "completed");
  EXPECT_EQ(IntAttribute(operation, kSparkConnectProgressTasksDoneKey), 10);
  EXPECT_EQ(IntAttribute(operation, kSparkConnectProgressTasksTotalKey), 10);
  EXPECT_EQ(IntAttribute(operation, kSparkConnectProgressStagesDoneKey), 1);
  EXPECT_EQ(IntAttribute(operation, kSparkConnectProgressStagesTotalKey), 1);
  EXPECT_EQ(IntAttribute(operation, kSparkConnectProgressInputBytesKey), 10'000);
  EXPECT_EQ(IntAttribute(operation, kSparkConnectProgressInflightTasksKey), 0);
  EXPECT_EQ(IntAttribute(operation, kSparkConnectProgressUpdatesKey), 3);

  // Updates microseconds apart, an event interval of an hour: the first and the last are kept.
  const std::vector<const SpanEvent*> events = ProgressEventsOf(operation);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(EventIntOfProgressTest(*events[0], kSparkConnectProgressTasksDoneKey), 0);
  EXPECT_EQ(EventIntOfProgressTest(*events[1], kSparkConnectProgressTasksDoneKey), 10);
  EXPECT_EQ(EventIntOfProgressTest(*events[1], kSparkConnectProgressStagesDoneKey), 1);
  EXPECT_LE(events[0]->time_unix_nano, events[1]->time_unix_nano);
  // All of the span's events, milestones and progress samples together, in time order.
  EXPECT_TRUE(std::is_sorted(
      operation.events.begin(), operation.events.end(),
      [](const SpanEvent& a, const SpanEvent& b) { return a.time_unix_nano < b.time_unix_nano; }));

  EXPECT_EQ(Metric("sparktrace_operation_progress_updates_total"), 3);
  EXPECT_EQ(Metric("sparktrace_operation_progress_snapshots_total"), 1);
  EXPECT_EQ(Metric("sparktrace_operation_progress_events_thinned_total"), 1);
}

TEST_F(CallTracerTest, AnOperationOfAnOlderSparkHasNoProgress) {
  // RecordingSpanSink fails the test on any live span: none may be sent without progress.
  Call execute(tracer_, "ExecutePlan", {});
  execute.Send(Spark35Query());
  execute.Receive(ArrowBatch(1, 8, "r-1", "server-op"));
  execute.End();

  const Span operation = OnlySpanNamed(spans(), kOperationSpan);
  const std::string progress_prefix = std::string(kSparkConnectProgressEventName) + ".";
  for (const Attribute& attribute : operation.attributes) {
    EXPECT_FALSE(attribute.key.starts_with(progress_prefix)) << attribute.key;
  }
  EXPECT_TRUE(ProgressEventsOf(operation).empty());
  EXPECT_EQ(Metric("sparktrace_operation_progress_updates_total"), 0);
}

TEST_F(CallTracerTest, AnUnsampledOperationKeepsProgressButSendsNoSnapshot) {
  TracerHarness unsampled(0.0);
  Call execute(unsampled.tracer, "ExecutePlan", {});
  execute.Send(ReattachableSqlCommand());
  execute.Receive(Progress(2, 10, "p-1"));
  execute.End(proxy::StatusCode::kInternal, "boom");
  EXPECT_TRUE(unsampled.spans.live_spans().empty());
  EXPECT_EQ(unsampled.Metric("sparktrace_operation_progress_updates_total"), 1);
  EXPECT_EQ(unsampled.Metric("sparktrace_operation_progress_snapshots_total"), 0);
}

}  // namespace
}  // namespace sparktrace::tracing::connect
