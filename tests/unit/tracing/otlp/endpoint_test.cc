#include "tracing/otlp/endpoint.h"

#include <gtest/gtest.h>

namespace sparktrace::tracing::otlp {
namespace {

TEST(OtlpEndpoint, GrpcHostPort) {
  auto plain = ParseOtlpGrpcEndpoint("collector.observability:4317");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->host, "collector.observability");
  EXPECT_EQ(plain->port, 4317);
  auto v6 = ParseOtlpGrpcEndpoint("[::1]:4317");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  for (const char* bad : {"collector", ":4317", "host:", "host:70000", "host:0", "host:43a7", "::1:4317",
                          "http://host:4317", "[::1]4317"}) {
    EXPECT_FALSE(ParseOtlpGrpcEndpoint(bad).ok()) << bad;
  }
}

TEST(OtlpEndpoint, HttpDefaultsToV1Traces) {
  auto host_port = ParseOtlpHttpEndpoint("127.0.0.1:4318");
  ASSERT_TRUE(host_port.ok());
  EXPECT_EQ(host_port->path, "/v1/traces");
  auto url = ParseOtlpHttpEndpoint("http://tempo:4318");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "tempo");
  EXPECT_EQ(url->path, "/v1/traces");
  auto custom = ParseOtlpHttpEndpoint("http://[::1]:8080/otlp/v1/traces");
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(custom->host, "::1");
  EXPECT_EQ(custom->port, 8080);
  EXPECT_EQ(custom->path, "/otlp/v1/traces");
}

TEST(OtlpEndpoint, HttpRefusesHttpsAndOtherSchemes) {
  auto https = ParseOtlpHttpEndpoint("https://tempo:4318");
  ASSERT_FALSE(https.ok());
  EXPECT_NE(https.error().message.find("https is not supported"), std::string::npos);
  EXPECT_FALSE(ParseOtlpHttpEndpoint("grpc://tempo:4318").ok());
  EXPECT_FALSE(ParseOtlpHttpEndpoint("http://tempo/v1/traces").ok());
  EXPECT_FALSE(ParseOtlpHttpEndpoint("http://tempo:4318/a b").ok());
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
