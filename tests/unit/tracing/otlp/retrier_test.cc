#include "tracing/otlp/retrier.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

namespace sparktrace::tracing::otlp {
namespace {

using Clock = OtlpRetrier::Clock;
using std::chrono::milliseconds;

OtlpRetryOptions FastRetries() {
  OtlpRetryOptions options;
  options.initial_backoff = milliseconds(1);
  options.max_backoff = milliseconds(4);
  options.max_elapsed = milliseconds(10'000);
  return options;
}

Error Unavailable() { return Error{ErrorCode::kUnavailable, "down"}; }

TEST(OtlpRetrier, RetriesUntilDone) {
  OtlpRetrier retrier(FastRetries(), milliseconds(500), 1);
  int attempts = 0;
  auto result = retrier.Run(Clock::now() + std::chrono::seconds(10), [&](Clock::time_point) {
    return ++attempts < 3 ? OtlpAttemptOutcome::Retry(Unavailable()) : OtlpAttemptOutcome::Done();
  });
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(retrier.retries(), 2u);
}

TEST(OtlpRetrier, FinalFailureStopsAtOnce) {
  OtlpRetrier retrier(FastRetries(), milliseconds(500), 1);
  int attempts = 0;
  auto result = retrier.Run(Clock::now() + std::chrono::seconds(10), [&](Clock::time_point) {
    ++attempts;
    return OtlpAttemptOutcome::Fail(Error{ErrorCode::kInvalidArgument, "bad data"});
  });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(result.error().message, "bad data");
  EXPECT_EQ(attempts, 1);
}

TEST(OtlpRetrier, AttemptDeadlineIsTheTimeoutCappedByTheCallDeadline) {
  OtlpRetrier retrier(FastRetries(), milliseconds(200), 1);
  std::vector<Clock::time_point> deadlines;
  const auto start = Clock::now();
  auto result = retrier.Run(start + std::chrono::seconds(10), [&](Clock::time_point attempt_deadline) {
    deadlines.push_back(attempt_deadline);
    return OtlpAttemptOutcome::Done();
  });
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(deadlines.size(), 1u);
  EXPECT_LE(deadlines[0] - start, milliseconds(250));
  EXPECT_GE(deadlines[0] - start, milliseconds(200));

  deadlines.clear();
  const auto short_deadline = Clock::now() + milliseconds(50);
  (void)retrier.Run(short_deadline, [&](Clock::time_point attempt_deadline) {
    deadlines.push_back(attempt_deadline);
    return OtlpAttemptOutcome::Done();
  });
  ASSERT_EQ(deadlines.size(), 1u);
  EXPECT_EQ(deadlines[0], short_deadline);
}

TEST(OtlpRetrier, GivesUpWithoutWaitingWhenTheServerDelayPassesTheDeadline) {
  OtlpRetrier retrier(FastRetries(), milliseconds(500), 1);
  int attempts = 0;
  const auto start = Clock::now();
  auto result = retrier.Run(start + std::chrono::seconds(2), [&](Clock::time_point) {
    ++attempts;
    return OtlpAttemptOutcome::Retry(Unavailable(), std::chrono::seconds(30));
  });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(attempts, 1);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
  EXPECT_NE(result.error().message.find("as the collector asked"), std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("down"), std::string::npos);
}

TEST(OtlpRetrier, MaxElapsedBoundsTheCall) {
  OtlpRetryOptions options = FastRetries();
  options.max_elapsed = milliseconds(100);
  options.initial_backoff = milliseconds(20);
  options.max_backoff = milliseconds(20);
  OtlpRetrier retrier(options, milliseconds(500), 1);
  int attempts = 0;
  const auto start = Clock::now();
  auto result = retrier.Run(start + std::chrono::seconds(30), [&](Clock::time_point) {
    ++attempts;
    return OtlpAttemptOutcome::Retry(Unavailable());
  });
  ASSERT_FALSE(result.ok());
  EXPECT_GE(attempts, 2);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

TEST(OtlpRetrier, CancelFromAnotherThreadEndsABackoffWait) {
  OtlpRetryOptions options = FastRetries();
  options.initial_backoff = std::chrono::seconds(60);
  options.max_backoff = std::chrono::seconds(60);
  options.max_elapsed = std::chrono::seconds(600);
  OtlpRetrier retrier(options, milliseconds(500), 1);
  std::promise<void> attempted;
  std::thread canceller([&, future = attempted.get_future()]() mutable {
    future.wait();
    retrier.Cancel();
  });
  const auto start = Clock::now();
  int attempts = 0;
  auto result = retrier.Run(start + std::chrono::seconds(600), [&](Clock::time_point) {
    if (++attempts == 1) attempted.set_value();
    return OtlpAttemptOutcome::Retry(Unavailable());
  });
  canceller.join();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("shut down"), std::string::npos);
  EXPECT_EQ(attempts, 1);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
  // Later runs do not even try.
  auto later = retrier.Run(Clock::now() + std::chrono::seconds(1), [&](Clock::time_point) {
    ++attempts;
    return OtlpAttemptOutcome::Done();
  });
  EXPECT_FALSE(later.ok());
  EXPECT_EQ(attempts, 1);
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
