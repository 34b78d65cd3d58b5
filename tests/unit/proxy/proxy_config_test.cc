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
  const RelayBounds& bounds = config->bounds;
  EXPECT_EQ(bounds.buffer_budget, 256ULL << 20);
  EXPECT_EQ(bounds.connection_buffer_budget, 64ULL << 20);
  EXPECT_EQ(bounds.initial_stream_window, 64 << 10);
  EXPECT_EQ(bounds.stream_window, 4 << 20);
  EXPECT_EQ(bounds.max_connections, 4096);
  EXPECT_EQ(bounds.max_streams_per_connection, 128U);
  EXPECT_EQ(bounds.max_header_list_bytes, 16U << 10);
  EXPECT_EQ(bounds.max_traced_message_bytes, 16U << 20);
  EXPECT_EQ(bounds.handshake_timeout.count(), 10'000);
  EXPECT_EQ(bounds.idle_timeout.count(), 3'600'000);
}

TEST(ProxyConfig, BoundsAreRead) {
  auto config = Configure({"--upstream", "a:1", "--relay-buffer-budget", "64MiB", "--connection-buffer-budget", "8MiB",
                           "--initial-stream-window", "32KiB",
                           "--stream-window", "1MiB", "--max-connections", "10", "--max-streams-per-connection", "3",
                           "--max-header-list-bytes", "8KiB", "--max-traced-message-bytes", "0",
                           "--handshake-timeout", "500ms", "--idle-timeout", "0"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  const RelayBounds& bounds = config->bounds;
  EXPECT_EQ(bounds.buffer_budget, 64ULL << 20);
  EXPECT_EQ(bounds.connection_buffer_budget, 8ULL << 20);
  EXPECT_EQ(bounds.initial_stream_window, 32 << 10);
  EXPECT_EQ(bounds.stream_window, 1 << 20);
  EXPECT_EQ(bounds.max_connections, 10);
  EXPECT_EQ(bounds.max_streams_per_connection, 3U);
  EXPECT_EQ(bounds.max_header_list_bytes, 8U << 10);
  EXPECT_EQ(bounds.max_traced_message_bytes, 0U);
  EXPECT_EQ(bounds.handshake_timeout.count(), 500);
  EXPECT_EQ(bounds.idle_timeout.count(), 0);
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
      {"--relay-buffer-budget", {"--upstream", "a:1", "--relay-buffer-budget", "100"}},
      {"--connection-buffer-budget", {"--upstream", "a:1", "--connection-buffer-budget", "-5"}},
      {"--initial-stream-window", {"--upstream", "a:1", "--initial-stream-window", "2GiB"}},
      {"--stream-window", {"--upstream", "a:1", "--stream-window", "lots"}},
      {"--stream-window", {"--upstream", "a:1", "--initial-stream-window", "1MiB", "--stream-window", "64KiB"}},
      {"--max-connections", {"--upstream", "a:1", "--max-connections", "0"}},
      {"--max-streams-per-connection", {"--upstream", "a:1", "--max-streams-per-connection", "-1"}},
      {"--max-header-list-bytes", {"--upstream", "a:1", "--max-header-list-bytes", "2MiB"}},
      {"--max-traced-message-bytes", {"--upstream", "a:1", "--max-traced-message-bytes", "x"}},
      {"--handshake-timeout", {"--upstream", "a:1", "--handshake-timeout", "0"}},
      {"--idle-timeout", {"--upstream", "a:1", "--idle-timeout", "soon"}},
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
