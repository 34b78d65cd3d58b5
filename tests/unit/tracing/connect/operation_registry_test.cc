// OperationRegistry against docs/tracing.md, "Operation spans": operations ending on their own calls.
#include "tracing/connect/operation_registry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/tracing/connect/operation_registry_test_support.h"

namespace sparktrace::tracing::connect {
namespace {

using std::chrono::seconds;

// ---------------------------------------------------------------------------------------------
// Not reattachable

TEST_F(OperationRegistryTest, NonReattachableCompletesWhenItsStreamEnds) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", false, At(seconds(0))));
  ASSERT_TRUE(created);
  EXPECT_EQ(operation->open_calls, 1);
  EXPECT_EQ(registry_.open_operations(), 1u);
  OperationCallEnd end = StreamEnd(At(seconds(5)));
  end.rows = 10;
  end.arrow_bytes = 100;
  end.batches = 2;
  registry_.CallEnded(operation, end);

  // Spark 3.4 sends no result_complete: the end of the stream is the end of the execution.
  ASSERT_EQ(sink_.count(), 1u);
  const Operation ended = sink_.ended()[0];
  EXPECT_EQ(ended.operation_id, "op-1");
  ASSERT_TRUE(ended.ending.has_value());
  EXPECT_EQ(ended.ending->outcome, OperationOutcome::kCompleted);
  EXPECT_EQ(ended.end_time(), At(seconds(5)));
  EXPECT_EQ(ended.rows, 10);
  EXPECT_EQ(ended.arrow_bytes, 100u);
  EXPECT_EQ(ended.batches, 2u);
  EXPECT_TRUE(ended.ended);
  EXPECT_EQ(registry_.open_operations(), 0u);
}

// What comes after an operation ended (a release after a failure, driver events) still finds its
// span, whatever the outcome, for the last max_remembered_ended operations.
TEST(OperationRegistryEnded, EndedOperationsStayAddressableWithinTheBound) {
  RecordingOperationSink sink;
  OperationRegistryOptions options = TestOptions();
  options.max_remembered_ended = 2;
  OperationRegistry registry(sink, options);
  for (const char* id : {"op-1", "op-2", "op-3"}) {
    Operation fresh = NewOperation(id, false, At(seconds(0)));
    fresh.span_id[0] = static_cast<std::uint8_t>(id[3]);
    auto [operation, created] = registry.Start(std::move(fresh));
    ASSERT_TRUE(created);
    EXPECT_EQ(registry.EndedSpanOf(id), std::nullopt) << "open, not ended";
    // op-2 fails, the others complete: every outcome stays addressable.
    registry.CallEnded(operation, std::string_view(id) == "op-2" ? StreamEnd(At(seconds(1)), 13, "boom")
                                                                 : StreamEnd(At(seconds(1))));
  }
  ASSERT_EQ(sink.count(), 3u);
  EXPECT_EQ(registry.EndedSpanOf("op-1"), std::nullopt) << "the oldest is forgotten past the bound";
  for (const char* id : {"op-2", "op-3"}) {
    const std::optional<OperationSpanInfo> span = registry.EndedSpanOf(id);
    ASSERT_TRUE(span.has_value()) << id;
    EXPECT_EQ(span->span_id[0], static_cast<std::uint8_t>(id[3]));
    EXPECT_TRUE(span->sampled);
  }
  EXPECT_EQ(registry.Attach("op-2", {"release", At(seconds(2)), {}}, false), nullptr)
      << "an ended operation is not reopened";
}

TEST_F(OperationRegistryTest, NonReattachableWithResultCompleteCompletesAtTheStreamsEnd) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", false, At(seconds(0))));
  registry_.RecordFirstResponse(operation, At(seconds(1)), "server-session");
  registry_.RecordFirstBatch(operation, At(seconds(2)));
  registry_.RecordResultComplete(operation, At(seconds(3)));
  EXPECT_EQ(sink_.count(), 0u) << "the span never ends before its ExecutePlan call";
  registry_.CallEnded(operation, StreamEnd(At(seconds(4))));

  ASSERT_EQ(sink_.count(), 1u);
  const Operation ended = sink_.ended()[0];
  EXPECT_EQ(ended.ending->outcome, OperationOutcome::kCompleted);
  EXPECT_EQ(ended.end_time(), At(seconds(4)));
  EXPECT_EQ(ended.server_side_session_id, "server-session");
  EXPECT_TRUE(HasEvent(ended, "first_response"));
  EXPECT_TRUE(HasEvent(ended, "first_batch"));
  EXPECT_TRUE(HasEvent(ended, "result_complete"));
  EXPECT_FALSE(HasEvent(ended, "stream_cut"));
}

// "It ends at the first of: result_complete of an execution that is not reattachable, ...": a
// client that goes away after reading result_complete (its call ends CANCELLED) did not fail the
// execution, which had already completed.
TEST_F(OperationRegistryTest, NonReattachableStaysCompletedWhenTheCallFailsAfterResultComplete) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", false, At(seconds(0))));
  registry_.RecordResultComplete(operation, At(seconds(3)));
  registry_.CallEnded(operation, StreamEnd(At(seconds(4)), kCancelled, "client went away"));

  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kCompleted)
      << "outcome " << OperationOutcomeName(sink_.ended()[0].ending->outcome);
}

TEST_F(OperationRegistryTest, NonReattachableFailsOnAnyErrorEvenARetryableOne) {
  for (int code : {kUnavailable, kCancelled, kDeadlineExceeded, kInternal, kUnknown, kInvalidArgument}) {
    RecordingOperationSink sink;
    OperationRegistry registry(sink, TestOptions());
    auto [operation, created] = registry.Start(NewOperation("op-1", false, At(seconds(0))));
    registry.CallEnded(operation, StreamEnd(At(seconds(2)), code, kDisconnected));
    ASSERT_EQ(sink.count(), 1u) << "code " << code;
    const Operation ended = sink.ended()[0];
    EXPECT_EQ(ended.ending->outcome, OperationOutcome::kFailed) << "code " << code;
    EXPECT_EQ(ended.ending->status_code, code);
    EXPECT_EQ(ended.ending->status_message, kDisconnected);
    const OperationEvent* error = FindEvent(ended, "error");
    ASSERT_NE(error, nullptr) << "code " << code;
    const AttributeValue* status = FindAttributeValue(error->attributes, "rpc.grpc.status_code");
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(std::get<std::int64_t>(*status), code);
  }
}

// ---------------------------------------------------------------------------------------------
// Reattachable

TEST_F(OperationRegistryTest, ReattachableStreamCutKeepsTheOperationOpen) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  EXPECT_EQ(sink_.count(), 0u) << "an OK stream without result_complete is a cut, not an end";
  EXPECT_EQ(registry_.open_operations(), 1u);
  EXPECT_FALSE(operation->ending.has_value());
  EXPECT_EQ(operation->open_calls, 0);
  EXPECT_TRUE(HasEvent(*operation, "stream_cut"));
}

TEST_F(OperationRegistryTest, ReattachCountsAndReleaseAllAfterResultCompleteCompletes) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));

  auto reattached = registry_.Attach(
      "op-1", {"reattach", At(seconds(6)), {{"spark.connect.reattach.last_response_id", std::string("r-2")}}},
      true);
  ASSERT_EQ(reattached, operation) << "the reattach finds its ExecutePlan's operation";
  EXPECT_EQ(operation->reattaches, 1u);
  EXPECT_EQ(operation->open_calls, 1);
  registry_.RecordResultComplete(operation, At(seconds(7)));
  OperationCallEnd reattach_end = StreamEnd(At(seconds(8)));
  reattach_end.rows = 7;
  reattach_end.arrow_bytes = 70;
  reattach_end.batches = 1;
  registry_.CallEnded(operation, reattach_end);
  EXPECT_EQ(sink_.count(), 0u) << "a complete reattachable result is kept by Spark until it is released";

  auto released = registry_.Attach(
      "op-1", {"release", At(seconds(9)), {{"spark.connect.release", std::string("all")}}}, false);
  ASSERT_EQ(released, operation);
  registry_.CallEnded(operation, ReleaseAllEnd(At(seconds(10))));

  ASSERT_EQ(sink_.count(), 1u);
  const Operation ended = sink_.ended()[0];
  EXPECT_EQ(ended.ending->outcome, OperationOutcome::kCompleted);
  EXPECT_EQ(ended.end_time(), At(seconds(10)));
  EXPECT_EQ(ended.reattaches, 1u);
  EXPECT_EQ(ended.rows, 7);
  EXPECT_EQ(ended.batches, 1u);
  const OperationEvent* reattach = FindEvent(ended, "reattach");
  ASSERT_NE(reattach, nullptr);
  EXPECT_EQ(reattach->at, At(seconds(6)));
  const AttributeValue* last_response =
      FindAttributeValue(reattach->attributes, "spark.connect.reattach.last_response_id");
  ASSERT_NE(last_response, nullptr);
  EXPECT_EQ(std::get<std::string>(*last_response), "r-2");
  EXPECT_TRUE(HasEvent(ended, "release"));
  EXPECT_EQ(registry_.open_operations(), 0u);
  EXPECT_EQ(registry_.Attach("op-1", {"reattach", At(seconds(11)), {}}, true), nullptr)
      << "an ended operation is gone";
}

TEST_F(OperationRegistryTest, ReleaseAllBeforeResultCompleteIsReleased) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  ASSERT_NE(registry_.Attach("op-1", {"release", At(seconds(6)), {}}, false), nullptr);
  registry_.CallEnded(operation, ReleaseAllEnd(At(seconds(7))));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kReleased);
  EXPECT_EQ(sink_.ended()[0].end_time(), At(seconds(7)));
}

TEST_F(OperationRegistryTest, ReleaseUntilAndFailedReleaseAllDoNotEndTheOperation) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  ASSERT_NE(registry_.Attach("op-1", {"release", At(seconds(6)), {}}, false), nullptr);
  registry_.CallEnded(operation, OtherEnd(At(seconds(7))));  // release_until
  ASSERT_NE(registry_.Attach("op-1", {"release", At(seconds(8)), {}}, false), nullptr);
  registry_.CallEnded(operation, ReleaseAllEnd(At(seconds(9)), kUnavailable));
  EXPECT_EQ(sink_.count(), 0u);
  EXPECT_EQ(registry_.open_operations(), 1u);
}

TEST_F(OperationRegistryTest, ReleaseAllWhileAReattachIsOpenEndsWithTheReattach) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  ASSERT_NE(registry_.Attach("op-1", {"reattach", At(seconds(6)), {}}, true), nullptr);
  ASSERT_NE(registry_.Attach("op-1", {"release", At(seconds(7)), {}}, false), nullptr);
  registry_.CallEnded(operation, ReleaseAllEnd(At(seconds(8))));
  EXPECT_EQ(sink_.count(), 0u) << "the span never ends before its children";
  registry_.CallEnded(operation, StreamEnd(At(seconds(12)), kCancelled, "released"));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kReleased);
  EXPECT_EQ(sink_.ended()[0].end_time(), At(seconds(12)));
}

TEST(IsReattachableFailure, OnlyWhatSparkClientsRetry) {
  EXPECT_TRUE(IsReattachableFailure(kUnavailable, "connection reset"));
  EXPECT_TRUE(IsReattachableFailure(kCancelled, ""));
  EXPECT_TRUE(IsReattachableFailure(kDeadlineExceeded, "deadline"));
  EXPECT_TRUE(IsReattachableFailure(kInternal, kDisconnected));
  EXPECT_FALSE(IsReattachableFailure(kInternal, "[INVALID_CURSOR.POSITION_NOT_AVAILABLE] gone"));
  EXPECT_FALSE(IsReattachableFailure(kInternal, ""));
  EXPECT_FALSE(IsReattachableFailure(kUnknown, kDisconnected)) << "the marker only counts on INTERNAL";
  EXPECT_FALSE(IsReattachableFailure(kInvalidArgument, "bad plan"));
  EXPECT_FALSE(IsReattachableFailure(kNotFound, "[INVALID_HANDLE.OPERATION_NOT_FOUND]"));
  EXPECT_FALSE(IsReattachableFailure(kOk, ""));
}

struct RetryableFailure {
  int code;
  std::string message;
};

void PrintTo(const RetryableFailure& failure, std::ostream* out) {
  *out << "code " << failure.code << " \"" << failure.message << "\"";
}

class OperationRegistryRetryableFailure : public OperationRegistryTest,
                                          public testing::WithParamInterface<RetryableFailure> {};

TEST_P(OperationRegistryRetryableFailure, KeepsAReattachableOperationOpenForTheClientToReattach) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  registry_.CallEnded(operation, StreamEnd(At(seconds(3)), GetParam().code, GetParam().message));
  EXPECT_EQ(sink_.count(), 0u);
  EXPECT_FALSE(operation->ending.has_value());
  EXPECT_TRUE(HasEvent(*operation, "error"));
  // The client comes back, and this time the execution completes and is released.
  ASSERT_NE(registry_.Attach("op-1", {"reattach", At(seconds(4)), {}}, true), nullptr);
  registry_.RecordResultComplete(operation, At(seconds(5)));
  registry_.CallEnded(operation, StreamEnd(At(seconds(6))));
  ASSERT_NE(registry_.Attach("op-1", {"release", At(seconds(7)), {}}, false), nullptr);
  registry_.CallEnded(operation, ReleaseAllEnd(At(seconds(8))));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kCompleted);
}

INSTANTIATE_TEST_SUITE_P(Retryable, OperationRegistryRetryableFailure,
                         testing::Values(RetryableFailure{kUnavailable, "Socket closed"},
                                         RetryableFailure{kCancelled, "Cancelled"},
                                         RetryableFailure{kDeadlineExceeded, "Deadline Exceeded"},
                                         RetryableFailure{kInternal, kDisconnected}));

TEST_F(OperationRegistryTest, TerminalFailureEndsAReattachableOperationAsFailed) {
  for (const auto& [code, message] :
       std::vector<std::pair<int, std::string>>{{kInternal, "[DIVIDE_BY_ZERO] Division by zero."},
                                                {kUnknown, "boom"},
                                                {kInvalidArgument, "[TABLE_OR_VIEW_NOT_FOUND]"},
                                                {kNotFound, "[INVALID_HANDLE.OPERATION_NOT_FOUND]"}}) {
    RecordingOperationSink sink;
    OperationRegistry registry(sink, TestOptions());
    auto [operation, created] = registry.Start(NewOperation("op-1", true, At(seconds(0))));
    registry.CallEnded(operation, StreamEnd(At(seconds(3)), code, message));
    ASSERT_EQ(sink.count(), 1u) << "code " << code;
    EXPECT_EQ(sink.ended()[0].ending->outcome, OperationOutcome::kFailed);
    EXPECT_EQ(sink.ended()[0].ending->status_code, code);
    EXPECT_EQ(sink.ended()[0].ending->status_message, message);
    EXPECT_EQ(sink.ended()[0].end_time(), At(seconds(3)));
  }
}

TEST_F(OperationRegistryTest, TerminalFailureOfAReattachEndsTheOperation) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(5)));
  ASSERT_NE(registry_.Attach("op-1", {"reattach", At(seconds(6)), {}}, true), nullptr);
  registry_.CallEnded(operation,
                      StreamEnd(At(seconds(7)), kInternal, "[INVALID_CURSOR.POSITION_NOT_AVAILABLE]"));
  ASSERT_EQ(sink_.count(), 1u);
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kFailed);
  EXPECT_EQ(sink_.ended()[0].reattaches, 1u);
}

// ---------------------------------------------------------------------------------------------
// Operations whose id the server picks

TEST_F(OperationRegistryTest, IdentifyMakesAServerNamedOperationFindable) {
  auto [operation, created] = registry_.Start(NewOperation("", true, At(seconds(0))));
  ASSERT_TRUE(created);
  EXPECT_EQ(registry_.open_operations(), 0u) << "nothing to find it by yet";
  EXPECT_EQ(registry_.Attach("server-op", {"reattach", At(seconds(1)), {}}, true), nullptr);

  registry_.Identify(operation, "server-op");
  EXPECT_EQ(operation->operation_id, "server-op");
  EXPECT_EQ(registry_.open_operations(), 1u);
  registry_.Identify(operation, "another-id");
  EXPECT_EQ(operation->operation_id, "server-op") << "the first response's id sticks";

  // Now it can be come back to: a cut keeps it open, and a reattach finds it.
  registry_.CallEnded(operation, StreamEnd(At(seconds(2))));
  EXPECT_EQ(sink_.count(), 0u);
  EXPECT_EQ(registry_.Attach("server-op", {"reattach", At(seconds(3)), {}}, true), operation);
}

TEST_F(OperationRegistryTest, AReattachableOperationNeverIdentifiedEndsWithItsStream) {
  auto [operation, created] = registry_.Start(NewOperation("", true, At(seconds(0))));
  registry_.CallEnded(operation, StreamEnd(At(seconds(2)), kUnavailable, "Socket closed"));
  ASSERT_EQ(sink_.count(), 1u) << "without an id nobody can reattach, so nothing would end it later";
  EXPECT_EQ(sink_.ended()[0].ending->outcome, OperationOutcome::kFailed);

  auto [cut, cut_created] = registry_.Start(NewOperation("", true, At(seconds(3))));
  registry_.CallEnded(cut, StreamEnd(At(seconds(4))));
  ASSERT_EQ(sink_.count(), 2u);
  EXPECT_EQ(sink_.ended()[1].ending->outcome, OperationOutcome::kCompleted);
}

TEST_F(OperationRegistryTest, AnEndedOperationCannotBeIdentified) {
  auto [operation, created] = registry_.Start(NewOperation("", false, At(seconds(0))));
  registry_.CallEnded(operation, StreamEnd(At(seconds(1))));
  ASSERT_EQ(sink_.count(), 1u);
  registry_.Identify(operation, "late-id");
  EXPECT_EQ(registry_.open_operations(), 0u);
  EXPECT_EQ(registry_.Attach("late-id", {"reattach", At(seconds(2)), {}}, true), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Reattach: open, ended, or never seen here

TEST_F(OperationRegistryTest, ReattachOfAnOpenOperationAttachesAndLeavesTheUnseenOneUnused) {
  auto operation = StartAndCut("op-1", At(seconds(0)), At(seconds(1)));
  const ReattachTarget target = registry_.Reattach(
      "op-1", {"reattach", At(seconds(2)), {{"spark.connect.reattach.last_response_id", std::string("r-1")}}},
      NewOperation("", true, At(seconds(2))));
  EXPECT_EQ(target.operation, operation);
  EXPECT_FALSE(target.first_seen);
  EXPECT_EQ(target.ended, std::nullopt);
  EXPECT_EQ(operation->open_calls, 1);
  EXPECT_EQ(operation->reattaches, 1u);
  EXPECT_EQ(operation->started_at, At(seconds(0)));
  const OperationEvent* event = FindEvent(*operation, "reattach");
  ASSERT_NE(event, nullptr);
  EXPECT_EQ(event->at, At(seconds(2)));
  EXPECT_EQ(registry_.open_operations(), 1u);
}

TEST_F(OperationRegistryTest, ReattachOfAnOperationNeverSeenStartsItWithTheReattachAsItsFirstCall) {
  Operation unseen = NewOperation("", true, At(seconds(5)));
  unseen.span_id[0] = 0x42;
  const ReattachTarget target =
      registry_.Reattach("op-9", {"reattach", At(seconds(5)), {}}, std::move(unseen));
  ASSERT_NE(target.operation, nullptr);
  EXPECT_TRUE(target.first_seen);
  EXPECT_EQ(target.ended, std::nullopt);
  const Operation& operation = *target.operation;
  EXPECT_EQ(operation.operation_id, "op-9");
  EXPECT_EQ(operation.span_id[0], 0x42);
  EXPECT_EQ(operation.open_calls, 1);
  EXPECT_EQ(operation.reattaches, 1u);
  EXPECT_TRUE(HasEvent(operation, "reattach"));
  EXPECT_EQ(registry_.SpanOf("op-9")->span_id[0], 0x42);

  // A second reattach of the same id, as from another connection, joins it.
  const ReattachTarget second =
      registry_.Reattach("op-9", {"reattach", At(seconds(6)), {}}, NewOperation("", true, At(seconds(6))));
  EXPECT_EQ(second.operation, target.operation);
  EXPECT_FALSE(second.first_seen);
  EXPECT_EQ(target.operation->open_calls, 2);

  // It ends like any reattachable operation: its streams are cut, then release_all.
  registry_.CallEnded(target.operation, StreamEnd(At(seconds(7))));
  registry_.CallEnded(second.operation, StreamEnd(At(seconds(8))));
  EXPECT_EQ(sink_.count(), 0u);
  const ReattachTarget third =
      registry_.Reattach("op-9", {"release", At(seconds(9)), {}}, NewOperation("", true, At(seconds(9))));
  registry_.CallEnded(third.operation, ReleaseAllEnd(At(seconds(10))));
  ASSERT_EQ(sink_.count(), 1u);
  const Operation ended = sink_.ended()[0];
  EXPECT_EQ(ended.started_at, At(seconds(5)));
  EXPECT_EQ(ended.end_time(), At(seconds(10)));
  EXPECT_EQ(ended.ending->outcome, OperationOutcome::kReleased);
  EXPECT_EQ(registry_.open_operations(), 0u);
}

TEST_F(OperationRegistryTest, ReattachOfAnOperationThatEndedHereNamesItsSpanAndStartsNothing) {
  auto [operation, created] = registry_.Start(NewOperation("op-1", true, At(seconds(0))));
  ASSERT_TRUE(created);
  registry_.CallEnded(operation, StreamEnd(At(seconds(1)), kInternal, "[DIVIDE_BY_ZERO]"));
  ASSERT_EQ(sink_.count(), 1u);
  const ReattachTarget target =
      registry_.Reattach("op-1", {"reattach", At(seconds(2)), {}}, NewOperation("", true, At(seconds(2))));
  EXPECT_EQ(target.operation, nullptr);
  EXPECT_FALSE(target.first_seen);
  ASSERT_TRUE(target.ended.has_value());
  EXPECT_EQ(target.ended->span_id, operation->span_id);
  EXPECT_EQ(registry_.open_operations(), 0u);
  EXPECT_EQ(sink_.count(), 1u);
}

TEST(OperationRegistryLimits, AnOperationFirstSeenOnReattachCountsAgainstMaxOperations) {
  RecordingOperationSink sink;
  OperationRegistryOptions options = TestOptions();
  options.max_operations = 1;
  OperationRegistry registry(sink, options);
  auto [idle, created] = registry.Start(NewOperation("idle", true, At(seconds(0))));
  registry.CallEnded(idle, StreamEnd(At(seconds(1))));
  const ReattachTarget target =
      registry.Reattach("unseen", {"reattach", At(seconds(2)), {}}, NewOperation("", true, At(seconds(2))));
  EXPECT_TRUE(target.first_seen);
  ASSERT_EQ(sink.count(), 1u);
  EXPECT_EQ(sink.ended()[0].operation_id, "idle");
  EXPECT_EQ(sink.ended()[0].ending->outcome, OperationOutcome::kAbandoned);
  EXPECT_EQ(registry.open_operations(), 1u);
}

TEST(OperationOutcomeName, NamesEveryOutcome) {
  EXPECT_EQ(OperationOutcomeName(OperationOutcome::kCompleted), "completed");
  EXPECT_EQ(OperationOutcomeName(OperationOutcome::kFailed), "failed");
  EXPECT_EQ(OperationOutcomeName(OperationOutcome::kInterrupted), "interrupted");
  EXPECT_EQ(OperationOutcomeName(OperationOutcome::kReleased), "released");
  EXPECT_EQ(OperationOutcomeName(OperationOutcome::kAbandoned), "abandoned");
  EXPECT_EQ(OperationOutcomeName(OperationOutcome::kUnfinished), "unfinished");
}

}  // namespace
}  // namespace sparktrace::tracing::connect
