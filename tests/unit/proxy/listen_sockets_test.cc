#include "proxy/listen_sockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

// Closes the sockets it is given when it goes out of scope.
class OwnedFds {
 public:
  OwnedFds() = default;
  explicit OwnedFds(std::vector<int> fds) : fds_(std::move(fds)) {}
  OwnedFds(const OwnedFds&) = delete;
  OwnedFds& operator=(const OwnedFds&) = delete;
  ~OwnedFds() { CloseAll(); }

  void CloseAll() {
    for (const int fd : fds_) close(fd);
    fds_.clear();
  }
  void Add(int fd) { fds_.push_back(fd); }
  const std::vector<int>& fds() const { return fds_; }

 private:
  std::vector<int> fds_;
};

int LocalPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return -1;
}

int IntOption(int fd, int level, int name) {
  int value = -1;
  socklen_t length = sizeof value;
  if (getsockopt(fd, level, name, &value, &length) != 0) return -1;
  return value;
}

// --- SplitHostPort -------------------------------------------------------------------------------

struct Split {
  bool ok;
  std::string host;
  int port;
};

Split SplitOf(const std::string& address) {
  Split split{false, "unset", -2};
  split.ok = SplitHostPort(address, &split.host, &split.port);
  return split;
}

TEST(ListenSocketsTest, SplitHostPortValid) {
  Split split = SplitOf("127.0.0.1:80");
  EXPECT_TRUE(split.ok);
  EXPECT_EQ(split.host, "127.0.0.1");
  EXPECT_EQ(split.port, 80);

  split = SplitOf("[::1]:0");
  EXPECT_TRUE(split.ok);
  EXPECT_EQ(split.host, "::1") << "the brackets go";
  EXPECT_EQ(split.port, 0);

  split = SplitOf(":15002");
  EXPECT_TRUE(split.ok);
  EXPECT_EQ(split.host, "") << "no host: every interface";
  EXPECT_EQ(split.port, 15002);

  split = SplitOf("localhost:65535");
  EXPECT_TRUE(split.ok);
  EXPECT_EQ(split.host, "localhost");
  EXPECT_EQ(split.port, 65535);

  split = SplitOf("[::]:443");
  EXPECT_TRUE(split.ok);
  EXPECT_EQ(split.host, "::");
  EXPECT_EQ(split.port, 443);
}

TEST(ListenSocketsTest, SplitHostPortInvalid) {
  for (const char* address : {"host", "", "h:70000", "h:65536", "h:-1", "h:12x", "h:", "h: 80", "h:+80",
                              "h:0x50", "[::1]", "h:99999999999"}) {
    SCOPED_TRACE(address);
    EXPECT_FALSE(SplitOf(address).ok);
  }
}

// --- OpenListenSockets ---------------------------------------------------------------------------

TEST(ListenSocketsTest, OpensCountSocketsOnOnePickedPort) {
  auto sockets = OpenListenSockets("127.0.0.1:0", 3);
  ASSERT_TRUE(sockets.ok()) << sockets.error().ToString();
  OwnedFds owned(sockets->fds);
  ASSERT_EQ(sockets->fds.size(), 3U);
  EXPECT_EQ(std::set<int>(sockets->fds.begin(), sockets->fds.end()).size(), 3U);

  const int port = LocalPort(sockets->fds[0]);
  EXPECT_GT(port, 0);
  for (const int fd : sockets->fds) {
    SCOPED_TRACE(testing::Message() << "fd " << fd);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(LocalPort(fd), port);
    EXPECT_EQ(IntOption(fd, SOL_SOCKET, SO_ACCEPTCONN), 1) << "listening";
    EXPECT_EQ(IntOption(fd, SOL_SOCKET, SO_REUSEPORT), 1) << "sharing the port with the other workers";
  }
  EXPECT_EQ(sockets->address, "127.0.0.1:" + std::to_string(port));

  // The address really accepts connections.
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);
  OwnedFds client_owned({client});
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<std::uint16_t>(port));
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&target), sizeof target), 0);
}

TEST(ListenSocketsTest, SecondOpenOnTheSameAddressFails) {
  // The first proxy's sockets use SO_REUSEPORT, yet a second proxy must not share their port.
  auto first = OpenListenSockets("127.0.0.1:0", 2);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  OwnedFds owned(first->fds);
  const std::string address = first->address;

  auto second = OpenListenSockets(address, 2);
  if (second.ok()) {
    OwnedFds leaked(second->fds);
    FAIL() << "a second set of sockets shares " << address;
  }
  EXPECT_EQ(second.error().code, ErrorCode::kIo);
  EXPECT_NE(second.error().message.find(address), std::string::npos) << second.error().message;

  // Once the first proxy has closed its sockets, the address is free again.
  owned.CloseAll();
  auto third = OpenListenSockets(address, 1);
  ASSERT_TRUE(third.ok()) << third.error().ToString();
  OwnedFds third_owned(third->fds);
  EXPECT_EQ(third->address, address);
}

TEST(ListenSocketsTest, AddressHeldByAPlainSocketFails) {
  // Someone else's listening socket without SO_REUSEPORT.
  const int other = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(other, 0);
  OwnedFds other_owned({other});
  sockaddr_in any_port{};
  any_port.sin_family = AF_INET;
  any_port.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(other, reinterpret_cast<sockaddr*>(&any_port), sizeof any_port), 0);
  ASSERT_EQ(listen(other, 1), 0);
  const std::string address = "127.0.0.1:" + std::to_string(LocalPort(other));

  auto sockets = OpenListenSockets(address, 1);
  if (sockets.ok()) {
    OwnedFds leaked(sockets->fds);
    FAIL() << "opened " << address << " while another socket listens on it";
  }
  EXPECT_NE(sockets.error().message.find(address), std::string::npos) << sockets.error().message;
}

TEST(ListenSocketsTest, Ipv6LoopbackKeepsBrackets) {
  const int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) GTEST_SKIP() << "no IPv6 here";
  sockaddr_in6 loopback{};
  loopback.sin6_family = AF_INET6;
  loopback.sin6_addr = in6addr_loopback;
  const bool has_loopback = bind(probe, reinterpret_cast<sockaddr*>(&loopback), sizeof loopback) == 0;
  close(probe);
  if (!has_loopback) GTEST_SKIP() << "no IPv6 loopback here";

  auto sockets = OpenListenSockets("[::1]:0", 2);
  ASSERT_TRUE(sockets.ok()) << sockets.error().ToString();
  OwnedFds owned(sockets->fds);
  ASSERT_EQ(sockets->fds.size(), 2U);
  const int port = LocalPort(sockets->fds[0]);
  EXPECT_GT(port, 0);
  EXPECT_EQ(LocalPort(sockets->fds[1]), port);
  EXPECT_EQ(sockets->address, "[::1]:" + std::to_string(port));
}

TEST(ListenSocketsTest, MalformedAddressIsAnInvalidArgument) {
  for (const char* address : {"no-port", "127.0.0.1:70000", "127.0.0.1:x"}) {
    SCOPED_TRACE(address);
    auto sockets = OpenListenSockets(address, 1);
    if (sockets.ok()) {
      OwnedFds leaked(sockets->fds);
      ADD_FAILURE() << "opened " << address;
      continue;
    }
    EXPECT_EQ(sockets.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(sockets.error().message.find(address), std::string::npos) << sockets.error().message;
  }
}

}  // namespace
}  // namespace sparktrace::proxy
