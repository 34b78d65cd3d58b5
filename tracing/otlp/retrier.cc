#include "tracing/otlp/retrier.h"

#include <algorithm>
#include <string>

namespace sparktrace::tracing::otlp {
namespace {

std::string Millis(std::chrono::nanoseconds duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(duration).count()) + " ms";
}

Error ShutDownError() { return Error{ErrorCode::kUnavailable, "exporter is shut down"}; }

}  // namespace

OtlpRetrier::OtlpRetrier(OtlpRetryOptions options, std::chrono::milliseconds attempt_timeout,
                         std::uint64_t seed)
    : options_(options), attempt_timeout_(attempt_timeout), random_(seed) {}

Result<void> OtlpRetrier::Run(Clock::time_point deadline, const Attempt& attempt) {
  const Clock::time_point budget_end = std::min(deadline, Clock::now() + options_.max_elapsed);
  if (Clock::now() >= budget_end) {
    return Error{ErrorCode::kUnavailable, "export deadline passed before the first attempt"};
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int retry_index = 0;; ++retry_index) {
    if (cancelled()) return ShutDownError();
    // A wait that overslept the budget end gives an attempt already due; it fails fast and the
    // check below ends the loop with its error.
    OtlpAttemptOutcome outcome = attempt(std::min(Clock::now() + attempt_timeout_, budget_end));
    if (outcome.verdict == OtlpAttemptOutcome::Verdict::kDone) return {};
    if (outcome.verdict == OtlpAttemptOutcome::Verdict::kFail) return outcome.error;

    const std::chrono::nanoseconds delay =
        outcome.server_delay ? *outcome.server_delay : BackoffDelay(options_, retry_index, unit(random_));
    const std::string attempts =
        std::to_string(retry_index + 1) + (retry_index == 0 ? " attempt" : " attempts");
    // Waiting only to find the deadline gone would hold the exporter thread for nothing.
    if (Clock::now() + delay >= budget_end) {
      Error error = std::move(outcome.error);
      error.message += " (gave up after " + attempts + ": the next retry, in " + Millis(delay) +
                       (outcome.server_delay ? " as the collector asked" : "") +
                       ", would pass the export deadline)";
      return error;
    }
    if (!WaitFor(delay)) return ShutDownError();
    retries_.fetch_add(1, std::memory_order_relaxed);
  }
}

void OtlpRetrier::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
  }
  wake_.notify_all();
}

bool OtlpRetrier::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

bool OtlpRetrier::WaitFor(std::chrono::nanoseconds delay) {
  std::unique_lock<std::mutex> lock(mutex_);
  return !wake_.wait_for(lock, delay, [this] { return cancelled_; });
}

}  // namespace sparktrace::tracing::otlp
