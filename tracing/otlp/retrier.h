#pragma once
// Runs an OTLP export attempt until it succeeds, fails for good, or runs out of time, waiting
// between attempts as OtlpRetryOptions and the server's own advice (gRPC RetryInfo, HTTP
// Retry-After) say. Shared by both OTLP exporters, which own one each.
//
// Run() is called from the exporter thread; Cancel() and retries() from any thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>

#include "common/result.h"
#include "tracing/otlp/retry_policy.h"

namespace sparktrace::tracing::otlp {

struct OtlpAttemptOutcome {
  enum class Verdict { kDone, kRetry, kFail };
  Verdict verdict = Verdict::kDone;
  Error error;  // why, for kRetry and kFail
  // The server's own "retry after this long"; replaces the computed backoff for this wait.
  std::optional<std::chrono::nanoseconds> server_delay;

  static OtlpAttemptOutcome Done() { return {}; }
  static OtlpAttemptOutcome Retry(Error error,
                                  std::optional<std::chrono::nanoseconds> server_delay = std::nullopt) {
    return {Verdict::kRetry, std::move(error), server_delay};
  }
  static OtlpAttemptOutcome Fail(Error error) { return {Verdict::kFail, std::move(error), std::nullopt}; }
};

class OtlpRetrier {
 public:
  using Clock = std::chrono::steady_clock;
  // One attempt, which must end by `attempt_deadline`.
  using Attempt = std::function<OtlpAttemptOutcome(Clock::time_point attempt_deadline)>;

  // `attempt_timeout` bounds each attempt; `seed` drives the jitter.
  OtlpRetrier(OtlpRetryOptions options, std::chrono::milliseconds attempt_timeout, std::uint64_t seed);

  // Ends no later than min(deadline, start + options.max_elapsed), plus one attempt's overrun.
  Result<void> Run(Clock::time_point deadline, const Attempt& attempt);

  void Cancel();
  bool cancelled() const;
  std::uint64_t retries() const { return retries_.load(std::memory_order_relaxed); }

 private:
  // Waits `delay` unless cancelled first; false when cancelled.
  bool WaitFor(std::chrono::nanoseconds delay);

  const OtlpRetryOptions options_;
  const std::chrono::milliseconds attempt_timeout_;
  std::mt19937_64 random_;  // exporter thread only
  std::atomic<std::uint64_t> retries_{0};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool cancelled_ = false;  // guarded by mutex_
};

}  // namespace sparktrace::tracing::otlp
