// OperationRegistry against docs/tracing.md, "Operation spans": when each kind of execution ends,
// with which outcome and end time, and that the sink hears of every operation exactly once.
//
// Time is explicit SteadyTime values and Sweep(now) is called by the test; the registry is built
// with a sweep interval of a day so that its own sweeper thread (which sweeps at the real
// steady_clock::now()) never runs during a test.
#include "tracing/connect/operation_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace sparktrace::tracing::connect {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kOk = 0;
constexpr int kCancelled = 1;
constexpr int kUnknown = 2;
constexpr int kInvalidArgument = 3;
constexpr int kDeadlineExceeded = 4;
constexpr int kNotFound = 5;
constexpr int kInternal = 13;
constexpr int kUnavailable = 14;

constexpr char kDisconnected[] =
    "[INVALID_CURSOR.DISCONNECTED] The cursor is invalid. The cursor has been disconnected by the server.";

// A fixed origin far from the steady clock's epoch, so "earlier than the start" is representable.
SteadyTime At(std::chrono::steady_clock::duration offset) {
  return SteadyTime(std::chrono::hours(1000)) + offset;
}

// Keeps a copy of every operation handed over, in order. Guarded because the registry may call it
// from its sweeper thread (which these tests keep idle, but the sink must not rely on that).
class RecordingOperationSink final : public OperationSink {
 public:
  void OnOperationEnded(const Operation& operation) override {
    std::lock_guard lock(mu_);
    ended_.push_back(operation);
  }
  std::vector<Operation> ended() const {
    std::lock_guard lock(mu_);
    return ended_;
  }
  std::size_t count() const {
    std::lock_guard lock(mu_);
    return ended_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<Operation> ended_;
};

OperationRegistryOptions TestOptions() {
  OperationRegistryOptions options;
  options.linger = seconds(30);
  options.sweep_interval = std::chrono::hours(24);
  return options;
}

Operation NewOperation(std::string operation_id, bool reattachable, SteadyTime started_at,
                       std::string session_id = "session-a") {
  Operation operation;
  operation.trace_id[15] = 1;
  operation.span_id[7] = 2;
  operation.sampled = true;
  operation.started_at = started_at;
  operation.reattachable = reattachable;
  operation.session_id = std::move(session_id);
  operation.operation_id = std::move(operation_id);
  return operation;
}

OperationCallEnd StreamEnd(SteadyTime at, int status_code = kOk, std::string message = {}) {
  OperationCallEnd end;
  end.role = OperationCallEnd::Role::kStream;
  end.at = at;
  end.status_code = status_code;
  end.status_message = std::move(message);
  return end;
}

OperationCallEnd ReleaseAllEnd(SteadyTime at, int status_code = kOk) {
  OperationCallEnd end;
  end.role = OperationCallEnd::Role::kReleaseAll;
  end.at = at;
  end.status_code = status_code;
  return end;
}

OperationCallEnd OtherEnd(SteadyTime at) {
  OperationCallEnd end;
  end.role = OperationCallEnd::Role::kOther;
  end.at = at;
  return end;
}

bool HasEvent(const Operation& operation, std::string_view name) {
  return std::any_of(operation.events.begin(), operation.events.end(),
                     [&](const OperationEvent& event) { return event.name == name; });
}

const OperationEvent* FindEvent(const Operation& operation, std::string_view name) {
  for (const OperationEvent& event : operation.events) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

const AttributeValue* FindAttribute(const std::vector<Attribute>& attributes, std::string_view key) {
  for (const Attribute& attribute : attributes) {
    if (attribute.key == key) return &attribute.value;
  }
  return nullptr;
}

class OperationRegistryTest : public testing::Test {
 protected:
  // A reattachable operation whose ExecutePlan stream was cut at `cut_at` (OK, no result_complete):
  // open, idle, waiting for a reattach.
  std::shared_ptr<Operation> StartAndCut(const std::string& id, SteadyTime started_at, SteadyTime cut_at,
                                         const std::string& session_id = "session-a") {
    auto [operation, created] = registry_.Start(NewOperation(id, true, started_at, session_id));
    EXPECT_TRUE(created);
    registry_.CallEnded(operation, StreamEnd(cut_at));
    return operation;
  }

  RecordingOperationSink sink_;
  OperationRegistry registry_{sink_, TestOptions()};
};

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
    const AttributeValue* status = FindAttribute(error->attributes, "rpc.grpc.status_code");
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
      FindAttribute(reattach->attributes, "spark.connect.reattach.last_response_id");
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
  EXPECT_NE(FindAttribute(interrupt->attributes, "spark.connect.interrupt.type"), nullptr);
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
