#include "tracing/otlp/retry_policy.h"

#include <gtest/gtest.h>

namespace sparktrace::tracing::otlp {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

TEST(OtlpRetryPolicy, BackoffGrowsAndIsCapped) {
  OtlpRetryOptions options;
  options.initial_backoff = milliseconds(100);
  options.max_backoff = milliseconds(1000);
  options.backoff_multiplier = 2.0;
  options.jitter = 0.0;
  EXPECT_EQ(BackoffDelay(options, 0, 0.5), milliseconds(100));
  EXPECT_EQ(BackoffDelay(options, 1, 0.5), milliseconds(200));
  EXPECT_EQ(BackoffDelay(options, 3, 0.5), milliseconds(800));
  EXPECT_EQ(BackoffDelay(options, 4, 0.5), milliseconds(1000));
  EXPECT_EQ(BackoffDelay(options, 60, 0.5), milliseconds(1000));
}

TEST(OtlpRetryPolicy, JitterSpreadsAroundTheBase) {
  OtlpRetryOptions options;
  options.initial_backoff = milliseconds(1000);
  options.jitter = 0.2;
  const auto low = BackoffDelay(options, 0, 0.0);
  const auto high = BackoffDelay(options, 0, 0.999999);
  EXPECT_NEAR(std::chrono::duration<double>(low).count(), 0.8, 1e-6);
  EXPECT_NEAR(std::chrono::duration<double>(high).count(), 1.2, 1e-5);
  EXPECT_NEAR(std::chrono::duration<double>(BackoffDelay(options, 0, 0.5)).count(), 1.0, 1e-6);
}

TEST(OtlpRetryPolicy, GrpcCodesFromTheOtlpSpec) {
  for (int code : {1, 4, 10, 11, 14, 15}) EXPECT_TRUE(IsRetryableGrpcCode(code, false)) << code;
  for (int code : {0, 2, 3, 5, 6, 7, 9, 12, 13, 16}) EXPECT_FALSE(IsRetryableGrpcCode(code, true)) << code;
  EXPECT_FALSE(IsRetryableGrpcCode(8, false));  // RESOURCE_EXHAUSTED without RetryInfo
  EXPECT_TRUE(IsRetryableGrpcCode(8, true));
}

TEST(OtlpRetryPolicy, HttpStatusesFromTheOtlpSpec) {
  for (int status : {429, 502, 503, 504}) EXPECT_TRUE(IsRetryableHttpStatus(status)) << status;
  for (int status : {200, 400, 401, 403, 404, 413, 500, 501})
    EXPECT_FALSE(IsRetryableHttpStatus(status)) << status;
}

TEST(OtlpRetryPolicy, RetryAfterSecondsAndDates) {
  // 1994-11-06 08:49:37 UTC
  const auto now = std::chrono::system_clock::from_time_t(784111777);
  EXPECT_EQ(ParseRetryAfter("5", now), nanoseconds(std::chrono::seconds(5)));
  EXPECT_EQ(ParseRetryAfter(" 0 ", now), nanoseconds(0));
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:47 GMT", now), nanoseconds(std::chrono::seconds(10)));
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:40:00 GMT", now), nanoseconds(0));  // in the past
  EXPECT_EQ(ParseRetryAfter("99999999999999999999", now), nanoseconds(std::chrono::seconds(86400)));
  EXPECT_FALSE(ParseRetryAfter("", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("-1", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("1.5", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("soon", now).has_value());
  EXPECT_FALSE(ParseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now).has_value());
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
