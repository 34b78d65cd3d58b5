// The RPC-convention pieces of the SERVER spans: addresses from gRPC's peer string and the
// :authority, which codes are server errors, and cutting status messages without splitting UTF-8.
#include "tracing/connect/rpc_attributes.h"

#include <string>

#include <gtest/gtest.h>

namespace sparktrace::tracing::connect {
namespace {

TEST(RpcAttributes, GrpcPeerIpv4) {
  auto peer = ParseGrpcPeer("ipv4:10.0.0.7:53122");
  ASSERT_TRUE(peer.has_value());
  EXPECT_EQ(peer->address, "10.0.0.7");
  EXPECT_EQ(peer->port, 53122);
}

TEST(RpcAttributes, GrpcPeerIpv6LosesItsBrackets) {
  auto peer = ParseGrpcPeer("ipv6:[::1]:53122");
  ASSERT_TRUE(peer.has_value());
  EXPECT_EQ(peer->address, "::1");
  EXPECT_EQ(peer->port, 53122);
  auto full = ParseGrpcPeer("ipv6:[2001:db8::7]:1");
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->address, "2001:db8::7");
  EXPECT_EQ(full->port, 1);
}

TEST(RpcAttributes, GrpcPeerUnixSocketHasNoPort) {
  auto peer = ParseGrpcPeer("unix:/run/sparktrace.sock");
  ASSERT_TRUE(peer.has_value());
  EXPECT_EQ(peer->address, "/run/sparktrace.sock");
  EXPECT_FALSE(peer->port.has_value());
}

TEST(RpcAttributes, GrpcPeerOfAnotherKindIsNotAnAddress) {
  EXPECT_FALSE(ParseGrpcPeer("").has_value());
  EXPECT_FALSE(ParseGrpcPeer("10.0.0.7:53122").has_value()) << "gRPC always names the scheme";
  EXPECT_FALSE(ParseGrpcPeer("unix-abstract:sock").has_value());
  EXPECT_FALSE(ParseGrpcPeer("vsock:3:1234").has_value());
}

TEST(RpcAttributes, GrpcPeerWithABadPortKeepsTheAddress) {
  for (const char* peer : {"ipv4:10.0.0.7:99999", "ipv4:10.0.0.7:-1", "ipv4:10.0.0.7:", "ipv4:10.0.0.7:12ab",
                           "ipv6:[::1]:70000"}) {
    auto parsed = ParseGrpcPeer(peer);
    ASSERT_TRUE(parsed.has_value()) << peer;
    EXPECT_FALSE(parsed->port.has_value()) << peer;
  }
  EXPECT_EQ(ParseGrpcPeer("ipv4:10.0.0.7:99999")->address, "10.0.0.7");
  EXPECT_EQ(ParseGrpcPeer("ipv6:[::1]")->address, "::1");
}

TEST(RpcAttributes, AuthorityForms) {
  auto named = ParseAuthority("proxy:15002");
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->address, "proxy");
  EXPECT_EQ(named->port, 15002);

  auto v6 = ParseAuthority("[::1]:15002");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->address, "::1");
  EXPECT_EQ(v6->port, 15002);

  auto no_port = ParseAuthority("spark-connect.example.com");
  ASSERT_TRUE(no_port.has_value());
  EXPECT_EQ(no_port->address, "spark-connect.example.com");
  EXPECT_FALSE(no_port->port.has_value());

  auto bare_v6 = ParseAuthority("fe80::1");
  ASSERT_TRUE(bare_v6.has_value());
  EXPECT_EQ(bare_v6->address, "fe80::1") << "many colons without brackets: an address, no port";
  EXPECT_FALSE(bare_v6->port.has_value());

  auto bracketed_no_port = ParseAuthority("[::1]");
  ASSERT_TRUE(bracketed_no_port.has_value());
  EXPECT_EQ(bracketed_no_port->address, "::1");
  EXPECT_FALSE(bracketed_no_port->port.has_value());

  EXPECT_FALSE(ParseAuthority("").has_value());
  EXPECT_FALSE(ParseAuthority("proxy:port")->port.has_value());
  EXPECT_EQ(ParseAuthority("proxy:0")->port, 0);
  EXPECT_EQ(ParseAuthority("proxy:65535")->port, 65535);
  EXPECT_FALSE(ParseAuthority("proxy:65536")->port.has_value());
}

TEST(RpcAttributes, ServerErrorsAreTheSixServerSideCodes) {
  // OpenTelemetry RPC conventions, gRPC servers: UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED,
  // INTERNAL, UNAVAILABLE, DATA_LOSS.
  for (int code = 0; code <= 16; ++code) {
    const bool expected = code == 2 || code == 4 || code == 12 || code == 13 || code == 14 || code == 15;
    EXPECT_EQ(IsServerError(code), expected) << "code " << code;
  }
  EXPECT_FALSE(IsServerError(-1));
  EXPECT_FALSE(IsServerError(17));
}

TEST(RpcAttributes, TruncateKeepsShortTextWhole) {
  EXPECT_EQ(TruncateUtf8(""), "");
  EXPECT_EQ(TruncateUtf8("boom"), "boom");
  EXPECT_EQ(TruncateUtf8(std::string(256, 'x')), std::string(256, 'x'));
}

TEST(RpcAttributes, TruncateCutsAt256BytesByDefault) {
  EXPECT_EQ(TruncateUtf8(std::string(300, 'x')), std::string(256, 'x'));
  EXPECT_EQ(TruncateUtf8("abcdef", 3), "abc");
  EXPECT_EQ(TruncateUtf8("abcdef", 0), "");
}

TEST(RpcAttributes, TruncateNeverSplitsACharacter) {
  const std::string two = "\xC3\xA9";           // é
  const std::string three = "\xE2\x82\xAC";     // €
  const std::string four = "\xF0\x9F\x94\xA5";  // 🔥
  EXPECT_EQ(TruncateUtf8(std::string(255, 'a') + two), std::string(255, 'a'));
  EXPECT_EQ(TruncateUtf8(std::string(254, 'a') + three), std::string(254, 'a'));
  EXPECT_EQ(TruncateUtf8(std::string(255, 'a') + three), std::string(255, 'a'));
  EXPECT_EQ(TruncateUtf8(std::string(253, 'a') + four), std::string(253, 'a'));
  EXPECT_EQ(TruncateUtf8(std::string(254, 'a') + two + "b"), std::string(254, 'a') + two)
      << "a character that ends exactly at the limit stays";
  EXPECT_EQ(TruncateUtf8(four + four, 5), four);
  EXPECT_EQ(TruncateUtf8(four, 3), "");
}

}  // namespace
}  // namespace sparktrace::tracing::connect
