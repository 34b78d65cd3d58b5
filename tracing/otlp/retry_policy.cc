#include "tracing/otlp/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>

#include "common/text_trim.h"

namespace sparktrace::tracing::otlp {
namespace {

// grpc::StatusCode values (include/grpcpp/support/status_code_enum.h), spelled out here so this
// header stays free of gRPC.
constexpr int kGrpcCancelled = 1;
constexpr int kGrpcDeadlineExceeded = 4;
constexpr int kGrpcResourceExhausted = 8;
constexpr int kGrpcAborted = 10;
constexpr int kGrpcOutOfRange = 11;
constexpr int kGrpcUnavailable = 14;
constexpr int kGrpcDataLoss = 15;

// Retry-After in seconds above this is read as "not within any export deadline" anyway.
constexpr long long kMaxRetryAfterSeconds = 86400;

}  // namespace

std::chrono::nanoseconds BackoffDelay(const OtlpRetryOptions& options, int retry_index, double unit_random) {
  const double initial = std::chrono::duration<double>(options.initial_backoff).count();
  const double max = std::chrono::duration<double>(options.max_backoff).count();
  double base = initial * std::pow(std::max(options.backoff_multiplier, 1.0), std::max(retry_index, 0));
  base = std::min(base, max);
  const double jitter = std::clamp(options.jitter, 0.0, 1.0);
  const double spread = base * (1.0 - jitter + 2.0 * jitter * std::clamp(unit_random, 0.0, 1.0));
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(spread));
}

bool IsRetryableGrpcCode(int code, bool has_retry_info) {
  switch (code) {
    case kGrpcCancelled:
    case kGrpcDeadlineExceeded:
    case kGrpcAborted:
    case kGrpcOutOfRange:
    case kGrpcUnavailable:
    case kGrpcDataLoss:
      return true;
    case kGrpcResourceExhausted:
      return has_retry_info;
    default:
      return false;
  }
}

bool IsRetryableHttpStatus(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

std::optional<std::chrono::nanoseconds> ParseRetryAfter(std::string_view value,
                                                        std::chrono::system_clock::time_point now) {
  value = TrimBlanks(value);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    long long seconds = 0;
    for (char c : value) {
      seconds = std::min(seconds * 10 + (c - '0'), kMaxRetryAfterSeconds);
    }
    return std::chrono::seconds(seconds);
  }
  // IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT"; the obsolete formats are not accepted.
  std::tm parts{};
  const std::string text(value);
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  if (end == nullptr || *end != '\0') return std::nullopt;
  const std::time_t at = timegm(&parts);
  if (at == static_cast<std::time_t>(-1)) return std::nullopt;
  const auto wait = std::chrono::system_clock::from_time_t(at) - now;
  if (wait <= std::chrono::nanoseconds(0)) return std::chrono::nanoseconds(0);
  return std::min<std::chrono::nanoseconds>(std::chrono::duration_cast<std::chrono::nanoseconds>(wait),
                                            std::chrono::seconds(kMaxRetryAfterSeconds));
}

}  // namespace sparktrace::tracing::otlp
