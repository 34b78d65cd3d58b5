#pragma once
// When to retry an OTLP export and how long to wait: the retryable gRPC codes and HTTP statuses
// of the OTLP specification ("Failures" under OTLP/gRPC and OTLP/HTTP), exponential backoff with
// jitter, and the HTTP Retry-After header. Pure functions; any thread.

#include <chrono>
#include <optional>
#include <string_view>

namespace sparktrace::tracing::otlp {

struct OtlpRetryOptions {
  // Backoff before retry n (0-based) is min(initial * multiplier^n, max), then spread by
  // +/- jitter so that many proxies that lost the same collector do not retry in step.
  // The defaults are those of the OpenTelemetry Java exporter.
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{5000};
  double backoff_multiplier = 1.5;
  double jitter = 0.2;
  // Bound on one Export() call, first attempt to last, whatever its own deadline says.
  std::chrono::milliseconds max_elapsed{30000};
};

// The wait before retry `retry_index` (0 for the first retry); `unit_random` is uniform in [0, 1).
std::chrono::nanoseconds BackoffDelay(const OtlpRetryOptions& options, int retry_index, double unit_random);

// OTLP/gRPC: CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE and DATA_LOSS are
// retryable; RESOURCE_EXHAUSTED only when the server sent RetryInfo (it then says it will recover).
// `code` is the numeric grpc::StatusCode.
bool IsRetryableGrpcCode(int code, bool has_retry_info);

// OTLP/HTTP: 429, 502, 503 and 504 are retryable; every other non-2xx status is final.
bool IsRetryableHttpStatus(int status);

// A Retry-After header value (RFC 9110 10.2.3): delay-seconds or an IMF-fixdate, relative to
// `now`. A date in the past is a zero wait; an unreadable value is std::nullopt.
std::optional<std::chrono::nanoseconds> ParseRetryAfter(std::string_view value,
                                                        std::chrono::system_clock::time_point now);

}  // namespace sparktrace::tracing::otlp
