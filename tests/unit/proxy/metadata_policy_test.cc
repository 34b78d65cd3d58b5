#include "proxy/metadata_policy.h"

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

TEST(MetadataPolicy, SecretHeaderNames) {
  for (const char* key : {"authorization", "Authentication", "cookie", "proxy-authorization", "x-auth-token",
                          "db-password", "x-api-key", "client-secret", "aws-session-key", "x-apikey"}) {
    EXPECT_TRUE(IsSecretHeader(key)) << key;
  }
  for (const char* key : {"x-airflow-task-id", "traceparent", "user-agent", "x-session-id"}) {
    EXPECT_FALSE(IsSecretHeader(key)) << key;
  }
}

TEST(MetadataPolicy, LogDescriptionNeverContainsSecretValues) {
  ClientMetadata metadata;
  const std::string secret = "Bearer s3cr3t-value";
  const std::string token = "tok-123";
  const std::string binary = "AAEC";  // base64 of 00 01 02, as a `-bin` value comes on the wire
  metadata.emplace("authorization", secret);
  metadata.emplace("x-refresh-token", token);
  metadata.emplace("x-dag", "etl_daily");
  metadata.emplace("trace-bin", binary);
  const std::string text = DescribeHeadersForLog(metadata);
  EXPECT_EQ(text.find("s3cr3t"), std::string::npos) << text;
  EXPECT_EQ(text.find(token), std::string::npos) << text;
  EXPECT_NE(text.find("authorization=<redacted>"), std::string::npos) << text;
  EXPECT_NE(text.find("x-refresh-token=<redacted>"), std::string::npos) << text;
  EXPECT_NE(text.find("x-dag=etl_daily"), std::string::npos) << text;
  EXPECT_NE(text.find("trace-bin=<4 base64 chars>"), std::string::npos) << text;
  EXPECT_EQ(text.find(binary), std::string::npos) << text;
}

}  // namespace
}  // namespace sparktrace::proxy
