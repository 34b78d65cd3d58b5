// OperationRegistry against docs/tracing.md: interrupts, released sessions, linger sweeps, shutdown, limits.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/unit/tracing/connect/operation_registry_test_support.h"
#include "tracing/connect/operation_registry.h"

namespace sparktrace::tracing::connect {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// ---------------------------------------------------------------------------------------------
// Interrupts and sessions

TEST_F(OperationRegistryTest, InterruptWhileTheStreamIsOpenEndsWhenTheCallEnds) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  registry_.Interrupted({"op-1"}, At(seconds(2)),
                        {{"spark.connect.interrupt.type", std::string("operation_id")}});
  EXPECT_EQ(sink_.count(), 0u) << "the ExecutePlan call is still open";
  ASSERT_TRUE(operation->ending.has_value());

  // The interrupted stream then ends with an error that would otherwise fail it.
  registry_.CallEnded(operation, StreamEnd(At(seconds(7)), kUnknown, "[OPERATION_CANCELED]"));
  ASSERT_EQ(sink_.count(), 1u);
  const Operation ended = sink_.ended()[0];
  EXPECT_EQ(ended.ending->outcome, OperationOutcome::kInterrupted);
  EXPECT_EQ(ended.end_time(), At(seconds(7))) << "the later call end, not the interrupt";
  const OperationEvent* interrupt = FindEvent(ended, "interrupt");
  ASSERT_NE(interrupt, nullptr);
  EXPECT_EQ(interrupt->at, At(seconds(2)));
  EXPECT_NE(FindAttributeValue(interrupt->attributes, "spark.connect.interrupt.type"), nullptr);
}

TEST_F(OperationRegistryTest, InterruptRequestWinsOverTheStreamErrorThatRacesItsAnswer) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  InterruptRequest request;
  request.scope = InterruptRequest::Scope::kOperation;
  request.target = "op-1";
  request.at = At(seconds(2));
  auto parent = registry_.InterruptRequested(request);
  ASSERT_EQ(parent, operation) << "an Interrupt by id is a child of its operation";
  // Spark fails the stream before the Interrupt call has its answer.
  registry_.CallEnded(operation, StreamEnd(At(seconds(3)), kInternal, "[OPERATION_CANCELED]"));
  EXPECT_EQ(sink_.count(), 0u) << "the Interrupt call is still open";
  OperationCallEnd interrupt_call_end;
  interrupt_call_end.at = At(seconds(4));
  registry_.CallEnded(operation, interrupt_call_end);
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kInterrupted);
  EXPECT_NE(FindEvent(sink_.ended()[0], "interrupt"), nullptr);
}

TEST_F(OperationRegistryTest, InterruptByTagMatchesWithinTheSessionAndParentsToTheOldest) {
  Operation tagged_old = NewOperation("op-old", true, At(seconds(0)));
  tagged_old.tags = {"nightly", "etl"};
  Operation tagged_new = NewOperation("op-new", true, At(seconds(1)));
  tagged_new.tags = {"etl"};
  Operation untagged = NewOperation("op-untagged", true, At(seconds(1)));
  Operation other_session = NewOperation("op-other", true, At(seconds(0)), "session-b");
  other_session.tags = {"etl"};
  auto old_op = registry_.Start(std::move(tagged_old)).first;
  auto new_op = registry_.Start(std::move(tagged_new)).first;
  auto untagged_op = registry_.Start(std::move(untagged)).first;
  auto other_op = registry_.Start(std::move(other_session)).first;

  InterruptRequest request;
  request.scope = InterruptRequest::Scope::kTag;
  request.session_id = "session-a";
  request.target = "etl";
  request.at = At(seconds(5));
  EXPECT_EQ(registry_.InterruptRequested(request), old_op);
  EXPECT_TRUE(old_op->interrupt_requested);
  EXPECT_TRUE(new_op->interrupt_requested);
  EXPECT_FALSE(untagged_op->interrupt_requested);
  EXPECT_FALSE(other_op->interrupt_requested) << "tags are matched within the session only";

  request.scope = InterruptRequest::Scope::kSession;
  request.session_id = "session-b";
  EXPECT_EQ(registry_.InterruptRequested(request), nullptr)
      << "a session-wide Interrupt is a span of its own";
  EXPECT_TRUE(other_op->interrupt_requested);
}

TEST_F(OperationRegistryTest, InterruptOfAnIdleOperationEndsItAtOnce) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  registry_.Interrupted({"op-1", "unknown-op"}, At(seconds(9)), {});
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kInterrupted);
  EXPECT_EQ(sink_.ended()[0].end_time(), At(seconds(9)));
  registry_.Interrupted({"op-1"}, At(seconds(10)), {});
  EXPECT_EQ(sink_.count(), 1u) << "a second interrupt finds nothing to end";
}

// Once its ExecutePlan call is over (the proxy has destroyed that call's tap), a cut operation is
// owned by the registry alone. Ending it must not free it before the sink has read it.
TEST_F(OperationRegistryTest, InterruptOfAnOperationOnlyTheRegistryHoldsHandsOverALiveOperation) {
  {
    auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
    registry_.CallEnded(operation, StreamEnd(At(seconds(5))));
  }  // the last reference outside the registry is gone
  registry_.Interrupted({"op-1"}, At(seconds(9)), {{"spark.connect.interrupt.type", std::string("tag")}});
  ASSERT_EQ(sink_.count(), 1u);
  const Operation ended = sink_.ended()[0];
  EXPECT_EQ(ended.operation_id, "op-1");
  ASSERT_TRUE(ended.ending.has_value());
  EXPECT_EQ(ended.ending->outcome, OperationOutcome::kInterrupted);
  EXPECT_EQ(ended.ending->at, At(seconds(9)));
  EXPECT_EQ(ended.started_at, At(seconds(0)));
  EXPECT_EQ(ended.last_call_end, At(seconds(5)));
  EXPECT_TRUE(HasEvent(ended, "stream_cut"));
  EXPECT_TRUE(HasEvent(ended, "interrupt"));
}

TEST_F(OperationRegistryTest, SessionReleasedEndsOnlyThatSessionsOperations) {
  auto complete = StartAndCut("a-complete", At(seconds(0)), At(seconds(1)), "session-a");
  auto [running, created] = registry_.Start(NewOperation("a-running", true, At(seconds(0)), "session-a"));
  StartAndCut("b-cut", At(seconds(0)), At(seconds(1)), "session-b");
  ASSERT_NE(registry_.Attach("a-complete", {"reattach", At(seconds(2)), {}}, true), nullptr);
  registry_.RecordResultComplete(complete, At(seconds(3)));
  registry_.CallEnded(complete, StreamEnd(At(seconds(3))));
  ASSERT_EQ(sink_.count(), 0u);

  registry_.SessionReleased("session-a", At(seconds(10)));
  ASSERT_EQ(sink_.count(), 1u) << "the running one waits for its call";
  EXPECT_EQ(sink_.ended()[0].operation_id, "a-complete");
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kCompleted);
  EXPECT_EQ(sink_.ended()[0].end_time(), At(seconds(10)));

  registry_.CallEnded(running, StreamEnd(At(seconds(11)), kCancelled, "session closed"));
  ASSERT_EQ(sink_.count(), 2u);
  EXPECT_EQ(sink_.ended()[1].operation_id, "a-running");
  EXPECT_EQ(sink_.ended()[1].ending->outcome, OperationOutcome::kReleased);
  EXPECT_EQ(sink_.ended()[1].end_time(), At(seconds(11)));
  EXPECT_EQ(registry_.open_operations(), 1u) << "session-b's operation is untouched";
}

// ---------------------------------------------------------------------------------------------
// Linger, shutdown, limits

TEST_F(OperationRegistryTest, SweepAbandonsAnOperationNobodyCameBackForAfterTheLinger) {
  StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  registry_.Sweep(At(seconds(35) - milliseconds(1)));
  EXPECT_EQ(sink_.count(), 0u) << "still within the linger";
  registry_.Sweep(At(seconds(35)));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kAbandoned);
  EXPECT_EQ(sink_.ended()[0].end_time(), At(seconds(5))) << "it ends where its last call did";
  EXPECT_EQ(registry_.open_operations(), 0u);
}

TEST_F(OperationRegistryTest, SweepCompletesAnUnreleasedOperationThatHadItsResult) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  registry_.RecordResultComplete(operation, At(seconds(4)));
  registry_.CallEnded(operation, StreamEnd(At(seconds(5))));
  EXPECT_EQ(sink_.count(), 0u);
  registry_.Sweep(At(seconds(40)));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kCompleted);
}

TEST_F(OperationRegistryTest, SweepAbandonsAnOperationLeftAfterARetryableFailure) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  registry_.CallEnded(operation, StreamEnd(At(seconds(5)), kUnavailable, "Socket closed"));
  registry_.Sweep(At(seconds(35)));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kAbandoned);
}

TEST_F(OperationRegistryTest, SweepNeverEndsAnOperationWithAnOpenCall) {
  registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  registry_.Sweep(At(std::chrono::hours(10)));
  EXPECT_EQ(sink_.count(), 0u);
  EXPECT_EQ(registry_.open_operations(), 1u);
}

TEST_F(OperationRegistryTest, EveryCallRestartsTheLinger) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  ASSERT_NE(registry_.Attach("op-1", {"reattach", At(seconds(20)), {}}, true), nullptr);
  registry_.CallEnded(operation, StreamEnd(At(seconds(25))));  // cut again
  registry_.Sweep(At(seconds(54)));
  EXPECT_EQ(sink_.count(), 0u) << "30 s count from the reattach's end at 25 s";
  registry_.Sweep(At(seconds(55)));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kAbandoned);
  EXPECT_EQ(sink_.ended()[0].end_time(), At(seconds(25)));
}

TEST_F(OperationRegistryTest, ShutdownEndsEverythingUnfinishedAndOnlyOnce) {
  auto [open, created] = registry_.Start(NewOperation("op-open", true, At(seconds(0))));
  StartAndCut("op-idle", At(seconds(0)), At(seconds(1)));
  registry_.Shutdown(At(seconds(100)));

  ASSERT_EQ(sink_.count(), 2u);
  for (const Operation& ended : sink_.ended()) {
    EXPECT_EQ(ended.ending->outcome, OperationOutcome::kUnfinished) << ended.operation_id;
    EXPECT_EQ(ended.end_time(), At(seconds(100))) << ended.operation_id;
  }
  EXPECT_EQ(registry_.open_operations(), 0u);
  // A call still draining after shutdown must not hand the operation over again.
  registry_.CallEnded(open, StreamEnd(At(seconds(101))));
  registry_.Sweep(At(std::chrono::hours(10)));
  registry_.Shutdown(At(seconds(200)));
  EXPECT_EQ(sink_.count(), 2u);
}

TEST(OperationRegistryLimits, AtMaxOperationsTheOldestIdleOneIsAbandoned) {
  RecordingOperationSink sink;
  OperationRegistryOptions options = TestOptions();
  options.max_operations = 2;
  OperationRegistry registry(sink, options);
  auto [older, older_created] = registry.Start(NewOperation("older", true, At(seconds(0))));
  registry.CallEnded(older, StreamEnd(At(seconds(1))));
  auto [newer, newer_created] = registry.Start(NewOperation("newer", true, At(seconds(0))));
  registry.CallEnded(newer, StreamEnd(At(seconds(2))));
  ASSERT_EQ(sink.count(), 0u);

  auto [third, third_created] = registry.Start(NewOperation("third", true, At(seconds(3))));
  ASSERT_TRUE(third_created);
  ASSERT_EQ(sink.count(), 1u);
  EXPECT_EQ(sink.ended()[0].operation_id, "older");
  EXPECT_EQ(sink.ended()[0].ending->outcome, OperationOutcome::kAbandoned);
  EXPECT_EQ(sink.ended()[0].end_time(), At(seconds(1)));
  EXPECT_EQ(registry.open_operations(), 2u);
  EXPECT_EQ(registry.Attach("older", {"reattach", At(seconds(4)), {}}, true), nullptr);
  EXPECT_NE(registry.Attach("newer", {"reattach", At(seconds(4)), {}}, true), nullptr);
}

TEST(OperationRegistryLimits, OperationsWithOpenCallsAreNeverEvicted) {
  RecordingOperationSink sink;
  OperationRegistryOptions options = TestOptions();
  options.max_operations = 2;
  OperationRegistry registry(sink, options);
  registry.Start(NewOperation("a", true, At(seconds(0))));
  registry.Start(NewOperation("b", true, At(seconds(1))));
  registry.Start(NewOperation("c", true, At(seconds(2))));
  EXPECT_EQ(sink.count(), 0u);
  EXPECT_EQ(registry.open_operations(), 3u) << "tracks one more rather than end a running operation";
}

TEST_F(OperationRegistryTest, DuplicateOperationIdJoinsTheOpenOperation) {
  auto [original, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  ASSERT_TRUE(created);
  auto [joined, joined_created] = registry_.Start(NewOperation("op-1", true, At(seconds(1))));
  EXPECT_FALSE(joined_created);
  EXPECT_EQ(joined, original);
  EXPECT_EQ(original->open_calls, 2);
  EXPECT_EQ(registry_.open_operations(), 1u);

  // Spark refuses the duplicate; its call is an ordinary child and does not end the operation.
  registry_.CallEnded(joined, OtherEnd(At(seconds(2))));
  EXPECT_EQ(sink_.count(), 0u);
  registry_.CallEnded(original, StreamEnd(At(seconds(3)), kInternal, "[DIVIDE_BY_ZERO]"));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].started_at, At(seconds(0)));

  // Once ended, the id may start a new operation.
  auto [again, again_created] = registry_.Start(NewOperation("op-1", true, At(seconds(4))));
  EXPECT_TRUE(again_created);
  EXPECT_NE(again, original);
}

TEST_F(OperationRegistryTest, TheSinkHearsOfEachOperationOnceWhateverEndsItLater) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  registry_.Interrupted({"op-1"}, At(seconds(1)), {});
  registry_.SessionReleased("session-a", At(seconds(2)));
  registry_.CallEnded(operation, StreamEnd(At(seconds(3)), kInvalidArgument, "x"));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kInterrupted)
      << "the first ending decided wins";
  registry_.CallEnded(operation, ReleaseAllEnd(At(seconds(4))));
  registry_.Interrupted({"op-1"}, At(seconds(5)), {});
  registry_.SessionReleased("session-a", At(seconds(6)));
  registry_.Sweep(At(std::chrono::hours(10)));
  registry_.Shutdown(At(std::chrono::hours(11)));
  EXPECT_EQ(sink_.count(), 1u);
}

}  // namespace
}  // namespace sparktrace::tracing::connect
