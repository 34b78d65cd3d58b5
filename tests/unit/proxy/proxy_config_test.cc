#include "proxy/proxy_config.h"

#include <cstdio>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

Result<ProxyConfig> Configure(std::vector<std::string> args) {
  auto flags = ParseFlags(ProxyFlagSpecs(), args, [](const std::string&) { return std::nullopt; });
  if (!flags.ok()) return flags.error();
  return ProxyConfigFromFlags(*flags);
}

std::string MessageOf(const Result<ProxyConfig>& result) { return result.ok() ? "" : result.error().message; }

TEST(ProxyConfig, DefaultsMatchTheDocumentedOnes) {
  auto config = Configure({"--upstream", "spark:15002"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  EXPECT_EQ(config->listen, "0.0.0.0:15002");
  EXPECT_EQ(config->admin, "127.0.0.1:9464");
  EXPECT_EQ(config->max_message_bytes, 256ULL << 20);
  EXPECT_EQ(config->drain_timeout.count(), 150'000);
  EXPECT_FALSE(config->upstream.tls);
  EXPECT_FALSE(config->tls.has_value());
  EXPECT_EQ(config->log_format, LogFormat::kText);
}

TEST(ProxyConfig, EveryBadValueNamesItsFlag) {
  const std::map<std::string, std::vector<std::string>> cases = {
      {"--upstream", {"--upstream", "no-port"}},
      {"--listen", {"--upstream", "a:1", "--listen", "host:99999"}},
      {"--admin", {"--upstream", "a:1", "--admin", ":"}},
      {"--max-message-bytes", {"--upstream", "a:1", "--max-message-bytes", "lots"}},
      {"--drain-timeout", {"--upstream", "a:1", "--drain-timeout", "5"}},
      {"--log-level", {"--upstream", "a:1", "--log-level", "loud"}},
      {"--log-format", {"--upstream", "a:1", "--log-format", "xml"}},
      {"--upstream-ca", {"--upstream", "a:1", "--upstream-ca", "/nonexistent/ca.pem"}},
      {"--tls-key", {"--upstream", "a:1", "--tls-cert", "/nonexistent/cert.pem"}},
  };
  for (const auto& [flag, args] : cases) {
    auto config = Configure(args);
    ASSERT_FALSE(config.ok()) << flag;
    EXPECT_NE(config.error().message.find(flag), std::string::npos) << config.error().message;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(ProxyConfig, MessageSizeIsBoundedByGrpcsIntLimit) {
  EXPECT_FALSE(Configure({"--upstream", "a:1", "--max-message-bytes", "2GiB"}).ok());
  EXPECT_FALSE(Configure({"--upstream", "a:1", "--max-message-bytes", "100"}).ok());
  auto config = Configure({"--upstream", "a:1", "--max-message-bytes", "128MiB"});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->max_message_bytes, 128ULL << 20);
}

TEST(ProxyConfig, UpstreamCaImpliesTlsAndIsRead) {
  const std::string path = testing::TempDir() + "/ca.pem";
  std::ofstream(path) << "-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n";
  auto config = Configure({"--upstream", "a:1", "--upstream-ca", path});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  EXPECT_TRUE(config->upstream.tls);
  EXPECT_NE(config->upstream.ca_pem.find("not really"), std::string::npos);
  std::remove(path.c_str());
}

TEST(ValidateHostPort, AcceptsIpv6AndRejectsJunk) {
  EXPECT_TRUE(ValidateHostPort("[::1]:15002").ok());
  EXPECT_TRUE(ValidateHostPort("spark-connect.ns.svc:15002").ok());
  EXPECT_TRUE(ValidateHostPort("127.0.0.1:0").ok());
  EXPECT_FALSE(ValidateHostPort("[::1:15002").ok());
  EXPECT_FALSE(ValidateHostPort("host:").ok());
  EXPECT_FALSE(ValidateHostPort("host:12ab").ok());
  EXPECT_FALSE(ValidateHostPort("").ok());
}

}  // namespace
}  // namespace sparktrace::proxy
